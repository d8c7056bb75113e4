// load_tokenizer and the file formats: tokenizer.json (a BPE, WordPiece or Unigram model of
// Hugging Face's tokenizers), BERT's vocab.txt, GPT-2's vocab.json + merges.txt, Marian's
// source.spm + target.spm + vocab.json.
#include <sys/stat.h>

#include "attn/error.h"
#include "attn/tokenizer_files.h"
#include "tokenizers/bpe_tokenizer.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/marian_tokenizer.h"
#include "tokenizers/pipeline_json.h"
#include "tokenizers/pipeline_loading.h"
#include "tokenizers/vocabulary_json.h"

namespace attn {

namespace {

bool is_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool pipeline_is_byte_level(const std::vector<PreTokenizerStep>& pre, const std::vector<DecoderStep>& decoder) {
  for (const auto& step : pre)
    if (step.kind == PreTokenizerStep::Kind::ByteLevel) return true;
  for (const auto& step : decoder)
    if (step.kind == DecoderStep::Kind::ByteLevel) return true;
  return false;
}

BpeOptions read_model_options(const JsonField& model, const BpeVocabulary& vocabulary) {
  if (model.has("dropout") && !(model["dropout"].value.is_number() && model["dropout"].value == 0))
    model["dropout"].fail("null (attn tokenizes deterministically, without BPE dropout)");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (model.has(affix) && !model[affix].string().empty()) model[affix].fail("null or \"\" (no affixes)");
  }
  BpeOptions options;
  options.byte_fallback = model.flag("byte_fallback", false);
  options.ignore_merges = model.flag("ignore_merges", false);
  options.fuse_unk = model.flag("fuse_unk", false);
  if (model.has("unk_token")) {
    const JsonField unk = model["unk_token"];
    options.unk_id = vocabulary.find(unk.string());
    if (!options.unk_id) unk.fail("a token of the vocabulary");
  }
  return options;
}

// The model's type; an untagged model is read as tokenizers reads it (a vocab of
// [piece, score] pairs is Unigram's; merges make a BPE; a continuing_subword_prefix alone a
// WordPiece).
std::string model_type(const JsonField& model) {
  if (!model.has("type")) {
    if (model.has("vocab") && model["vocab"].value.is_array()) return "Unigram";
    if (!model.has("merges") && model.has("continuing_subword_prefix")) return "WordPiece";
    return "BPE";
  }
  const JsonField type = model["type"];
  const std::string name = type.string();
  if (name == "BPE" || name == "WordPiece" || name == "Unigram") return name;
  throw InputError(type.file, type.path,
                   "expected \"BPE\", \"WordPiece\" or \"Unigram\", found " + describe_json_found(type.value) +
                       ": attn does not tokenize with " + name + " models");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json, const std::string& tokenizer_config) {
  const Json document = read_json_file(tokenizer_json);
  const JsonField root{document, "", tokenizer_json};
  root.object();
  const JsonField model = root["model"];
  const std::string type = model_type(model);
  if (type != "BPE") return load_pipeline_tokenizer_json(document, tokenizer_json, type, tokenizer_config);
  BpeParts parts;
  parts.vocabulary = read_vocabulary(model["vocab"]);
  parts.added_tokens = read_added_tokens(root["added_tokens"], parts.vocabulary);
  const BpeOptions options = read_model_options(model, parts.vocabulary);
  parts.model = BpeModel(read_merges(model["merges"], parts.vocabulary), options);
  parts.normalizer = read_normalizer(root["normalizer"]);
  parts.pre_tokenizer = read_pre_tokenizer(root["pre_tokenizer"]);
  parts.decoder = read_decoder(root["decoder"]);
  read_post_processor(root["post_processor"], parts.vocabulary, parts.prefix_ids, parts.suffix_ids);
  parts.byte_level = pipeline_is_byte_level(parts.pre_tokenizer, parts.decoder);
  parts.roles[static_cast<std::size_t>(SpecialRole::Unknown)] = options.unk_id;
  if (parts.prefix_ids.size() == 1) parts.roles[static_cast<std::size_t>(SpecialRole::Begin)] = parts.prefix_ids[0];
  if (!tokenizer_config.empty()) read_tokenizer_config(tokenizer_config, parts, false);
  return std::make_unique<BpeTokenizer>(std::move(parts));
}

std::unique_ptr<Tokenizer> load_vocab_merges(const std::string& vocab_json, const std::string& merges_txt,
                                             const std::string& tokenizer_config) {
  BpeParts parts;
  parts.vocabulary = read_vocabulary_file(vocab_json);
  parts.model = BpeModel(read_merges_txt(merges_txt, parts.vocabulary), BpeOptions{});
  PreTokenizerStep byte_level;
  byte_level.kind = PreTokenizerStep::Kind::ByteLevel;
  byte_level.add_prefix_space = false;  // GPT2Tokenizer's default
  byte_level.pattern = std::make_shared<PcreRegex>(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", false, "", "");
  parts.pre_tokenizer = {byte_level};
  DecoderStep decoder;
  decoder.kind = DecoderStep::Kind::ByteLevel;
  parts.decoder = {decoder};
  parts.byte_level = true;
  if (!tokenizer_config.empty()) {
    read_tokenizer_config(tokenizer_config, parts, true);
  } else if (const auto endoftext = parts.vocabulary.find("<|endoftext|>")) {
    // GPT2Tokenizer's defaults: <|endoftext|> begins, ends and stands for the unknown, and
    // is a special token matched in the text.
    parts.added_tokens.push_back({"<|endoftext|>", *endoftext, true, false, false, false, false});
    for (const SpecialRole role : {SpecialRole::Begin, SpecialRole::End, SpecialRole::Unknown})
      parts.roles[static_cast<std::size_t>(role)] = *endoftext;
  }
  return std::make_unique<BpeTokenizer>(std::move(parts));
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& folder, TokenizerSide side) {
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0) throw InputError(folder, "", "expected a model folder, found nothing there");
  if (!S_ISDIR(info.st_mode)) throw InputError(folder, "", "expected a model folder, found a file");
  const std::string config = folder + "/tokenizer_config.json";
  const std::string config_or_none = is_file(config) ? config : "";
  const auto has = [&folder](const char* name) { return is_file(folder + "/" + name); };
  if (has("tokenizer.json")) return load_tokenizer_json(folder + "/tokenizer.json", config_or_none);
  if (has("vocab.txt")) return load_bert_vocab_txt(folder + "/vocab.txt", config_or_none);
  if (has("vocab.json") && has("merges.txt"))
    return load_vocab_merges(folder + "/vocab.json", folder + "/merges.txt", config_or_none);
  if (has("source.spm") || has("target.spm")) return load_marian_tokenizer(folder, side);
  throw InputError(folder, "",
                   "expected tokenizer files (tokenizer.json; vocab.txt; vocab.json and merges.txt; or source.spm, "
                   "target.spm and vocab.json), found " +
                       std::string(has("vocab.json") ? "vocab.json without merges.txt or source.spm" : "none"));
}

}  // namespace attn

#include "tokenizers/pipeline_loading.h"

#include <set>

#include <algorithm>

#include "attn/error.h"
#include "tokenizers/pipeline_json.h"
#include "tokenizers/pipeline_tokenizer.h"
#include "tokenizers/utf8.h"
#include "tokenizers/vocabulary_json.h"

namespace attn {

namespace {

constexpr std::size_t kMaxWordChars = 1u << 20;  // max_input_chars_per_word, at most

[[noreturn]] void refuse(const JsonField& type, const std::string& what, const std::string& known) {
  throw InputError(type.file, type.path,
                   "expected a " + what + " attn knows (" + known + "), found " + describe_json_found(type.value));
}

void add_normalizer(const JsonField& field, std::vector<PipelineNormalizer>& steps) {
  const JsonField type = field["type"];
  const std::string name = type.string();
  static const std::set<std::string> common = {"Prepend", "Replace", "NFC",   "NFD",
                                               "NFKC",    "NFKD",    "Strip", "Lowercase"};
  PipelineNormalizer step;
  if (name == "Sequence") {
    const JsonField list = field["normalizers"];
    for (std::size_t i = 0; i < list.array().size(); ++i) add_normalizer(list.at(i), steps);
    return;
  } else if (name == "BertNormalizer") {
    step.kind = PipelineNormalizer::Kind::Bert;
    step.bert.clean_text = field.flag("clean_text", true);
    step.bert.handle_chinese_chars = field.flag("handle_chinese_chars", true);
    step.bert.lowercase = field.flag("lowercase", true);
    // strip_accents null: strip when lowercasing (BertNormalizer's default).
    step.bert.strip_accents = field.flag("strip_accents", step.bert.lowercase);
  } else if (common.count(name)) {
    step.common = read_normalizer(field).at(0);
  } else if (name == "Precompiled") {
    step.kind = PipelineNormalizer::Kind::Precompiled;
    const JsonField charsmap = field["precompiled_charsmap"];
    step.precompiled = std::make_shared<PrecompiledCharsmap>(charsmap.string(), charsmap.file, charsmap.path);
  } else {
    refuse(type, "normalizer",
           "Sequence, BertNormalizer, Precompiled, Prepend, Replace, NFC, NFD, NFKC, NFKD, Lowercase, Strip");
  }
  steps.push_back(std::move(step));
}

void add_pre_tokenizer(const JsonField& field, std::vector<PipelinePreTokenizer>& steps) {
  const JsonField type = field["type"];
  const std::string name = type.string();
  PipelinePreTokenizer step;
  if (name == "Sequence") {
    const JsonField list = field["pretokenizers"];
    for (std::size_t i = 0; i < list.array().size(); ++i) add_pre_tokenizer(list.at(i), steps);
    return;
  } else if (name == "BertPreTokenizer") {
    step.kind = PipelinePreTokenizer::Kind::Bert;
  } else if (name == "WhitespaceSplit") {
    step.kind = PipelinePreTokenizer::Kind::WhitespaceSplit;
  } else if (name == "ByteLevel" || name == "Split" || name == "Metaspace") {
    step.common = read_pre_tokenizer(field).at(0);
  } else {
    refuse(type, "pre-tokenizer", "Sequence, BertPreTokenizer, WhitespaceSplit, ByteLevel, Split, Metaspace");
  }
  steps.push_back(std::move(step));
}

void read_decoder_into(const JsonField& field, PipelineParts& parts) {
  if (!field.is_null() && field["type"].string() == "WordPiece") {
    WordPieceDecoder decoder;
    if (field.has("prefix")) decoder.prefix = field["prefix"].string();
    decoder.cleanup = field.flag("cleanup", true);
    parts.wordpiece_decoder = decoder;
    return;
  }
  parts.decoder = read_decoder(field);
}

void read_wordpiece_model(const JsonField& model, PipelineParts& parts) {
  parts.kind = "WordPiece";
  parts.vocabulary = read_vocabulary(model["vocab"]);
  WordPieceOptions options;
  for (const std::string& piece : parts.vocabulary.pieces)
    options.longest_piece_bytes = std::max(options.longest_piece_bytes, piece.size());
  const JsonField unk = model["unk_token"];
  const auto unk_id = parts.vocabulary.find(unk.string());
  if (!unk_id) unk.fail("a token of the vocabulary (WordPiece writes it for a word it cannot spell)");
  options.unk_id = *unk_id;
  if (model.has("continuing_subword_prefix"))
    options.continuing_subword_prefix = model["continuing_subword_prefix"].string();
  if (model.has("max_input_chars_per_word"))
    options.max_input_chars_per_word = model["max_input_chars_per_word"].count(kMaxWordChars);
  parts.model = std::make_shared<WordPieceModel>(options);
  parts.roles[static_cast<std::size_t>(SpecialRole::Unknown)] = *unk_id;
}

void read_unigram_model(const JsonField& model, PipelineParts& parts) {
  parts.kind = "Unigram";
  const JsonField vocab = model["vocab"];
  const std::size_t count = vocab.array().size();
  if (count == 0) vocab.fail("a vocabulary of [piece, score] pairs");
  std::vector<UnigramPiece> pieces(count);
  parts.vocabulary.pieces.resize(count);
  for (std::size_t id = 0; id < count; ++id) {
    const JsonField entry = vocab.at(id);
    if (entry.array().size() != 2) entry.fail("a [piece, score] pair");
    pieces[id].piece = entry.at(0).string();
    const JsonField score = entry.at(1);
    if (!score.value.is_number()) score.fail("a number (the piece's log probability)");
    pieces[id].score = score.value.get<double>();
    if (pieces[id].piece.empty()) entry.at(0).fail("a non-empty piece");
    if (!parts.vocabulary.ids.emplace(pieces[id].piece, id).second)
      entry.at(0).fail("each piece once (also at id " + std::to_string(parts.vocabulary.ids[pieces[id].piece]) + ")");
    parts.vocabulary.pieces[id] = pieces[id].piece;
  }
  std::optional<std::size_t> unk_id;
  if (model.has("unk_id")) unk_id = model["unk_id"].count(count - 1);
  parts.model = std::make_shared<UnigramModel>(pieces, unk_id, model.flag("byte_fallback", false));
  parts.roles[static_cast<std::size_t>(SpecialRole::Unknown)] = unk_id;
}

}  // namespace

std::unique_ptr<Tokenizer> load_pipeline_tokenizer_json(const Json& document, const std::string& path,
                                                        const std::string& model_type,
                                                        const std::string& tokenizer_config) {
  const JsonField root{document, "", path};
  const JsonField model = root["model"];
  PipelineParts parts;
  if (model_type == "WordPiece")
    read_wordpiece_model(model, parts);
  else
    read_unigram_model(model, parts);
  parts.added_tokens = read_added_tokens(root["added_tokens"], parts.vocabulary);
  if (!root["normalizer"].is_null()) add_normalizer(root["normalizer"], parts.normalizer);
  if (!root["pre_tokenizer"].is_null()) add_pre_tokenizer(root["pre_tokenizer"], parts.pre_tokenizer);
  read_decoder_into(root["decoder"], parts);
  read_post_processor(root["post_processor"], parts.vocabulary, parts.prefix_ids, parts.suffix_ids);
  if (parts.prefix_ids.size() == 1) parts.roles[static_cast<std::size_t>(SpecialRole::Begin)] = parts.prefix_ids[0];
  if (!tokenizer_config.empty()) read_tokenizer_config(tokenizer_config, parts);
  return std::make_unique<PipelineTokenizer>(std::move(parts));
}

}  // namespace attn

// BERT's older files: vocab.txt (one piece a line, its id the line's number from 0) and
// tokenizer_config.json, made into the tokenizer transformers makes of them for
// AutoTokenizer (convert_slow_tokenizer.py's BertConverter): BertNormalizer with
// do_lower_case, tokenize_chinese_chars and strip_accents, BertPreTokenizer, WordPiece with
// "##" and at most 100 characters a word, "[CLS] $A [SEP]", the WordPiece decoder.
#include <algorithm>

#include "attn/error.h"
#include "tokenizers/pipeline_loading.h"
#include "tokenizers/pipeline_tokenizer.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// The lines as Python's readlines() in text mode gives them (load_vocab): "\n", "\r\n" and
// "\r" end a line; the last line need not end. Each piece must be spelled once.
BpeVocabulary read_vocab_txt(const std::string& path) {
  const std::string text = read_tokenizer_file(path);
  if (const auto bad = first_invalid_utf8(text))
    throw InputError(
        path, "", "expected UTF-8 text, found a byte that starts no UTF-8 character at offset " + std::to_string(*bad));
  BpeVocabulary vocabulary;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find_first_of("\r\n", pos), text.size());
    const std::string piece = text.substr(pos, end - pos);
    pos = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    const std::size_t id = vocabulary.pieces.size();
    const auto [it, added] = vocabulary.ids.emplace(piece, id);
    if (!added) {
      const std::string shown = piece.size() > 60 ? piece.substr(0, 60) + "..." : piece;
      throw InputError(path, "line " + std::to_string(id + 1),
                       "expected each piece once, found \"" + shown + "\" again (first on line " +
                           std::to_string(it->second + 1) + ")");
    }
    vocabulary.pieces.push_back(piece);
  }
  if (vocabulary.pieces.empty()) throw InputError(path, "", "expected one piece a line, found an empty file");
  return vocabulary;
}

struct BertConfig {
  bool lowercase = true;
  bool chinese_chars = true;
  std::optional<bool> strip_accents;  // null: as lowercase
  bool clean_up_tokenization_spaces = true;
  // unk, sep, pad, cls, mask (BertTokenizer's defaults)
  std::string tokens[5] = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
};
constexpr const char* kTokenKeys[5] = {"unk_token", "sep_token", "pad_token", "cls_token", "mask_token"};

BertConfig read_bert_config(const std::string& path) {
  BertConfig config;
  if (path.empty()) return config;
  const Json document = read_json_file(path);
  const JsonField root{document, "", path};
  root.object();
  config.lowercase = root.flag("do_lower_case", true);
  config.chinese_chars = root.flag("tokenize_chinese_chars", true);
  if (root.has("strip_accents")) config.strip_accents = root["strip_accents"].boolean();
  config.clean_up_tokenization_spaces = root.flag("clean_up_tokenization_spaces", true);
  if (!root.flag("do_basic_tokenize", true))
    root["do_basic_tokenize"].fail("true (attn splits words as BertTokenizer's basic tokenizer does)");
  for (int i = 0; i < 5; ++i) {
    if (!root.has(kTokenKeys[i])) continue;
    const JsonField field = root[kTokenKeys[i]];
    config.tokens[i] = field.value.is_object() ? field["content"].string() : field.string();
  }
  return config;
}

}  // namespace

std::unique_ptr<Tokenizer> load_bert_vocab_txt(const std::string& vocab_txt, const std::string& tokenizer_config) {
  const BertConfig config = read_bert_config(tokenizer_config);
  PipelineParts parts;
  parts.kind = "WordPiece";
  parts.vocabulary = read_vocab_txt(vocab_txt);
  std::size_t ids[5];
  for (int i = 0; i < 5; ++i) {
    const auto id = parts.vocabulary.find(config.tokens[i]);
    if (!id) {
      throw InputError(vocab_txt, "",
                       "expected the " + std::string(kTokenKeys[i]) + " \"" + config.tokens[i] +
                           "\" among the pieces, found no such line" +
                           (i == 0 ? " (WordPiece writes it for a word it cannot spell)" : ""));
    }
    ids[i] = *id;
    // The fast tokenizer's special added tokens, matched in the raw text.
    parts.added_tokens.push_back({config.tokens[i], *id, true, false, false, false, false});
  }
  PipelineNormalizer normalizer;
  normalizer.kind = PipelineNormalizer::Kind::Bert;
  normalizer.bert.handle_chinese_chars = config.chinese_chars;
  normalizer.bert.lowercase = config.lowercase;
  normalizer.bert.strip_accents = config.strip_accents.value_or(config.lowercase);
  parts.normalizer = {normalizer};
  PipelinePreTokenizer pre_tokenizer;
  pre_tokenizer.kind = PipelinePreTokenizer::Kind::Bert;
  parts.pre_tokenizer = {pre_tokenizer};
  WordPieceOptions options;
  for (const std::string& piece : parts.vocabulary.pieces)
    options.longest_piece_bytes = std::max(options.longest_piece_bytes, piece.size());
  options.unk_id = ids[0];
  parts.model = std::make_shared<WordPieceModel>(options);
  parts.wordpiece_decoder = WordPieceDecoder{};
  parts.prefix_ids = {ids[3]};
  parts.suffix_ids = {ids[1]};
  parts.clean_up_tokenization_spaces = config.clean_up_tokenization_spaces;
  parts.roles[static_cast<std::size_t>(SpecialRole::Unknown)] = ids[0];
  parts.roles[static_cast<std::size_t>(SpecialRole::Pad)] = ids[2];
  parts.roles[static_cast<std::size_t>(SpecialRole::Begin)] = ids[3];
  return std::make_unique<PipelineTokenizer>(std::move(parts));
}

}  // namespace attn

#include "tokenizers/bpe_tokenizer.h"

#include <cstdio>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/memory_budget.h"
#include "tokenizers/piece_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// The added tokens matched in the raw text, or (`normalized`) those matched in the
// normalized text, their content normalized.
std::vector<AddedToken> added_tokens(const BpeParts& parts, bool normalized) {
  std::vector<AddedToken> tokens;
  for (const AddedToken& token : parts.added_tokens) {
    if (token.normalized != normalized) continue;
    tokens.push_back(token);
    if (normalized) tokens.back().content = normalize(parts.normalizer, token.content);
  }
  return tokens;
}

}  // namespace

BpeTokenizer::BpeTokenizer(BpeParts parts)
    : parts_(std::move(parts)),
      raw_tokens_(added_tokens(parts_, false)),
      normalized_tokens_(added_tokens(parts_, true)),
      special_(parts_.vocabulary.pieces.size()) {
  for (const AddedToken& token : parts_.added_tokens)
    if (token.special) special_.at(token.id) = true;
}

std::string BpeTokenizer::kind() const { return parts_.byte_level ? "byte-level BPE" : "SentencePiece BPE"; }

const std::string& BpeTokenizer::piece(std::size_t id) const {
  if (id >= size()) throw InternalError("BpeTokenizer::piece: id " + std::to_string(id) + " past the vocabulary");
  return parts_.vocabulary.pieces[id];
}

std::string BpeTokenizer::readable_piece(std::size_t id) const {
  const std::string& spelled = piece(id);
  if (special_[id]) return spelled;
  if (parts_.byte_level) {
    std::string bytes;
    if (!byte_level_bytes(spelled, bytes)) return visible(spelled);
    // Characters as text; bytes that are only part of a character (one byte of "é") as
    // <0xNN>, as a byte-fallback piece shows them.
    std::string shown;
    for (std::size_t pos = 0; pos < bytes.size();) {
      const std::size_t length = utf8_sequence_length(bytes, pos);
      shown += length == 0 ? bytes_as_pieces(bytes.substr(pos, 1)) : visible(bytes.substr(pos, length));
      pos += length == 0 ? 1 : length;
    }
    return shown;
  }
  if (spelled.size() == 6 && spelled.compare(0, 3, "<0x") == 0) return spelled;
  return visible(replace_literal(spelled, "\xE2\x96\x81", " "));  // ▁
}

void BpeTokenizer::push(Encoding& encoding, std::size_t id, bool unknown) const {
  encoding.ids.push_back(id);
  encoding.pieces.push_back(parts_.vocabulary.pieces[id]);
  encoding.unknown.push_back(unknown);
}

void BpeTokenizer::encode_section(const TextSection& section, Encoding& encoding) const {
  const std::string normalized = normalize(parts_.normalizer, section.text);
  for (const TextSection& part : normalized_tokens_.split(normalized)) {
    if (part.id) {
      push(encoding, *part.id, false);
      continue;
    }
    const bool at_text_start = section.offset == 0 && part.offset == 0;
    for (const std::string& word : pre_tokenize(parts_.pre_tokenizer, part.text, at_text_start)) {
      std::vector<std::size_t> ids;
      std::vector<bool> unknown;
      parts_.model.encode_word(parts_.vocabulary, word, ids, unknown);
      for (std::size_t i = 0; i < ids.size(); ++i) push(encoding, ids[i], unknown[i]);
    }
  }
}

Encoding BpeTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  if (const auto bad = first_invalid_utf8(text)) {
    throw InputError("text", "",
                     "expected UTF-8, found byte " + std::to_string(static_cast<unsigned char>(text[*bad])) +
                         " at offset " + std::to_string(*bad) + " that starts no UTF-8 character");
  }
  const std::vector<TextSection> sections = raw_tokens_.split(text);
  check_tokenize_memory(text, sections, text_growth(parts_.normalizer, parts_.pre_tokenizer));
  Encoding encoding;
  if (add_special_tokens)
    for (const std::size_t id : parts_.prefix_ids) push(encoding, id, false);
  for (const TextSection& section : sections) {
    if (section.id) {
      push(encoding, *section.id, false);
    } else {
      encode_section(section, encoding);
    }
  }
  if (add_special_tokens)
    for (const std::size_t id : parts_.suffix_ids) push(encoding, id, false);
  return encoding;
}

std::string BpeTokenizer::decode(const std::vector<std::size_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const std::size_t id : ids) {
    // Ids past the vocabulary (a model's padded rows) stand for no text, as in tokenizers.
    if (id >= size() || (skip_special_tokens && special_[id])) continue;
    pieces.push_back(parts_.vocabulary.pieces[id]);
  }
  std::string text = decode_pieces(parts_.decoder, std::move(pieces));
  if (parts_.clean_up_tokenization_spaces) text = clean_up_tokenization(std::move(text));
  return utf8_lossy(text);
}

std::optional<std::size_t> BpeTokenizer::special_id(SpecialRole role) const {
  return parts_.roles[static_cast<std::size_t>(role)];
}

bool BpeTokenizer::is_special(std::size_t id) const { return id < special_.size() && special_[id]; }

}  // namespace attn

#include "tokenizers/pipeline_tokenizer.h"

#include "attn/error.h"
#include "tokenizers/piece_text.h"
#include "tokenizers/text_steps.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

std::string wordpiece_decode(const WordPieceDecoder& decoder, const std::vector<std::string>& pieces) {
  std::string text;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::string piece = pieces[i];
    if (i != 0) {
      if (piece.compare(0, decoder.prefix.size(), decoder.prefix) == 0)
        piece.erase(0, decoder.prefix.size());
      else
        piece = " " + piece;
    }
    if (decoder.cleanup) piece = replace_literal(clean_up_tokenization(std::move(piece)), " do not", " don't");
    text += piece;
  }
  return text;
}

// The added tokens matched in the raw text, or (`normalized`) those matched in the
// normalized text, their content normalized.
std::vector<AddedToken> added_tokens(const PipelineParts& parts, bool normalized) {
  std::vector<AddedToken> tokens;
  for (const AddedToken& token : parts.added_tokens) {
    if (token.normalized != normalized) continue;
    tokens.push_back(token);
    if (normalized) tokens.back().content = run_normalizers(parts.normalizer, token.content);
  }
  return tokens;
}

}  // namespace

PipelineTokenizer::PipelineTokenizer(PipelineParts parts)
    : parts_(std::move(parts)),
      raw_tokens_(added_tokens(parts_, false)),
      normalized_tokens_(added_tokens(parts_, true)),
      special_(parts_.vocabulary.pieces.size()) {
  for (const AddedToken& token : parts_.added_tokens)
    if (token.special) special_.at(token.id) = true;
}

const std::string& PipelineTokenizer::piece(std::size_t id) const {
  if (id >= size()) throw InternalError("PipelineTokenizer::piece: id " + std::to_string(id) + " past the vocabulary");
  return parts_.vocabulary.pieces[id];
}

std::string PipelineTokenizer::display_piece(std::size_t id) const {
  const std::string& spelled = piece(id);
  if (special_[id]) return spelled;
  // WordPiece's "##ing" is shown as spelled: the mark says it continues a word.
  if (parts_.wordpiece_decoder) return visible(spelled);
  return display_metaspace_piece(spelled);
}

void PipelineTokenizer::push(Encoding& encoding, std::size_t id, bool unknown) const {
  encoding.ids.push_back(id);
  encoding.pieces.push_back(parts_.vocabulary.pieces[id]);
  encoding.unknown.push_back(unknown);
}

void PipelineTokenizer::encode_section(const TextSection& section, Encoding& encoding) const {
  const std::string normalized = run_normalizers(parts_.normalizer, section.text);
  for (const TextSection& part : normalized_tokens_.split(normalized)) {
    if (part.id) {
      push(encoding, *part.id, false);
      continue;
    }
    const bool at_text_start = section.offset == 0 && part.offset == 0;
    for (const std::string& word : run_pre_tokenizers(parts_.pre_tokenizer, part.text, at_text_start)) {
      std::vector<std::size_t> ids;
      std::vector<bool> unknown;
      parts_.model->encode_word(parts_.vocabulary, word, ids, unknown);
      for (std::size_t i = 0; i < ids.size(); ++i) push(encoding, ids[i], unknown[i]);
    }
  }
}

Encoding PipelineTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  if (const auto bad = first_invalid_utf8(text)) {
    throw InputError("text", "",
                     "expected UTF-8, found byte " + std::to_string(static_cast<unsigned char>(text[*bad])) +
                         " at offset " + std::to_string(*bad) + " that starts no UTF-8 character");
  }
  const std::vector<TextSection> sections = raw_tokens_.split(text);
  check_tokenize_memory(text, sections, pipeline_text_growth(parts_.normalizer, parts_.pre_tokenizer));
  Encoding encoding;
  if (add_special_tokens)
    for (const std::size_t id : parts_.prefix_ids) push(encoding, id, false);
  for (const TextSection& section : sections) {
    if (section.id)
      push(encoding, *section.id, false);
    else
      encode_section(section, encoding);
  }
  if (add_special_tokens)
    for (const std::size_t id : parts_.suffix_ids) push(encoding, id, false);
  return encoding;
}

std::string PipelineTokenizer::decode(const std::vector<std::size_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const std::size_t id : ids) {
    // Ids past the vocabulary (a model's padded rows) stand for no text, as in tokenizers.
    if (id >= size() || (skip_special_tokens && special_[id])) continue;
    pieces.push_back(parts_.vocabulary.pieces[id]);
  }
  std::string text = parts_.wordpiece_decoder ? wordpiece_decode(*parts_.wordpiece_decoder, pieces)
                                              : decode_pieces(parts_.decoder, std::move(pieces));
  if (parts_.clean_up_tokenization_spaces) text = clean_up_tokenization(std::move(text));
  return utf8_lossy(text);
}

}  // namespace attn

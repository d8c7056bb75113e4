// The WordPiece and Unigram tokenizers of Hugging Face's files behind attn's Tokenizer
// interface (BERT's tokenizer.json or vocab.txt; T5-style Unigram tokenizer.json). The
// order is tokenizers' own, as BpeTokenizer's: added tokens found in the raw text, each
// other section normalized, pre-tokenized into words, each word run through the model,
// then the post-processor's tokens around the whole.
#ifndef ATTN_TOKENIZERS_PIPELINE_TOKENIZER_H_
#define ATTN_TOKENIZERS_PIPELINE_TOKENIZER_H_

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/tokenizer.h"
#include "tokenizers/added_vocabulary.h"
#include "tokenizers/text_pipeline.h"
#include "tokenizers/word_models.h"

namespace attn {

// The WordPiece decoder (decoders/wordpiece.rs): a piece starting with `prefix` joins the
// one before it, any other gets a space in front; with `cleanup`, each piece's space before
// . ? ! , is dropped (and a few English contractions mended).
struct WordPieceDecoder {
  std::string prefix = "##";
  bool cleanup = true;
};

struct PipelineParts {
  std::string kind;          // "WordPiece", "Unigram"
  BpeVocabulary vocabulary;  // the model's pieces and the added tokens, ids 0..N-1
  std::shared_ptr<const WordModel> model;
  std::vector<AddedToken> added_tokens;
  std::vector<PipelineNormalizer> normalizer;
  std::vector<PipelinePreTokenizer> pre_tokenizer;
  std::vector<DecoderStep> decoder;                   // when not wordpiece_decoder
  std::optional<WordPieceDecoder> wordpiece_decoder;  // BERT's
  std::vector<std::size_t> prefix_ids, suffix_ids;    // the post-processor's
  bool clean_up_tokenization_spaces = false;          // tokenizer_config.json's, applied by decode
  std::array<std::optional<std::size_t>, 4> roles;    // by SpecialRole
};

class PipelineTokenizer : public Tokenizer {
 public:
  explicit PipelineTokenizer(PipelineParts parts);

  std::string kind() const override { return parts_.kind; }
  std::size_t size() const override { return parts_.vocabulary.pieces.size(); }
  const std::string& piece(std::size_t id) const override;
  std::string display_piece(std::size_t id) const override;
  std::optional<std::size_t> find(const std::string& piece) const override { return parts_.vocabulary.find(piece); }
  Encoding encode(const std::string& text, bool add_special_tokens = true) const override;
  std::string decode(const std::vector<std::size_t>& ids, bool skip_special_tokens = true) const override;
  std::optional<std::size_t> special_id(SpecialRole role) const override {
    return parts_.roles[static_cast<std::size_t>(role)];
  }
  bool is_special(std::size_t id) const override { return id < special_.size() && special_[id]; }

 private:
  void encode_section(const TextSection& section, Encoding& encoding) const;
  void push(Encoding& encoding, std::size_t id, bool unknown) const;

  PipelineParts parts_;
  AddedTokenMatcher raw_tokens_;         // matched in the raw text
  AddedTokenMatcher normalized_tokens_;  // matched after normalization (content normalized)
  std::vector<bool> special_;            // by id
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PIPELINE_TOKENIZER_H_

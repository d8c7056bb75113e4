// The BPE tokenizers of Hugging Face's files behind attn's Tokenizer interface: byte-level
// (GPT-2, Llama 3, Qwen) and SentencePiece-style (Llama 2, Mistral, TinyLlama). The order
// is tokenizers' own (tokenizer/mod.rs, encode_single_sequence): added tokens found in
// the raw text, each other section normalized, pre-tokenized into words, each word run
// through the BPE model, then the post-processor's tokens around the whole.
#ifndef ATTN_TOKENIZERS_BPE_TOKENIZER_H_
#define ATTN_TOKENIZERS_BPE_TOKENIZER_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/tokenizer.h"
#include "tokenizers/added_vocabulary.h"
#include "tokenizers/bpe_model.h"
#include "tokenizers/text_steps.h"

namespace attn {

// Everything a BpeTokenizer is made of, as the loaders read it from the files.
struct BpeParts {
  BpeVocabulary vocabulary;  // the model's vocabulary and the added tokens, ids 0..N-1
  BpeModel model;
  std::vector<AddedToken> added_tokens;
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> pre_tokenizer;
  std::vector<DecoderStep> decoder;
  // The post-processor's ids before and after the text (TemplateProcessing's "single").
  std::vector<std::size_t> prefix_ids, suffix_ids;
  bool byte_level = false;                          // pieces spell bytes (GPT-2's table), not text
  bool clean_up_tokenization_spaces = false;        // tokenizer_config.json's flag, applied by decode
  std::array<std::optional<std::size_t>, 4> roles;  // by SpecialRole
};

class BpeTokenizer : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeParts parts);

  std::string kind() const override;
  std::size_t size() const override { return parts_.vocabulary.pieces.size(); }
  const std::string& piece(std::size_t id) const override;
  // The piece as shown (readable_piece), passed through printable() as every error message
  // is: a special token's text may hold an escape sequence or a line break.
  std::string display_piece(std::size_t id) const override { return printable(readable_piece(id)); }
  std::optional<std::size_t> find(const std::string& piece) const override { return parts_.vocabulary.find(piece); }
  Encoding encode(const std::string& text, bool add_special_tokens = true) const override;
  std::string decode(const std::vector<std::size_t>& ids, bool skip_special_tokens = true) const override;
  std::optional<std::size_t> special_id(SpecialRole role) const override;
  bool is_special(std::size_t id) const override;

 private:
  // "␣cat" for "Ġcat", a byte-fallback piece as "<0xE2>", a special token as spelled.
  std::string readable_piece(std::size_t id) const;
  void encode_section(const TextSection& section, Encoding& encoding) const;
  void push(Encoding& encoding, std::size_t id, bool unknown) const;

  BpeParts parts_;
  AddedTokenMatcher raw_tokens_;         // matched in the raw text
  AddedTokenMatcher normalized_tokens_;  // matched after normalization (content normalized)
  std::vector<bool> special_;            // by id
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_BPE_TOKENIZER_H_

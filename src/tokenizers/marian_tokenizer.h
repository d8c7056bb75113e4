// Marian's tokenizer (transformers' MarianTokenizer, models/marian/tokenization_marian.py)
// behind attn's Tokenizer interface: the text cut at the special tokens, each other part
// split by a SentencePiece model (source.spm for the source side, target.spm for the
// target), run by Debian's libsentencepiece, the reference implementation; each piece's id
// is vocab.json's (shared by both sides), <unk>'s for a piece vocab.json lacks; </s> ends
// the text. A language code ">>fr<<" opening a part is one token of vocab.json.
#ifndef ATTN_TOKENIZERS_MARIAN_TOKENIZER_H_
#define ATTN_TOKENIZERS_MARIAN_TOKENIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "attn/tokenizer.h"
#include "attn/tokenizer_files.h"

namespace attn {

struct MarianShared;  // vocab.json, both SentencePiece models, the special tokens

class MarianTokenizer : public Tokenizer {
 public:
  MarianTokenizer(std::shared_ptr<const MarianShared> shared, TokenizerSide side);
  ~MarianTokenizer() override;

  std::string kind() const override;
  std::size_t size() const override;
  const std::string& piece(std::size_t id) const override;
  std::string display_piece(std::size_t id) const override;
  std::optional<std::size_t> find(const std::string& piece) const override;
  Encoding encode(const std::string& text, bool add_special_tokens = true) const override;
  // MarianTokenizer.decode: the ids' pieces (a special token kept as its text and a space)
  // joined by the side's SentencePiece model, then stripped of whitespace at both ends.
  std::string decode(const std::vector<std::size_t>& ids, bool skip_special_tokens = true) const override;
  std::optional<std::size_t> special_id(SpecialRole role) const override;
  bool is_special(std::size_t id) const override;

 private:
  void encode_part(const std::string& text, Encoding& encoding) const;

  std::shared_ptr<const MarianShared> shared_;
  TokenizerSide side_;
};

// Reads FOLDER/source.spm, FOLDER/target.spm, FOLDER/vocab.json and, when present,
// FOLDER/tokenizer_config.json.
std::unique_ptr<Tokenizer> load_marian_tokenizer(const std::string& folder, TokenizerSide side);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_MARIAN_TOKENIZER_H_

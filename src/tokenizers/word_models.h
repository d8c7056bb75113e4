// The WordPiece and Unigram models of Hugging Face's tokenizers (models/wordpiece/mod.rs,
// models/unigram/model.rs): a pre-tokenized word to the ids of its pieces.
#ifndef ATTN_TOKENIZERS_WORD_MODELS_H_
#define ATTN_TOKENIZERS_WORD_MODELS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tokenizers/bpe_model.h"

namespace attn {

class WordModel {
 public:
  virtual ~WordModel() = default;
  // Appends the ids of one word; unknown[i] true where the unknown token stands for text
  // the vocabulary cannot spell.
  virtual void encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                           std::vector<bool>& unknown) const = 0;
};

// WordPiece: the longest piece of the vocabulary the word starts with, then the longest
// "##"-prefixed piece the rest starts with, and so on; a word with a part no piece spells,
// or longer than max_input_chars_per_word characters, is the unknown token alone.
struct WordPieceOptions {
  std::size_t unk_id = 0;
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;
  // The longest piece's bytes: no piece is looked for past it, so that a long word costs
  // its length times this, not its length squared.
  std::size_t longest_piece_bytes = 0;
};

class WordPieceModel : public WordModel {
 public:
  explicit WordPieceModel(WordPieceOptions options) : options_(std::move(options)) {}
  void encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                   std::vector<bool>& unknown) const override;

 private:
  WordPieceOptions options_;
};

// Unigram: the segmentation of the word whose pieces' scores (log probabilities) sum
// highest, found by Viterbi over byte positions (encode_optimized). A character no piece
// starts covers itself as the unknown token, scored min(score) - 10; consecutive unknown
// characters fuse into one. With byte_fallback an unknown part becomes its <0xNN> pieces.
struct UnigramPiece {
  std::string piece;
  double score = 0;
};

class UnigramModel : public WordModel {
 public:
  UnigramModel(const std::vector<UnigramPiece>& pieces, std::optional<std::size_t> unk_id, bool byte_fallback);
  void encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                   std::vector<bool>& unknown) const override;

 private:
  struct Match {
    std::size_t length, id;
  };
  // The pieces `text` starts with at `pos`, shortest first (the trie's common prefix search).
  void prefixes_at(const std::string& text, std::size_t pos, std::vector<Match>& matches) const;
  // The pieces' segmentation of `word` as [begin, end) spans, each with its id.
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::size_t>> viterbi(const std::string& word) const;

  std::vector<std::string> pieces_;
  std::vector<double> scores_;
  std::vector<std::uint32_t> sorted_;  // ids, pieces in byte order
  std::optional<std::size_t> unk_id_;
  bool byte_fallback_ = false;
  double unk_score_ = 0;
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_WORD_MODELS_H_

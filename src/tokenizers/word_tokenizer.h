// The word tokenizer of attn's own model files: whitespace separates words, punctuation
// stands alone, and each word is looked up in the model's vocabulary (docs/tokenizer.md).
//
// Splitting rule (docs/model-file.md): whitespace separates words; every punctuation
// character (. , ! ? ; : " ( ) [ ] { } and the like) is a token of its own; letters,
// digits, apostrophes, hyphens inside words and any non-ASCII character stay together;
// a special token in angle brackets (<BOS>, <PAD>) is one token.
// So "I love AI." -> I | love | AI | .   and   "J' aime l' IA" -> J' | aime | l' | IA.
#ifndef ATTN_TOKENIZERS_WORD_TOKENIZER_H_
#define ATTN_TOKENIZERS_WORD_TOKENIZER_H_

#include <string>
#include <vector>

#include "attn/tokenizer.h"
#include "attn/vocabulary.h"

namespace attn {

std::vector<std::string> split_tokens(const std::string& text);

class WordTokenizer : public Tokenizer {
 public:
  explicit WordTokenizer(Vocabulary vocabulary) : vocabulary_(std::move(vocabulary)) {}

  std::string kind() const override { return "words"; }
  std::size_t size() const override { return vocabulary_.size(); }
  const std::string& piece(std::size_t id) const override;
  std::string display_piece(std::size_t id) const override { return piece(id); }
  std::optional<std::size_t> find(const std::string& piece) const override { return vocabulary_.exact(piece); }
  // The words of `text`, each looked up (another case matches: "ai" is "AI"); a word the
  // vocabulary lacks is its <UNK>, flagged unknown, or, without one, InputError. Nothing is
  // added: a model file's text writes its own <BOS>.
  Encoding encode(const std::string& text, bool add_special_tokens = true) const override;
  // The words joined by single spaces.
  std::string decode(const std::vector<std::size_t>& ids, bool skip_special_tokens = true) const override;
  std::optional<std::size_t> special_id(SpecialRole role) const override { return vocabulary_.special_id(role); }
  bool is_special(std::size_t id) const override;
  std::vector<std::string> split(const std::string& text) const override { return split_tokens(text); }
  std::optional<std::size_t> lookup(const std::string& token) const override { return vocabulary_.find(token); }

  const Vocabulary& vocabulary() const { return vocabulary_; }

 private:
  Vocabulary vocabulary_;
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_WORD_TOKENIZER_H_

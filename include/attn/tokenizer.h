// Text to tokens to ids, the first steps of the pipeline.
//
// Tokenizing rule (docs/model-file.md): whitespace separates words; every punctuation
// character (. , ! ? ; : " ( ) [ ] { } and the like) is a token of its own; letters,
// digits, apostrophes, hyphens inside words and any non-ASCII character stay together;
// a special token in angle brackets (<BOS>, <PAD>) is one token.
// So "I love AI." -> I | love | AI | .   and   "J' aime l' IA" -> J' | aime | l' | IA.
#ifndef ATTN_TOKENIZER_H_
#define ATTN_TOKENIZER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/tensor.h"

namespace attn {

std::vector<std::string> split_tokens(const std::string& text);

// The model's vocabulary: token strings, the id of each being its index.
class Vocabulary {
 public:
  static constexpr const char* kPad = "<PAD>";
  static constexpr const char* kUnknown = "<UNK>";

  Vocabulary() = default;
  // Tokens must be distinct (the loader reports duplicates with their JSON path).
  explicit Vocabulary(std::vector<std::string> tokens);

  std::size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }
  const std::string& token(std::size_t id) const { return tokens_.at(id); }
  const std::vector<std::string>& tokens() const { return tokens_; }

  // The id of `token`: an exact match, else a case-insensitive one ("ai" finds "AI").
  std::optional<std::size_t> find(const std::string& token) const;
  std::optional<std::size_t> pad_id() const { return exact(kPad); }
  std::optional<std::size_t> unknown_id() const { return exact(kUnknown); }

 private:
  std::optional<std::size_t> exact(const std::string& token) const;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::unordered_map<std::string, std::size_t> lower_ids_;  // first token for each lowercase form
};

// Ids for a batch of token lists, padded with <PAD> to the longest: (B,S).
struct TokenIds {
  Tensor ids;                                 // (B,S), the ids as doubles
  std::vector<std::vector<std::string>> tokens;  // (B,S) strings, "<PAD>" where padded
  std::vector<std::vector<bool>> unknown;        // true where a word was not in the vocabulary
  std::vector<std::size_t> lengths;              // tokens before padding, per batch item
};

// Looks every token up; unknown words map to <UNK>. Throws std::invalid_argument (with
// the word) when a word is unknown and the vocabulary has no <UNK>, or when padding is
// needed and it has no <PAD>.
TokenIds lookup_token_ids(const std::vector<std::vector<std::string>>& batch, const Vocabulary& vocab);

}  // namespace attn

#endif  // ATTN_TOKENIZER_H_

// A word vocabulary: the model file's "vocab", token strings whose ids are their indexes, and
// the one place that spells the special tokens of attn's own models ("<PAD>", "<UNK>",
// "<BOS>", "<EOS>"). Everything else asks for a special token by its role (SpecialRole,
// attn/tokenizer.h) and gets an id. The word tokenizer (src/tokenizers/word_tokenizer.h)
// reads text with it.
#ifndef ATTN_VOCABULARY_H_
#define ATTN_VOCABULARY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/tokenizer.h"

namespace attn {

class Vocabulary {
 public:
  static constexpr const char* kPad = "<PAD>";
  static constexpr const char* kUnknown = "<UNK>";
  static constexpr const char* kBegin = "<BOS>";
  static constexpr const char* kEnd = "<EOS>";
  // How a word vocabulary spells the token of `role`.
  static const char* spelling(SpecialRole role);

  Vocabulary() = default;
  // Tokens must be distinct: the loader reports duplicates with their JSON path, so a
  // duplicate here is an InternalError.
  explicit Vocabulary(std::vector<std::string> tokens);

  std::size_t size() const { return tokens_.size(); }
  bool empty() const { return tokens_.empty(); }
  const std::string& token(std::size_t id) const { return tokens_.at(id); }
  const std::vector<std::string>& tokens() const { return tokens_; }

  // The id of `token`: an exact match, else a case-insensitive one ("ai" finds "AI").
  std::optional<std::size_t> find(const std::string& token) const;
  // The id of a token spelled exactly so.
  std::optional<std::size_t> exact(const std::string& token) const;
  // The special token that plays `role`, if the vocabulary has it.
  std::optional<std::size_t> special_id(SpecialRole role) const { return exact(spelling(role)); }
  std::optional<std::size_t> pad_id() const { return special_id(SpecialRole::Pad); }
  std::optional<std::size_t> unknown_id() const { return special_id(SpecialRole::Unknown); }
  // The ids of the tokens a model never writes as its next token: padding, unknown, begin.
  std::vector<std::size_t> never_written_ids() const {
    std::vector<std::size_t> ids;
    for (const SpecialRole role : {SpecialRole::Pad, SpecialRole::Unknown, SpecialRole::Begin})
      if (const auto id = special_id(role)) ids.push_back(*id);
    return ids;
  }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::unordered_map<std::string, std::size_t> lower_ids_;  // first token for each lowercase form
};

}  // namespace attn

#endif  // ATTN_VOCABULARY_H_

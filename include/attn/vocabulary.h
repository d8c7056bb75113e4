// The model's vocabulary: the table the tokenizer step looks tokens up in (steps/tokenizer.h).
#ifndef ATTN_VOCABULARY_H_
#define ATTN_VOCABULARY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn {

// The model's vocabulary: token strings, the id of each being its index.
class Vocabulary {
 public:
  static constexpr const char* kPad = "<PAD>";
  static constexpr const char* kUnknown = "<UNK>";
  static constexpr const char* kBegin = "<BOS>";
  static constexpr const char* kEnd = "<EOS>";

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
  std::optional<std::size_t> pad_id() const { return exact(kPad); }
  std::optional<std::size_t> unknown_id() const { return exact(kUnknown); }
  // The ids of the tokens a model never writes as its next token: <PAD>, <UNK>, <BOS>.
  std::vector<std::size_t> never_written_ids() const {
    std::vector<std::size_t> ids;
    for (const char* token : {kPad, kUnknown, kBegin})
      if (const auto id = exact(token)) ids.push_back(*id);
    return ids;
  }

 private:
  std::optional<std::size_t> exact(const std::string& token) const;
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::size_t> ids_;
  std::unordered_map<std::string, std::size_t> lower_ids_;  // first token for each lowercase form
};

}  // namespace attn

#endif  // ATTN_VOCABULARY_H_

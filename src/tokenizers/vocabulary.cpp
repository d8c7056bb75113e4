#include "attn/vocabulary.h"

#include <cctype>

#include "attn/error.h"

namespace attn {

namespace {

std::string lowercase(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const char* Vocabulary::spelling(SpecialRole role) {
  switch (role) {
    case SpecialRole::Pad:
      return kPad;
    case SpecialRole::Unknown:
      return kUnknown;
    case SpecialRole::Begin:
      return kBegin;
    case SpecialRole::End:
      return kEnd;
  }
  return "";
}

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    // The model loader reports a duplicate with its JSON path; one here is a bug.
    if (!ids_.emplace(tokens_[id], id).second)
      throw InternalError("Vocabulary: duplicate token \"" + tokens_[id] + "\" (the loader lets none through)");
    lower_ids_.emplace(lowercase(tokens_[id]), id);
  }
}

std::optional<std::size_t> Vocabulary::exact(const std::string& token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> Vocabulary::find(const std::string& token) const {
  if (auto id = exact(token)) return id;
  const auto it = lower_ids_.find(lowercase(token));
  if (it == lower_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace attn

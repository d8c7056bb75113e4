// tokenizers' Precompiled normalizer (normalizers/precompiled.rs over the spm_precompiled
// crate): the normalization table a SentencePiece model carries (nmt_nfkc's NFKC and its
// whitespace and control-character rules), copied into tokenizer.json in base64. The text
// is taken one grapheme cluster at a time: a cluster of fewer than 6 bytes the table maps
// is replaced whole; otherwise each of its characters the table maps is replaced, the
// others kept. "Maps" is the table's first (shortest) entry the text starts with.
#ifndef ATTN_TOKENIZERS_PRECOMPILED_CHARSMAP_H_
#define ATTN_TOKENIZERS_PRECOMPILED_CHARSMAP_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizers/darts_trie.h"

namespace attn {

class PrecompiledCharsmap {
 public:
  // `base64`: the field's text; InputError(file, path, ...) when it is not base64, not a
  // table, or a table whose trie a search would leave.
  PrecompiledCharsmap(const std::string& base64, const std::string& file, const std::string& path);
  std::string normalize(const std::string& text) const;
  // The most bytes one replacement has: a text grows to at most that many bytes a byte.
  std::size_t longest_replacement() const;

 private:
  std::optional<std::string_view> transform(std::string_view chunk) const;

  std::vector<DartsUnit> units_;
  std::string strings_;
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PRECOMPILED_CHARSMAP_H_

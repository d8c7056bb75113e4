// A regular expression run by PCRE2 in UTF and UCP modes, so that \p{L}, \p{N}, \s and
// lookahead mean what they mean in the Oniguruma expressions of Hugging Face's
// tokenizer.json files (GPT-2's, Llama 3's, Qwen's pre-tokenizer patterns).
#ifndef ATTN_TOKENIZERS_PCRE_REGEX_H_
#define ATTN_TOKENIZERS_PCRE_REGEX_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

class PcreRegex {
 public:
  // InputError(file, json_path, ...) naming PCRE2's complaint when `pattern` does not compile.
  // `literal`: the pattern is a plain string (a Split's {"String": ...}).
  PcreRegex(const std::string& pattern, bool literal, const std::string& file, const std::string& json_path);
  ~PcreRegex();
  PcreRegex(const PcreRegex&) = delete;
  PcreRegex& operator=(const PcreRegex&) = delete;

  // The non-empty matches in `text` (well-formed UTF-8), left to right, as [begin, end) byte
  // offsets. InputError naming the file, the pattern's JSON path and PCRE2's own message
  // when matching fails (a pattern that backtracks past PCRE2's match limit).
  std::vector<std::pair<std::size_t, std::size_t>> find_all(const std::string& text) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
  std::string file_, json_path_;  // where the pattern was written, for messages
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PCRE_REGEX_H_

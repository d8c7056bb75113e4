// What the tokenizers need of Unicode beyond UTF-8, from ICU (Debian's libicu-dev): the
// normalization forms of the NFC/NFKC normalizers (Qwen's tokenizer.json has NFC),
// lowercasing, and Rust's char::is_alphanumeric for added tokens marked single_word.
#ifndef ATTN_TOKENIZERS_UNICODE_TEXT_H_
#define ATTN_TOKENIZERS_UNICODE_TEXT_H_

#include <string>

namespace attn {

enum class UnicodeForm { Nfc, Nfd, Nfkc, Nfkd };

// `text` (well-formed UTF-8) in the normalization form.
std::string unicode_normalize(const std::string& text, UnicodeForm form);
std::string unicode_lowercase(const std::string& text);
// Rust's char::is_alphanumeric: Alphabetic or a number (Nd, Nl, No).
bool is_unicode_alphanumeric(char32_t c);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_UNICODE_TEXT_H_

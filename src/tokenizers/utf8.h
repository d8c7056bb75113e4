// UTF-8 as the tokenizers need it: code points one at a time, validity, and the lossy
// conversion Hugging Face's decode applies (Rust's String::from_utf8_lossy).
#ifndef ATTN_TOKENIZERS_UTF8_H_
#define ATTN_TOKENIZERS_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// Length in bytes of the well-formed UTF-8 sequence at text[pos] (Unicode's table 3-7: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0 where the bytes are not one.
std::size_t utf8_sequence_length(const std::string& text, std::size_t pos);

// Offset of the first byte that does not start a well-formed sequence, if any.
std::optional<std::size_t> first_invalid_utf8(const std::string& text);

// `bytes` with every ill-formed part replaced by U+FFFD, one per maximal subpart (the
// replacement Rust's from_utf8_lossy and the WHATWG TextDecoder make alike).
std::string utf8_lossy(const std::string& bytes);

// The code point of the well-formed sequence at text[pos] (utf8_sequence_length > 0).
char32_t utf8_code_point(const std::string& text, std::size_t pos);
void append_utf8(std::string& out, char32_t code_point);

// A well-formed text cut into its characters, each as its UTF-8 bytes.
std::vector<std::string> utf8_characters(const std::string& text);

// `text` with every occurrence of `from` replaced by `to`, left to right, the replaced text
// never searched again. The one literal replacement of the tokenizers (the normalizers',
// pre-tokenizers' and decoders' Replace and Metaspace, the clean-up of decoded text): an
// empty `from` replaces nothing, as tokenizers' pattern.rs finds no match for an empty
// string (a search for "" would find it at every position, and never move on).
std::string replace_literal(const std::string& text, const std::string& from, const std::string& to);

// Rust's char::is_whitespace: Unicode's White_Space property.
bool is_unicode_whitespace(char32_t c);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_UTF8_H_

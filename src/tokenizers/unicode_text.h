// What the tokenizers need of Unicode beyond UTF-8, from ICU (Debian's libicu-dev): the
// normalization forms of the NFC/NFKC normalizers (Qwen's tokenizer.json has NFC),
// lowercasing, Rust's char::is_alphanumeric for added tokens marked single_word, and the
// general categories of the BERT normalizer and pre-tokenizer.
#ifndef ATTN_TOKENIZERS_UNICODE_TEXT_H_
#define ATTN_TOKENIZERS_UNICODE_TEXT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

enum class UnicodeForm { Nfc, Nfd, Nfkc, Nfkd };

// `text` (well-formed UTF-8) in the normalization form.
std::string unicode_normalize(const std::string& text, UnicodeForm form);
std::string unicode_lowercase(const std::string& text);
// Rust's char::is_alphanumeric: Alphabetic or a number (Nd, Nl, No).
bool is_unicode_alphanumeric(char32_t c);

// General categories the BERT steps ask about (the unicode_categories crate's names):
// Other (Cc, Cf, Cn, Co, Cs), Mark Nonspacing (Mn), Punctuation (Pc, Pd, Ps, Pe, Pi, Pf, Po).
bool is_unicode_other(char32_t c);
bool is_unicode_nonspacing_mark(char32_t c);
bool is_unicode_punctuation(char32_t c);
// Each character lowercased on its own, as tokenizers' NormalizedString::lowercase does
// (Rust's char::to_lowercase: "Σ" is always "σ", never the final "ς" a whole-text
// lowercasing gives at a word's end).
std::string unicode_lowercase_each(const std::string& text);
// Where each extended grapheme cluster of `text` (well-formed UTF-8) ends, as byte offsets,
// the last the text's size (ICU's character break iterator: the clusters of Rust's
// unicode-segmentation, graphemes(true)).
std::vector<std::size_t> grapheme_ends(const std::string& text);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_UNICODE_TEXT_H_

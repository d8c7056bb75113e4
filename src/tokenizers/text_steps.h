// The stages around the BPE model, as Hugging Face's tokenizer.json names them: normalizers
// (text to text), pre-tokenizers (text to words) and decoders (pieces back to text). Each
// is a list applied in order (a "Sequence" in the file; one element for a single one).
#ifndef ATTN_TOKENIZERS_TEXT_STEPS_H_
#define ATTN_TOKENIZERS_TEXT_STEPS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizers/added_vocabulary.h"
#include "tokenizers/pcre_regex.h"

namespace attn {

struct NormalizerStep {
  enum class Kind { Prepend, Replace, Nfc, Nfd, Nfkc, Nfkd, Lowercase, Strip };
  Kind kind = Kind::Nfc;
  std::string text;                    // Prepend's prefix, Replace's replacement
  std::shared_ptr<PcreRegex> pattern;  // Replace's pattern
  bool left = false, right = false;    // Strip's sides
};
std::string normalize(const std::vector<NormalizerStep>& steps, std::string text);

// How a Split keeps the delimiters it finds (SplitDelimiterBehavior in tokenizers).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
  enum class Kind { ByteLevel, Split, Metaspace };
  enum class Prepend { Always, First, Never };
  Kind kind = Kind::ByteLevel;
  bool add_prefix_space = false;       // ByteLevel
  bool use_regex = true;               // ByteLevel: split with GPT-2's pattern first
  std::shared_ptr<PcreRegex> pattern;  // Split's, or ByteLevel's GPT-2 pattern
  SplitBehavior behavior = SplitBehavior::Isolated;
  bool invert = false;
  std::string replacement;            // Metaspace's "▁"
  Prepend prepend = Prepend::Always;  // Metaspace's prepend_scheme
  bool split = true;                  // Metaspace: split before each replacement
};
// The words of one section of text; `at_text_start`: the section begins the whole text
// (Metaspace's prepend_scheme "first").
std::vector<std::string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, const std::string& section,
                                      bool at_text_start);

// How far a text can grow through a normalizer and a pre-tokenizer: to at most `factor`
// bytes per byte, plus `added` bytes per section (a Prepend's prefix, a prefix space, a
// Metaspace's first replacement), the words' bytes counted together. Replace grows a byte
// to its content (a match takes at least one byte); NFC and NFD at most 3 bytes a byte,
// NFKC and NFKD 11 (U+FDFA), lowercasing 1.5 (U+0130) (every code point through Python's
// unicodedata 14.0; counted as 4, 12 and 2 for the later Unicode ICU may have); ByteLevel
// 2 (a byte becomes a character of up to 2 bytes); Metaspace a space to its replacement.
struct TextGrowth {
  long double factor = 1, added = 0;
};
TextGrowth text_growth(const std::vector<NormalizerStep>& normalizer,
                       const std::vector<PreTokenizerStep>& pre_tokenizer);

// The memory a text may take while it is tokenized: its own bytes twice, and the bytes it
// may grow to (`growth` over each section no added token took) at kTokenizeBytesPerByte
// each. InputError naming the text when that is over the limit in force (--max-memory).
// The memory tokenizing takes per byte of the text grown through the normalizer and the
// pre-tokenizer: the words, the pieces, the ids and their copies. Measured with
// /usr/bin/time -v on `attn tokenize --model tests/data/gpt2 - --json` of 4 MiB texts
// (the process's 21 MiB at rest taken off): 168 bytes a byte for "a!a!..." and "1,1,..."
// (every byte a word and a token), 137 for "é一é一...", 102 for "a a a ...", 57 for
// English; rounded up.
constexpr std::uint64_t kTokenizeBytesPerByte = 192;
void check_tokenize_memory(const std::string& text, const std::vector<TextSection>& sections, const TextGrowth& growth);

struct DecoderStep {
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace };
  Kind kind = Kind::Fuse;
  std::string from, to;                // Replace: a literal pattern and its replacement
  std::string content;                 // Strip's character
  std::size_t start = 0, stop = 0;     // Strip's counts
  std::string replacement;             // Metaspace's "▁"
  bool drop_first_replacement = true;  // Metaspace: prepend_scheme other than "never"
};
// The pieces to text; no steps joins them with spaces, as tokenizers does without a decoder.
std::string decode_pieces(const std::vector<DecoderStep>& steps, std::vector<std::string> pieces);

// GPT-2's byte-to-character table (bytes_to_unicode): the printable bytes stand for
// themselves, the rest for U+0100 onwards ("Ġ" is the space, "Ċ" the newline).
const std::string& byte_level_character(unsigned char byte);
// The bytes a byte-level piece stands for; false if a character is not one of the 256.
bool byte_level_bytes(const std::string& piece, std::string& bytes);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_TEXT_STEPS_H_

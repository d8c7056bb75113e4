// Added tokens (tokenizers/src/tokenizer/added_vocabulary.rs): "<|endoftext|>", "<s>",
// "<|im_start|>" and their like, found in the text before anything else sees it, each
// becoming its own id. Matches are leftmost-longest (the Aho-Corasick automaton of
// tokenizers); a token marked normalized is looked for in the normalized text instead.
#ifndef ATTN_TOKENIZERS_ADDED_VOCABULARY_H_
#define ATTN_TOKENIZERS_ADDED_VOCABULARY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct AddedToken {
  std::string content;
  std::size_t id = 0;
  bool special = false;
  bool single_word = false;  // only where no letter, digit or '_' touches it
  bool lstrip = false;       // takes the whitespace before it
  bool rstrip = false;       // takes the whitespace after it
  bool normalized = false;   // matched in the normalized text
};

// A part of a text: an added token's id, or text the model tokenizes.
struct TextSection {
  std::optional<std::size_t> id;
  std::string text;
  std::size_t offset = 0;  // where it starts in the text it was cut from
};

// Cuts `text` at the tokens in `tokens` (their `content` matched as given).
std::vector<TextSection> split_added_tokens(const std::string& text, const std::vector<AddedToken>& tokens);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_ADDED_VOCABULARY_H_

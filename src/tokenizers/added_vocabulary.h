// Added tokens (tokenizers/src/tokenizer/added_vocabulary.rs): "<|endoftext|>", "<s>",
// "<|im_start|>" and their like, found in the text before anything else sees it, each
// becoming its own id. Matches are leftmost-longest (the Aho-Corasick automaton of
// tokenizers); a token marked normalized is looked for in the normalized text instead.
#ifndef ATTN_TOKENIZERS_ADDED_VOCABULARY_H_
#define ATTN_TOKENIZERS_ADDED_VOCABULARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

// The added tokens in a trie of their bytes, so that the text is read once, whatever the
// number of tokens: at each position the walk goes no further than the longest token
// (20,000 added tokens against an 80 KB text took 14 s, one comparison per token per
// position). tokenizers builds an Aho-Corasick automaton; the leftmost-longest matches
// are the same.
class AddedTokenMatcher {
 public:
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);
  // Cuts `text` at the tokens (their `content` matched as given).
  std::vector<TextSection> split(const std::string& text) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::uint32_t>> next;  // by byte, sorted
    std::int64_t token = -1;                                    // the token ending here, if any
  };
  // The token (index into tokens_) of the longest content starting at `pos`, or -1.
  std::int64_t longest_at(const std::string& text, std::size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_;  // nodes_[0]: the root
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_ADDED_VOCABULARY_H_

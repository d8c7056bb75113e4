// Text to token ids and back: the interface every tokenizer attn knows implements.
//
// Today's word tokenizer (the model file's vocabulary, split on spaces and punctuation) is
// one; the byte-level BPE of GPT-2, Llama 3 and Qwen, and the SentencePiece-style BPE of
// Llama 2 and Mistral (read from Hugging Face's vocab.json + merges.txt or tokenizer.json)
// plug in beside it. The forward pass asks a Tokenizer for ids; the walkthrough shows the
// pieces beside them; generation decodes what it drew.
#ifndef ATTN_TOKENIZER_H_
#define ATTN_TOKENIZER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// What a special token is for, whatever its spelling ("<BOS>", "<s>", "<|endoftext|>").
enum class SpecialRole { Pad, Unknown, Begin, End };
const char* special_role_name(SpecialRole role);  // "pad", "unknown", "begin", "end"

// One text, tokenized: ids[i] is the vocabulary entry pieces[i] (the vocabulary's own
// spelling: "Ġcat", "▁the", "<0xE2>", "love"), for the i-th token of the text.
struct Encoding {
  std::vector<std::size_t> ids;
  std::vector<std::string> pieces;
  // true where the text held something the vocabulary lacks and the tokenizer wrote its
  // unknown token instead (the word tokenizer's <UNK>; byte-level BPE never does).
  std::vector<bool> unknown;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // What kind it is, for the lesson's header and `attn validate`: "words", "byte-level BPE",
  // "SentencePiece BPE".
  virtual std::string kind() const = 0;
  // Vocabulary entries, ids 0..size()-1 (a model's vocab_size may be larger: rows no token has).
  virtual std::size_t size() const = 0;
  // The vocabulary's spelling of an id ("Ġcat"); InternalError past size().
  virtual const std::string& piece(std::size_t id) const = 0;
  // The piece as a learner reads it: a visible mark for the leading space ("␣cat" for
  // "Ġcat" or "▁cat"), the bytes of a byte-level piece shown as text where they are valid
  // UTF-8, a byte-fallback piece as its byte ("<0xE2>").
  virtual std::string display_piece(std::size_t id) const = 0;
  // The id of a piece spelled exactly so, if the vocabulary has it.
  virtual std::optional<std::size_t> find(const std::string& piece) const = 0;

  // Text to ids as the real tokenizer does it: normalizer, pre-tokenizer, model, then, when
  // add_special_tokens, the post-processor (a <s> in front, say). Throws InputError only for
  // text the tokenizer cannot take at all (invalid UTF-8 where it needs code points).
  virtual Encoding encode(const std::string& text, bool add_special_tokens = true) const = 0;
  // Ids to text, as Hugging Face's tokenizer.decode(ids, skip_special_tokens=...) does;
  // bytes that are not valid UTF-8 become U+FFFD.
  virtual std::string decode(const std::vector<std::size_t>& ids, bool skip_special_tokens = true) const = 0;

  // The special token that plays `role`, if the tokenizer has one.
  virtual std::optional<std::size_t> special_id(SpecialRole role) const = 0;
  // Whether an id is a special (control) token: skipped by decode's skip_special_tokens.
  virtual bool is_special(std::size_t id) const = 0;

  // What the forward pass asks (a tokenizer need not override them). The tokens of `text` as
  // the run shows them before lookup: by default encode's pieces, nothing added (a model
  // file's text writes its own <BOS>); the word tokenizer's words as typed ("ai").
  virtual std::vector<std::string> split(const std::string& text) const { return encode(text, false).pieces; }
  // The id a token given by name stands for (a model file's input.tokens, a piece of
  // split()): find()'s exact match by default; the word tokenizer also matches another case
  // ("ai" finds "AI").
  virtual std::optional<std::size_t> lookup(const std::string& token) const { return find(token); }
};

}  // namespace attn

#endif  // ATTN_TOKENIZER_H_

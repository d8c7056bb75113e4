// Loading the tokenizer of a Hugging Face model folder: tokenizer.json, or GPT-2's
// vocab.json + merges.txt; tokenizer_config.json, when present, names the begin/end/pad
// tokens and says whether decode cleans up spaces before punctuation.
//
// Bad files end in InputError naming the file and the JSON path (or the merges.txt line),
// what was expected and what was found: malformed or truncated JSON, a merge naming a
// piece the vocabulary lacks, ids that collide or leave gaps, a Unigram or WordPiece model,
// a normalizer, pre-tokenizer, post-processor or decoder attn does not know. Files larger
// than 256 MiB are refused before they are read; what is allocated is bounded by the size
// of the files.
#ifndef ATTN_TOKENIZER_FILES_H_
#define ATTN_TOKENIZER_FILES_H_

#include <memory>
#include <string>

#include "attn/tokenizer.h"

namespace attn {

// The tokenizer of a model folder: FOLDER/tokenizer.json, else FOLDER/vocab.json and
// FOLDER/merges.txt; FOLDER/tokenizer_config.json when it exists.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& folder);

// From explicit files; an empty `tokenizer_config` means none.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json,
                                               const std::string& tokenizer_config = "");
std::unique_ptr<Tokenizer> load_vocab_merges(const std::string& vocab_json, const std::string& merges_txt,
                                             const std::string& tokenizer_config = "");

}  // namespace attn

#endif  // ATTN_TOKENIZER_FILES_H_

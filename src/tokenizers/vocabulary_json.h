// The vocabulary, the merges and the added tokens of the tokenizer files, and the roles
// tokenizer_config.json gives: ids must be 0..N-1, each spelled once; a merge must join two
// pieces of the vocabulary into a third.
#ifndef ATTN_TOKENIZERS_VOCABULARY_JSON_H_
#define ATTN_TOKENIZERS_VOCABULARY_JSON_H_

#include <string>
#include <vector>

#include "tokenizers/bpe_tokenizer.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/pipeline_tokenizer.h"

namespace attn {

// {"piece": id, ...}: vocab.json, or tokenizer.json's model.vocab.
BpeVocabulary read_vocabulary(const JsonField& field);
// vocab.json, read, counted and checked as read_json_file does; its vocabulary as
// read_vocabulary makes it, and its faults named as read_vocabulary names them.
BpeVocabulary read_vocabulary_file(const std::string& path);
// tokenizer.json's added_tokens: entries the vocabulary lacks are appended to it (their ids
// must continue it); the ones it has must carry its id.
std::vector<AddedToken> read_added_tokens(const JsonField& field, BpeVocabulary& vocabulary);
// tokenizer.json's model.merges: "a b" strings or ["a", "b"] pairs, in rank order.
std::vector<Merge> read_merges(const JsonField& field, const BpeVocabulary& vocabulary);
// GPT-2's merges.txt: a "#version" line, then one "a b" per line.
std::vector<Merge> read_merges_txt(const std::string& path, const BpeVocabulary& vocabulary);
// bos_token, eos_token, unk_token, pad_token and clean_up_tokenization_spaces; with
// `declares_specials` (vocab.json + merges.txt, which have no added_tokens), those tokens
// and additional_special_tokens also become the special added tokens, and add_bos_token
// puts the begin token in front.
void read_tokenizer_config(const std::string& path, BpeParts& parts, bool declares_specials);
// The same for a WordPiece or Unigram tokenizer.json (whose added_tokens declare the specials).
void read_tokenizer_config(const std::string& path, PipelineParts& parts);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_VOCABULARY_JSON_H_

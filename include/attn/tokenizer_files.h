// Loading the tokenizer of a Hugging Face model folder, chosen by the files it has:
// tokenizer.json (a BPE, WordPiece or Unigram model), else BERT's vocab.txt, else GPT-2's
// vocab.json + merges.txt, else Marian's source.spm + target.spm + vocab.json (SentencePiece
// models read by libsentencepiece); tokenizer_config.json, when present, names the
// begin/end/pad tokens and says whether decode cleans up spaces before punctuation.
//
// Bad files end in InputError naming the file and the JSON path (or the line), what was
// expected and what was found: malformed or truncated JSON, a merge naming a piece the
// vocabulary lacks, ids that collide or leave gaps, a vocab.txt spelling a piece twice or
// without its unknown token, a .spm libsentencepiece cannot read, a model, normalizer,
// pre-tokenizer, post-processor or decoder attn does not know. Files larger than 256 MiB
// (a .spm: 64 MiB) are refused before they are read; what is allocated is bounded by the
// size of the files.
#ifndef ATTN_TOKENIZER_FILES_H_
#define ATTN_TOKENIZER_FILES_H_

#include <memory>
#include <string>

#include "attn/tokenizer.h"

namespace attn {

// Which text a tokenizer reads. An encoder-decoder model holds one of each: Marian's
// source.spm tokenizes the source, its target.spm the target (MarianTokenizer's
// text_target), and the target side decodes what the decoder writes. A folder with one
// tokenizer gives the same tokenizer for both sides.
enum class TokenizerSide { Source, Target };

// The tokenizer of a model folder: FOLDER/tokenizer.json, else FOLDER/vocab.txt, else
// FOLDER/vocab.json and FOLDER/merges.txt, else FOLDER/source.spm, target.spm and
// vocab.json; FOLDER/tokenizer_config.json when it exists.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& folder, TokenizerSide side = TokenizerSide::Source);

// From explicit files; an empty `tokenizer_config` means none.
std::unique_ptr<Tokenizer> load_tokenizer_json(const std::string& tokenizer_json,
                                               const std::string& tokenizer_config = "");
std::unique_ptr<Tokenizer> load_vocab_merges(const std::string& vocab_json, const std::string& merges_txt,
                                             const std::string& tokenizer_config = "");

}  // namespace attn

#endif  // ATTN_TOKENIZER_FILES_H_

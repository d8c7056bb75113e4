// Reading the WordPiece and Unigram tokenizers: a tokenizer.json whose model is one of
// them, and BERT's older vocab.txt + tokenizer_config.json (the tokenizer transformers
// makes of them: convert_slow_tokenizer's BertConverter).
#ifndef ATTN_TOKENIZERS_PIPELINE_LOADING_H_
#define ATTN_TOKENIZERS_PIPELINE_LOADING_H_

#include <memory>
#include <string>

#include "attn/tokenizer.h"
#include "tokenizers/json_fields.h"

namespace attn {

// `document` is tokenizer.json (at `path`), its model a "WordPiece" or "Unigram" one;
// an empty `tokenizer_config` means none.
std::unique_ptr<Tokenizer> load_pipeline_tokenizer_json(const Json& document, const std::string& path,
                                                        const std::string& model_type,
                                                        const std::string& tokenizer_config);
std::unique_ptr<Tokenizer> load_bert_vocab_txt(const std::string& vocab_txt, const std::string& tokenizer_config);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PIPELINE_LOADING_H_

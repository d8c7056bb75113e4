// The door every model comes in by, whatever its format and architecture: attn's own model
// file (attn/model_file.h) or a Hugging Face checkpoint, whose config.json names its
// architecture (src/arch/: one file each, and the registry that finds them).
#ifndef ATTN_LOAD_MODEL_H_
#define ATTN_LOAD_MODEL_H_

#include <string>

#include "attn/model_file.h"

namespace attn {

// The formats a model comes in.
enum class ModelFormat {
  ModelFile,          // attn's JSON model file (docs/model-file.md), or "-" for standard input
  HuggingFaceFolder,  // a folder with config.json, safetensors and the tokenizer's files (docs/real-models.md)
};
// Which format `source` is, from what is there: a folder holding config.json, else a model
// file (whose reader names what it found, a folder without config.json say).
ModelFormat model_format_of(const std::string& source);

// The one door: loads `source` whatever its format, then checks the loaded description (the
// run's memory against options.max_memory_bytes, the input against the vocabulary) the same
// way for every format.
LoadedModel load_model(const std::string& source, const LoadOptions& options = {});

// A Hugging Face checkpoint, a folder or a Hub name found offline (--model): its weights
// (load_hf_model, estimated from config.json against options.max_memory_bytes before any is
// read) and its tokenizer (load_tokenizer), the embedding's rows named by the tokenizer's
// pieces ("<row N>" past them), Model::checkpoint saying where it came from. No input: a
// text is encoded by replace_source_text.
LoadedModel load_checkpoint(const std::string& source, const LoadOptions& options = {});

}  // namespace attn

#endif  // ATTN_LOAD_MODEL_H_

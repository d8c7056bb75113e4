// A Hugging Face checkpoint (a folder, or a Hub name in the local cache) as attn's Model:
// config.json gives the hyper-parameters, the safetensors weights become the Model's
// tensors in attn's X @ W layout, as the file of the architecture config.json names says
// (src/arch/family.h: the registry of the architectures attn reads).
//
// Everything is checked before any weight is read: the config, the memory the model will
// take (from the config, against --max-memory), every safetensors header, and that each
// tensor the architecture needs is there with its dtype and shape. Then the weights are
// checked finite and widened to float64 (exact: every stored F32, F16, BF16 value is a
// float64 value); with options.weights_as_stored the matrices stay in the mapped files
// instead (Tensor::stored), widened as the steps read them, and only the vectors and the
// learned positions are widened.
#ifndef ATTN_ARCH_CHECKPOINT_H_
#define ATTN_ARCH_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/model_file.h"

namespace attn {

struct CheckpointModel {
  Model model;                             // weights and hyper-parameters; no vocabulary and no input (the tokenizer's)
  std::string folder;                      // where the files were found (a Hub name's snapshot folder)
  std::string architecture;                // config.json's, "GPT2LMHeadModel"
  std::size_t vocab_size = 0;              // rows of the embedding (may exceed the tokenizer's tokens)
  std::size_t max_positions = 0;           // n_positions or max_position_embeddings
  std::vector<std::size_t> eos_token_ids;  // generation_config.json's, else config.json's
  std::optional<std::size_t> decoder_start_id;  // an encoder-decoder's decoder_start_token_id
  std::vector<std::size_t> never_generated;     // bad_words_ids of one token
  std::uint64_t reading_bytes = 0;              // the weights files' reading (CheckpointSource's)
  // Which checkpoint tensor each weight is, by its parameter path (parameter_name,
  // attn/trace.h): "decoder.0.self_attention.W_q" -> "h.0.attn.c_attn.weight[:, 0:768]",
  // "decoder.0.self_attention.W_k" -> "model.layers.0.self_attn.k_proj.weight.T".
  std::map<std::string, std::string> checkpoint_names;
};

// `source` is a folder or a Hub name (checkpoint/locate.h: HF_HUB_CACHE, HF_HOME, HOME).
// InputError (one line, naming the file and the field or tensor) for anything that cannot
// be read; options.max_memory_bytes (0: half the machine's memory) bounds the weights.
CheckpointModel load_hf_model(const std::string& source, const LoadOptions& options = {});

}  // namespace attn

#endif  // ATTN_ARCH_CHECKPOINT_H_

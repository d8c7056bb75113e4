// The architectures attn runs, one family of them per file (src/arch/<name>.cpp: GPT-2; the
// Llama family, whose members differ in their weights and configuration only), found
// through one registry (registry.cpp) by the name a checkpoint's config.json gives. Each file reads its
// configuration (config.json's fields, with its configuration class's defaults), maps its
// weights (the checkpoint's tensor names to attn's weights) and lays out its forward
// program. Nothing outside an architecture's file branches on which one a model is: code
// that needs a property of the model asks for the property.
#ifndef ATTN_ARCH_FAMILY_H_
#define ATTN_ARCH_FAMILY_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/hf_config_fields.h"
#include "model/hf_weights.h"

namespace attn {

// What an architecture reads from config.json: the hyper-parameters as attn's model file
// would say them (docs/model-file.md), and the sizes the loader needs.
struct Family;
struct CheckpointConfig {
  std::string file;      // the config.json read, for messages
  Json json;             // all of it: an architecture's weight map may read a field again
  std::string hf_class;  // its "architectures"[0]: which member of its family
  const Family* family = nullptr;
  ModelConfig model;
  std::size_t vocab_size = 0;          // V, rows of the embedding (may exceed the tokenizer's tokens)
  std::size_t num_layers = 0;          // its (decoder) layers
  std::size_t num_encoder_layers = 0;  // an encoder-decoder's encoder layers (Marian, BART); 0 for a decoder-only
  std::size_t decoder_d_ff = 0;        // its decoder's feed-forward width when it differs from model.d_ff's
  // An encoder-decoder's first decoder token (decoder_start_token_id), and the tokens
  // generation never picks (bad_words_ids of one token each).
  std::optional<std::size_t> decoder_start_id;
  std::vector<std::size_t> never_generated;
  std::size_t max_positions = 0;  // the positions it was made for (a learned table's rows)
  bool tie_word_embeddings = false;
  const char* layers_field = "num_hidden_layers";  // the field a refusal of its size names
  // Where generation stops: generation_config.json's eos_token_id, else config.json's.
  std::vector<std::size_t> eos_token_ids;

  ConfigFields fields() const { return ConfigFields(json, file); }
};

// Reads `folder`/config.json (and generation_config.json) as the file of the architecture
// it names reads it: InputError naming the file and the field for anything it cannot use,
// an architecture attn does not read among them (naming the ones it does).
CheckpointConfig read_checkpoint_config(const std::string& folder);

// A registry row: one architecture file.
struct Family {
  const char* name;                     // "gpt2": how the docs and messages call it
  std::vector<std::string> hf_classes;  // config.json's "architectures": "GPT2LMHeadModel"
  // config.json's fields (`hf_class` the class it names) -> the hyper-parameters;
  // InputError naming the field for a missing or unusable one.
  CheckpointConfig (*read_config)(const ConfigFields& fields, const std::string& hf_class);
  // Makes `model`'s layers and head and plans the read of each of its weights from the
  // checkpoint's tensors; the loader checks the plan whole, then reads it.
  void (*map_weights)(const CheckpointConfig& config, const CheckpointFiles& files, Model& model, WeightPlanner& plan);
  // What a checkpoint of the family may hold that it does not read (old buffers, a tied
  // head's stored copy) and how its tensors name their layer: every other tensor of the
  // files must be read (check_every_tensor_used, model/hf_weights.h).
  KnownTensors (*known_tensors)(const CheckpointConfig& config, const CheckpointFiles& files);
  ForwardProgram forward;  // its forward program
};

// Every architecture of the registry, in its order.
const std::vector<Family>& families();
// The architecture config.json calls `hf_class`, or nullptr.
const Family* find_family(const std::string& hf_class);
// The classes attn reads, for messages: "GPT2LMHeadModel, LlamaForCausalLM, ...".
std::string supported_classes();

}  // namespace attn

#endif  // ATTN_ARCH_FAMILY_H_

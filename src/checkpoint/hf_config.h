// A Hugging Face model's config.json (and generation_config.json) as plain numbers: every
// field the supported architectures' modeling code reads, checked, with the defaults of
// their configuration classes (transformers' GPT2Config, LlamaConfig, MistralConfig,
// Qwen2Config, Qwen3Config) where a field is absent. Fields that would change the
// computation in a way attn does not implement are refused by name.
#ifndef ATTN_CHECKPOINT_HF_CONFIG_H_
#define ATTN_CHECKPOINT_HF_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// Which modeling code the checkpoint obeys (Mistral without a sliding window is Llama's).
enum class HfFamily { Gpt2, Llama, Qwen2, Qwen3 };

// The architectures attn reads, as config.json names them, for messages.
extern const char* const kSupportedArchitectures;

// rope_scaling {"rope_type": "llama3", ...}: Llama 3.1/3.2's adjustment of RoPE's frequencies.
struct RopeLlama3 {
  double factor = 0, low_freq_factor = 0, high_freq_factor = 0;
  std::size_t original_max_position_embeddings = 0;
};

struct HfConfig {
  std::string file;          // the config.json read, for messages
  std::string architecture;  // "GPT2LMHeadModel", ...
  HfFamily family = HfFamily::Gpt2;

  std::size_t vocab_size = 0;         // V, rows of the embedding
  std::size_t hidden_size = 0;        // N
  std::size_t num_layers = 0;         // decoder layers
  std::size_t num_heads = 0;          // H
  std::size_t num_kv_heads = 0;       // G (= H for GPT-2)
  std::size_t head_dim = 0;           // d
  std::size_t intermediate_size = 0;  // F
  std::size_t max_positions = 0;      // GPT-2's n_positions (rows of wpe); max_position_embeddings
  double norm_eps = 0;                // layer_norm_epsilon or rms_norm_eps
  std::string activation;             // activation_function or hidden_act, as written
  bool tie_word_embeddings = false;   // the head reuses the embedding
  bool attention_bias = false;        // biases on q, k, v and o (Llama, Qwen3 attention_bias)
  bool qkv_bias = false;              // biases on q, k and v only (Qwen2)
  double rope_theta = 10000;
  bool rope_llama3 = false;
  RopeLlama3 llama3;
  // Where generation stops: generation_config.json's eos_token_id when it has one, else
  // config.json's (an integer or a list; empty when neither says).
  std::vector<std::size_t> eos_token_ids;
};

// Reads `folder`/config.json and, when present, `folder`/generation_config.json.
// InputError naming the file and the field: missing or mistyped fields, sizes that do not
// fit together (heads not dividing the width, key/value heads not dividing the heads),
// sizes out of range (vocab_size over 2^24), an architecture attn does not read (naming it
// and the ones it does), a rope_scaling other than null or "llama3", a sliding window.
HfConfig read_hf_config(const std::string& folder);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_HF_CONFIG_H_

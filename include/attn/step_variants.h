// Which variant of a step a model uses. The steps take these; the model file names them
// (docs/model-file.md).
#ifndef ATTN_STEP_VARIANTS_H_
#define ATTN_STEP_VARIANTS_H_

namespace attn {

// The feed-forward network's non-linearity (steps/feed_forward.h): ReLU, GELU (erf),
// GELU's tanh approximation (GPT-2), or SwiGLU's gated SiLU (Llama; a third matrix W_3).
enum class Activation { ReLU, GELU, GELUTanh, SwiGLU };

// The normalization of every norm of the model (steps/layer_norm.h): LayerNorm (mean and
// variance, gamma and beta) or RMSNorm (root mean square, gamma only).
enum class Norm { LayerNorm, RMSNorm };

// What marks each position (steps/positional_encoding.h): added to the embeddings
// (sinusoidal, learned), nothing, or RoPE, which rotates the queries and keys of every
// self-attention head instead.
enum class PositionalEncoding { Sinusoidal, Learned, None, RoPE };

// Llama 3.1's adjustment of RoPE's frequencies (model.rope_scaling, rope_type "llama3"; the
// fields of config.json's rope_scaling): the slow pairs turn `factor` times slower, the fast
// ones as before, those between move smoothly from one to the other.
struct RopeScaling {
  bool llama3 = false;  // off: RoPE's own frequencies
  double factor = 8.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  double original_max_position_embeddings = 8192.0;  // L: the context the model was trained on
};

}  // namespace attn

#endif  // ATTN_STEP_VARIANTS_H_

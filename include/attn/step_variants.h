// Which variant of a step a model uses. The steps take these; the model file names them
// (docs/model-file.md).
#ifndef ATTN_STEP_VARIANTS_H_
#define ATTN_STEP_VARIANTS_H_

namespace attn {

// The feed-forward network's non-linearity (steps/feed_forward.h): ReLU, GELU (erf),
// GELU's tanh approximation (GPT-2), SwiGLU's gated SiLU (Llama; a third matrix W_3),
// GeGLU's gate through GELU's tanh form (Gemma; W_3 likewise), or SiLU alone, x·σ(x)
// (Marian's "swish": no gate, no third matrix).
enum class Activation { ReLU, GELU, GELUTanh, SwiGLU, GeGLUTanh, SiLU };

// Whether the activation gates an up projection (W_3) with the activated gate (W_1).
inline bool gated(Activation activation) {
  return activation == Activation::SwiGLU || activation == Activation::GeGLUTanh;
}

// The normalization of every norm of the model (steps/layer_norm.h): LayerNorm (mean and
// variance, gamma and beta), RMSNorm (root mean square, gamma only), or RMSNorm scaling by
// 1 + gamma (Gemma's: its stored gamma is the gain's distance from 1).
enum class Norm { LayerNorm, RMSNorm, RMSNormPlusOne };

// Whether the norm divides by the root mean square (no mean, no beta).
inline bool root_mean_square(Norm norm) { return norm != Norm::LayerNorm; }

// What the scores are scaled by before the softmax (steps/attention.h): 1/sqrt(d), the
// paper's, or nothing (GPT-Neo's scores go to the softmax as the product gives them).
enum class ScoreScale { InverseSqrtHead, None };

// What marks each position (steps/positional_encoding.h): added to the embeddings
// (sinusoidal, learned), nothing, or RoPE, which rotates the queries and keys of every
// self-attention head instead. SinusoidalTable: sinusoids too, but read by row from a fixed
// table the model holds (Model::positions), as Marian stores them: the sines in the first
// half of the dimensions, the cosines in the second, rounded to float32; not learned.
enum class PositionalEncoding { Sinusoidal, Learned, None, RoPE, SinusoidalTable };

// Whether the positions are rows of the model's table (Model::positions): learned ones, or
// Marian's fixed sinusoids. A position past its rows cannot be read.
inline bool reads_position_table(PositionalEncoding p) {
  return p == PositionalEncoding::Learned || p == PositionalEncoding::SinusoidalTable;
}

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

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

}  // namespace attn

#endif  // ATTN_STEP_VARIANTS_H_

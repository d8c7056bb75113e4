// Which variant of a step a model uses. The steps take these; the model file names them
// (docs/model-file.md).
#ifndef ATTN_STEP_VARIANTS_H_
#define ATTN_STEP_VARIANTS_H_

namespace attn {

// The feed-forward network's non-linearity (steps/feed_forward.h).
enum class Activation { ReLU, GELU };

// What is added to the embeddings to mark each position (steps/positional_encoding.h).
enum class PositionalEncoding { Sinusoidal, Learned, None };

}  // namespace attn

#endif  // ATTN_STEP_VARIANTS_H_

// The model a run uses: hyper-parameters, the input and every weight, resolved from the
// JSON file ("randn" drawn, "identity" built, shapes checked). Everything the forward
// pass reads is here; nothing here is computed by the forward pass.
#ifndef ATTN_MODEL_H_
#define ATTN_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace attn {

struct ModelConfig {
  std::size_t d_model = 0;    // N
  std::size_t num_heads = 0;  // H
  std::size_t d_head = 0;     // d, default N / H
  bool causal = false;        // mask future positions in encoder self-attention
  std::uint32_t seed = 0;     // for "randn" values, as np.random.seed(seed)
};

// One head's own projections, as seed 002 writes them: each (N, d).
struct HeadWeights {
  Tensor W_q, W_k, W_v;
};

// Multi-head attention weights, used as X @ W (not PyTorch's x @ W.T).
struct AttentionWeights {
  Tensor W_q, W_k, W_v;        // (N, H*d): the heads' matrices side by side
  Tensor W_o;                  // (H*d, N), or empty: no output projection
  Tensor b_q, b_k, b_v;        // (H*d,), or empty
  Tensor b_o;                  // (N,), or empty
  std::vector<HeadWeights> heads;  // non-empty when the file gave per-head matrices

  bool has_output_projection() const { return !W_o.data.empty(); }
};

struct EncoderLayerWeights {
  AttentionWeights attention;
};

struct Model {
  std::string source;        // file name for messages ("model.json", "<default model>")
  ModelConfig config;
  bool batched = true;       // false when the input was (S, N): print without B
  Tensor input;              // (B, S, N)
  std::vector<EncoderLayerWeights> encoder;
};

}  // namespace attn

#endif  // ATTN_MODEL_H_

#include "steps/output_head.h"

#include "core/require.h"
#include "core/shape_only.h"
#include "steps/feed_forward.h"

namespace attn {

Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b) {
  // x is (B,T,N), W is (N,V), b is (V,) -> (B,T,V)
  return linear_projection(x, W, b, "V");
}

ProjectionGradients vocabulary_logits_backward(const Tensor& x, const Tensor& W, bool has_b, const Tensor& dlogits) {
  // x is (B,T,N), W is (N,V), dlogits is (B,T,V) -> dx (B,T,N), dW (N,V), db (V,)
  return linear_projection_backward(x, W, has_b, dlogits);
}

Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding, const Tensor& b) {
  // x is (B,T,N), embedding is (V,N), b is (V,) or empty -> x @ embedding^T (+ b) is (B,T,V)
  require(x.rank() == 3 && embedding.rank() == 2 && embedding.shape[1] == x.shape[2],
          "tied_vocabulary_logits: x (B,T,N), embedding (V,N)");
  const std::size_t rows = x.shape[0] * x.shape[1], N = x.shape[2], V = embedding.shape[0];
  if (shapes_only()) return shape_only({x.shape[0], x.shape[1], V}, {x.axes[0], x.axes[1], "V"});
  Tensor out = Tensor::uninitialized({x.shape[0], x.shape[1], V}, {x.axes[0], x.axes[1], "V"});  // all written below
  // embedding^T read where the table lies, never copied (a copy of GPT-2's is 309 MB, made
  // once per generated token): the same sums in the same order as x @ (a transposed copy)
  if (embedding.stored)  // a checkpoint's table where it lies, widened as read
    matmul(x.data.data(), embedding.stored->transpose(), out.data.data(), rows, N, V);
  else
    matmul_transposed(x.data.data(), embedding.data.data(), Transposed::B, out.data.data(), rows, N, V);
  return b.data.empty() ? out : add_bias(out, b);
}

Tensor head_transform(const Tensor& x, const Tensor& W, const Tensor& b, Activation activation) {
  // x is (B,T,N), W is (N,N), b is (N,) -> act(x @ W + b) is (B,T,N): the feed-forward's first
  // layer, N wide
  Tensor y = feed_forward_hidden(x, W, b, activation);
  y.axes.back() = "N";
  return y;
}

ProjectionGradients head_transform_backward(const Tensor& x, const Tensor& W, const Tensor& b, Activation activation,
                                            const Tensor& y, const Tensor& dy) {
  // x, y, dy are (B,T,N), W is (N,N) -> dx (B,T,N), dW (N,N), db (N,)
  return feed_forward_hidden_backward(x, W, b, activation, y, dy);
}

Tensor tied_vocabulary_logits_backward(const Tensor& x, const Tensor& embedding, const Tensor& dlogits,
                                       Tensor& dembedding) {
  // x is (B,T,N), embedding is (V,N), dlogits is (B,T,V) -> dx (B,T,N); dembedding (V,N) += dlogitsᵀ @ x
  require(x.rank() == 3 && embedding.rank() == 2 && dlogits.rank() == 3 && dembedding.shape == embedding.shape,
          "tied_vocabulary_logits_backward: x (B,T,N), embedding (V,N), dlogits (B,T,V)");
  const std::size_t rows = x.shape[0] * x.shape[1], N = x.shape[2], V = embedding.shape[0];
  require(embedding.shape[1] == N && dlogits.shape[2] == V && dlogits.size() == rows * V,
          "tied_vocabulary_logits_backward: shapes differ");
  // dx = dlogits @ E: (B*T,V) @ (V,N)
  Tensor dx = linear_projection(dlogits, embedding, Tensor(), x.axes[2]);
  // dE += dlogitsᵀ @ x: (V,B*T) @ (B*T,N)
  Tensor share = Tensor::uninitialized(embedding.shape, embedding.axes);  // every element is written below
  matmul_transposed(dlogits.data.data(), x.data.data(), Transposed::A, share.data.data(), V, rows, N);
  for (std::size_t i = 0; i < share.size(); ++i) dembedding.data[i] += share.data[i];
  return dx;
}

}  // namespace attn

#include "steps/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/require.h"
#include "core/shape_only.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"
#include "kernels/rows.h"
#include "steps/projection.h"

namespace attn {

namespace {

// a is (...,M,K), b is (...,K,P) with the same leading axes -> a @ b is (...,M,P): one
// (M,K) @ (K,P) product per head and batch item. For the backward pass an operand may be
// stored transposed (t.a: a is (...,K,M); t.b: b is (...,P,K)), never both.
Tensor batched_matmul(const Tensor& a, const Tensor& b, AxisNames out_axes, Transposes t = {}) {
  // a is (...,M,K), b is (...,K,P) -> (...,M,P)
  const std::size_t rank = a.rank();
  require(rank >= 2 && b.rank() == rank, "batched_matmul: ranks differ");
  for (std::size_t i = 0; i + 2 < rank; ++i) require(a.shape[i] == b.shape[i], "batched_matmul: batch axes differ");
  const std::size_t M = a.shape[rank - (t.a ? 1 : 2)], K = a.shape[rank - (t.a ? 2 : 1)];
  const std::size_t P = b.shape[rank - (t.b ? 2 : 1)], b_inner = b.shape[rank - (t.b ? 1 : 2)];
  require(b_inner == K, fmt::format("batched_matmul: inner sizes differ ({} vs {})", K, b_inner));
  Shape out_shape(a.shape.begin(), a.shape.end() - 2);
  out_shape.push_back(M);
  out_shape.push_back(P);
  if (shapes_only()) return shape_only(std::move(out_shape), std::move(out_axes));
  Tensor out = Tensor::uninitialized(out_shape, std::move(out_axes));  // every element is written below
  const std::size_t batches = element_count(Shape(a.shape.begin(), a.shape.end() - 2));
  const double* A = a.data.data();
  const double* Bm = b.data.data();
  double* C = out.data.data();
  const bool transposed = t.a || t.b;
  if (M * K * P < kExactMaxElements) {
    for (std::size_t i = 0; i < batches; ++i)
      if (transposed)
        matmul_transposed(A + i * M * K, Bm + i * K * P, t.a ? Transposed::A : Transposed::B, C + i * M * P, M, K, P);
      else
        matmul(A + i * M * K, Bm + i * K * P, C + i * M * P, M, K, P);
  } else if (transposed) {
    batched_matmul_transposed_fast(A, Bm, t, C, batches, M, K, P);
  } else {
    batched_matmul_fast(A, Bm, C, batches, M, K, P);
  }
  return out;
}

// x and y are one row of T scores and weights -> y = exp(x - max) / sum; returns whether
// every key was masked (all -inf), when y is all zero. NumPy's exp(x - max) / sum, with the
// row sum in NumPy's pairwise order and glibc's exp, which is NumPy's own on a machine
// without AVX-512: the numbers match NumPy bit for bit.
bool softmax_row(const double* x, double* y, std::size_t T) {
  // x is (T,) -> y is (T,)
  double max = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < T; ++j) max = std::max(max, x[j]);
  if (max == -std::numeric_limits<double>::infinity()) {
    // Every key is masked: softmax would be 0/0. Policy: attend to nothing.
    for (std::size_t j = 0; j < T; ++j) y[j] = 0.0;
    return true;
  }
  for (std::size_t j = 0; j < T; ++j) y[j] = std::exp(x[j] - max);
  const double sum = pairwise_sum(y, T);
  for (std::size_t j = 0; j < T; ++j) y[j] /= sum;
  return false;
}

// Whether mask is (B,S,T), one per batch item, rather than (S,T) for all; requires one of
// the two for scores (B,H,S,T).
bool mask_per_batch(const Tensor& scores, const Tensor& mask) {
  require(scores.rank() == 4, "apply_mask: scores must be (B,H,S,T)");
  const std::size_t B = scores.shape[0], S = scores.shape[2], T = scores.shape[3];
  const bool per_batch = mask.rank() == 3;
  require((mask.rank() == 2 && mask.shape[0] == S && mask.shape[1] == T) ||
              (per_batch && mask.shape[0] == B && mask.shape[1] == S && mask.shape[2] == T),
          "apply_mask: mask must be (S,T) or (B,S,T)");
  return per_batch;
}

}  // namespace

Tensor split_heads_reshape(const Tensor& x, std::size_t num_heads) {
  // x is (B,S,H*d) -> (B,S,H,d)
  require(x.rank() == 3 && num_heads > 0 && x.shape[2] % num_heads == 0,
          "split_heads: the last axis must be a multiple of the number of heads");
  const std::size_t d = x.shape[2] / num_heads;
  return reshaped(x, {x.shape[0], x.shape[1], num_heads, d}, {x.axes[0], x.axes[1], "H", "d"});
}

Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  // x is (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
  return transposed(split_heads_reshape(x, num_heads), {0, 2, 1, 3});
}

Tensor split_heads_backward(const Tensor& dheads) {
  // dheads is (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  return merge_heads(dheads);
}

Tensor repeat_kv_heads(const Tensor& kv, std::size_t num_heads) {
  // kv is (B,G,T,d) -> (B,H,T,d), head h = kv head h / (H/G)
  require(kv.rank() == 4 && kv.shape[1] > 0 && num_heads % kv.shape[1] == 0,
          "repeat_kv_heads: kv must be (B,G,T,d) with G dividing H");
  const std::size_t B = kv.shape[0], G = kv.shape[1], block = kv.shape[2] * kv.shape[3], r = num_heads / G;
  if (shapes_only())
    return shape_only({B, num_heads, kv.shape[2], kv.shape[3]}, {kv.axes[0], "H", kv.axes[2], kv.axes[3]});
  Tensor out =
      Tensor::uninitialized({B, num_heads, kv.shape[2], kv.shape[3]}, {kv.axes[0], "H", kv.axes[2], kv.axes[3]});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < num_heads; ++h)
      std::copy_n(kv.data.data() + (b * G + h / r) * block, block, out.data.data() + (b * num_heads + h) * block);
  return out;
}

Tensor repeat_kv_heads_backward(const Tensor& drepeated, std::size_t num_kv_heads) {
  // drepeated is (B,H,T,d) -> (B,G,T,d), the r copies of each kv head summed in head order
  require(drepeated.rank() == 4 && num_kv_heads > 0 && drepeated.shape[1] % num_kv_heads == 0,
          "repeat_kv_heads_backward: drepeated must be (B,H,T,d) with G dividing H");
  const std::size_t B = drepeated.shape[0], H = drepeated.shape[1], block = drepeated.shape[2] * drepeated.shape[3];
  const std::size_t r = H / num_kv_heads;
  Tensor out({B, num_kv_heads, drepeated.shape[2], drepeated.shape[3]},
             {drepeated.axes[0], "G", drepeated.axes[2], drepeated.axes[3]});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const double* from = drepeated.data.data() + (b * H + h) * block;
      double* to = out.data.data() + (b * num_kv_heads + h / r) * block;
      for (std::size_t i = 0; i < block; ++i) to[i] += from[i];
    }
  return out;
}

Tensor transpose_keys(const Tensor& k) {
  // k is (B,H,T,d) -> (B,H,d,T)
  require(k.rank() == 4, "transpose_keys: k must be (B,H,T,d)");
  return transposed(k, {0, 1, 3, 2});
}

Tensor transpose_keys_backward(const Tensor& dk_t) {
  // dk_t is (B,H,d,T) -> (B,H,T,d)
  require(dk_t.rank() == 4, "transpose_keys_backward: dk_t must be (B,H,d,T)");
  return transposed(dk_t, {0, 1, 3, 2});
}

Tensor attention_scores(const Tensor& q, const Tensor& k_t) {
  // q is (B,H,S,d), k_t is (B,H,d,T) -> (B,H,S,T)
  require(q.rank() == 4 && k_t.rank() == 4, "attention_scores: q and k_t must be rank 4");
  return batched_matmul(q, k_t, {q.axes[0], q.axes[1], q.axes[2], k_t.axes[3]});
}

ProductGradients attention_scores_backward(const Tensor& q, const Tensor& k_t, const Tensor& dscores) {
  // q is (B,H,S,d), k_t is (B,H,d,T), dscores is (B,H,S,T) -> dq (B,H,S,d), dk_t (B,H,d,T)
  require(q.rank() == 4 && k_t.rank() == 4 && dscores.rank() == 4, "attention_scores_backward: rank 4 tensors");
  ProductGradients g;
  // dq = dscores @ k_tᵀ: (B,H,S,T) @ (B,H,T,d)
  g.da = batched_matmul(dscores, k_t, q.axes, Transposes{false, true});
  // dk_t = qᵀ @ dscores: (B,H,d,S) @ (B,H,S,T)
  g.db = batched_matmul(q, dscores, k_t.axes, Transposes{true, false});
  return g;
}

namespace {

// How scale_scores scales: scores · factor, or scores / factor when divide.
struct Scaling {
  double factor;
  bool divide;
};

Scaling scaling_of(std::size_t d_head, bool times_inverse_root) {
  // transformers' eager attention: attn_weights * scaling, scaling = head_dim ** -0.5
  // (Python's float power, C's pow)
  if (times_inverse_root) return {std::pow(static_cast<double>(d_head), -0.5), false};
  // Divide (not multiply by 1/sqrt(d)) so values match NumPy's scores / np.sqrt(d), except
  // when sqrt(d) is a power of two (d = 4, 16, 64, 256): then 1/sqrt(d) is exact and x / s
  // and x * (1/s) are the same correctly rounded number, and a product takes a fraction of
  // a division's time (at 2048 tokens the divisions, not memory, bounded this step).
  const double scale = std::sqrt(static_cast<double>(d_head));
  int exponent = 0;
  if (std::frexp(scale, &exponent) == 0.5) return {1.0 / scale, false};
  return {scale, true};
}

}  // namespace

Tensor scale_scores(const Tensor& scores, std::size_t d_head, bool times_inverse_root) {
  // scores is (B,H,S,T) -> (B,H,S,T)
  if (shapes_only()) return shape_only(scores.shape, scores.axes);
  Tensor out = Tensor::uninitialized(scores.shape, scores.axes);  // every element is written below
  const Scaling scaling = scaling_of(d_head, times_inverse_root);
  const double* in = scores.data.data();
  double* o = out.data.data();
  for_each_range(out.size(), [&](std::size_t begin, std::size_t end) {
    if (scaling.divide)
      for (std::size_t i = begin; i < end; ++i) o[i] = in[i] / scaling.factor;
    else
      for (std::size_t i = begin; i < end; ++i) o[i] = in[i] * scaling.factor;
  });
  return out;
}

Tensor scale_scores_backward(const Tensor& dscaled, std::size_t d_head, bool times_inverse_root) {
  // dscaled is (B,H,S,T) -> (B,H,S,T): scaled = scores / √d (or scores · d^-0.5), so
  // dscores = dscaled / √d (dscaled · d^-0.5)
  return scale_scores(dscaled, d_head, times_inverse_root);
}

Tensor scale_scores(const Tensor& scores, std::size_t d_head, ScoreScale scale, bool times_inverse_root) {
  // scores is (B,H,S,T) -> (B,H,S,T)
  return scale == ScoreScale::None ? scores : scale_scores(scores, d_head, times_inverse_root);
}

Tensor scale_scores_backward(const Tensor& dscaled, std::size_t d_head, ScoreScale scale, bool times_inverse_root) {
  // dscaled is (B,H,S,T) -> (B,H,S,T)
  return scale == ScoreScale::None ? dscaled : scale_scores_backward(dscaled, d_head, times_inverse_root);
}

Tensor apply_mask(const Tensor& scores, const Tensor& mask) {
  // scores is (B,H,S,T), mask is (S,T) or (B,S,T) -> (B,H,S,T)
  const bool per_batch = mask_per_batch(scores, mask);
  const std::size_t B = scores.shape[0], H = scores.shape[1], S = scores.shape[2], T = scores.shape[3];
  if (shapes_only()) return shape_only(scores.shape, scores.axes);
  Tensor out = Tensor::uninitialized(scores.shape, scores.axes);  // every element is written below
  const std::size_t block = S * T;
  for (std::size_t bh = 0; bh < B * H; ++bh) {
    const double* in = scores.data.data() + bh * block;
    const double* m = mask.data.data() + (per_batch ? (bh / H) * block : 0);
    double* o = out.data.data() + bh * block;
    for (std::size_t i = 0; i < block; ++i) o[i] = in[i] + m[i];
  }
  return out;
}

Tensor apply_mask_backward(const Tensor& dmasked, const Tensor& mask) {
  // dmasked is (B,H,S,T), mask is (S,T) or (B,S,T) -> (B,H,S,T)
  require(dmasked.rank() == 4 &&
              mask.size() * (mask.rank() == 2 ? dmasked.shape[0] : 1) * dmasked.shape[1] == dmasked.size(),
          "apply_mask_backward: mask must be (S,T) or (B,S,T)");
  const std::size_t H = dmasked.shape[1], block = dmasked.shape[2] * dmasked.shape[3];
  const bool per_batch = mask.rank() == 3;
  Tensor out = Tensor::uninitialized(dmasked.shape, dmasked.axes);  // every element is written below
  for (std::size_t bh = 0; bh < dmasked.size() / block; ++bh) {
    const double* d = dmasked.data.data() + bh * block;
    const double* m = mask.data.data() + (per_batch ? (bh / H) * block : 0);
    double* o = out.data.data() + bh * block;
    for (std::size_t i = 0; i < block; ++i) o[i] = std::isinf(m[i]) ? 0.0 : d[i];
  }
  return out;
}

Tensor softmax_rows(const Tensor& scores, std::size_t* fully_masked_rows) {
  // scores is (...,T) -> weights (...,T), each row summing to 1 (or all zero when fully masked)
  require(scores.rank() >= 1, "softmax_rows: needs at least one axis");
  if (fully_masked_rows) *fully_masked_rows = 0;
  if (shapes_only()) return shape_only(scores.shape, scores.axes);
  Tensor out = Tensor::uninitialized(scores.shape, scores.axes);  // every element is written below
  const std::size_t T = scores.shape.back();
  const std::size_t rows = T == 0 ? 0 : scores.size() / T;
  const double* x = scores.data.data();
  double* y = out.data.data();
  std::size_t masked = 0;
  if (scores.size() < kExactMaxElements) {
    for (std::size_t r = 0; r < rows; ++r) masked += softmax_row(x + r * T, y + r * T, T) ? 1 : 0;
  } else {
    masked = softmax_rows_fast(x, y, rows, T);  // the same, with a vectorized exp (kernels/rows.h)
  }
  if (fully_masked_rows) *fully_masked_rows = masked;
  return out;
}

ScoresToWeights scores_to_weights(const Tensor& scores, const Tensor* mask, std::size_t d_head, ScoreScale scale,
                                  bool times_inverse_root, bool keep_scaled) {
  // scores is (B,H,S,T), mask is (S,T) or (B,S,T) or none -> scaled, masked, weights (B,H,S,T)
  ScoresToWeights out;
  if (shapes_only() || scores.size() < kExactMaxElements) {
    out.scaled = scale_scores(scores, d_head, scale, times_inverse_root);
    if (mask) out.masked = apply_mask(out.scaled, *mask);
    out.weights = softmax_rows(mask ? out.masked : out.scaled, &out.fully_masked_rows);
    return out;
  }
  ScoreRowsJob job;
  if (mask) job.per_batch = mask_per_batch(scores, *mask);
  require(scores.rank() == 4, "scores_to_weights: scores must be (B,H,S,T)");
  // every element of the three is written by the pass; the scaled and masked scores only
  // when kept (Eigen's softmax reads them after it)
  keep_scaled = keep_scaled || chosen_product_kernel() == ProductKernel::eigen;
  out.scaled = keep_scaled ? Tensor::uninitialized(scores.shape, scores.axes) : shape_only(scores.shape, scores.axes);
  if (mask)
    out.masked = keep_scaled ? Tensor::uninitialized(scores.shape, scores.axes) : shape_only(scores.shape, scores.axes);
  out.weights = Tensor::uninitialized(scores.shape, scores.axes);
  const Scaling scaling = scale == ScoreScale::None ? Scaling{1.0, false} : scaling_of(d_head, times_inverse_root);
  job.scores = scores.data.data();
  job.mask = mask ? mask->data.data() : nullptr;
  job.T = scores.shape[3];
  job.S = scores.shape[2];
  job.H = scores.shape[1];
  job.rows = scores.size() / job.T;
  job.factor = scaling.factor;
  job.divide = scaling.divide;
  job.scaled = keep_scaled ? out.scaled.data.data() : nullptr;
  job.masked = mask && keep_scaled ? out.masked.data.data() : nullptr;
  job.weights = out.weights.data.data();
  const ScoreRowsSeen seen = scores_to_weights_fast(job);
  out.fully_masked_rows = seen.fully_masked;
  out.scores_checked = seen.scores_finite;
  out.masked_checked = seen.masked_finite;
  return out;
}

Tensor softmax_rows_backward(const Tensor& weights, const Tensor& dweights) {
  // weights and dweights are (...,T) -> (...,T)
  require(weights.shape == dweights.shape && weights.rank() >= 1, "softmax_rows_backward: shapes differ");
  Tensor out = Tensor::uninitialized(weights.shape, weights.axes);  // every element is written below
  const std::size_t T = weights.shape.back();
  const std::size_t rows = T == 0 ? 0 : weights.size() / T;
  const double* w = weights.data.data();
  const double* dw = dweights.data.data();
  double* o = out.data.data();
  // Each row on its own (a row's result never depends on the thread that computes it).
  for_each_range(rows * T, [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = (begin + T - 1) / T; r < (end + T - 1) / T; ++r) {
      // dot = Σ_j dweights[j] · weights[j], summed in order of j
      double dot = 0.0;
      for (std::size_t j = 0; j < T; ++j) dot += dw[r * T + j] * w[r * T + j];
      for (std::size_t j = 0; j < T; ++j) o[r * T + j] = w[r * T + j] * (dw[r * T + j] - dot);
    }
  });
  return out;
}

Tensor attention_context(const Tensor& weights, const Tensor& v) {
  // weights is (B,H,S,T), v is (B,H,T,d) -> (B,H,S,d)
  require(weights.rank() == 4 && v.rank() == 4, "attention_context: weights and v must be rank 4");
  return batched_matmul(weights, v, {weights.axes[0], weights.axes[1], weights.axes[2], v.axes[3]});
}

Tensor ablate_heads(const Tensor& context, const std::vector<std::size_t>& heads, bool mean) {
  // context is (B,H,S,d) -> (B,H,S,d)
  require(context.rank() == 4, "ablate_heads: context must be (B,H,S,d)");
  const std::size_t B = context.shape[0], H = context.shape[1], S = context.shape[2], d = context.shape[3];
  if (shapes_only()) return shape_only(context.shape, context.axes);
  Tensor out = context;
  for (std::size_t h : heads) {
    require(h < H, "ablate_heads: head out of range");
    for (std::size_t b = 0; b < B; ++b) {
      double* rows = out.data.data() + (b * H + h) * S * d;  // (S,d)
      std::vector<double> replacement(d, 0.0);
      if (mean && S > 0) {
        for (std::size_t s = 0; s < S; ++s)
          for (std::size_t k = 0; k < d; ++k) replacement[k] += rows[s * d + k];
        for (double& v : replacement) v /= static_cast<double>(S);
      }
      for (std::size_t s = 0; s < S; ++s) std::copy(replacement.begin(), replacement.end(), rows + s * d);
    }
  }
  return out;
}

ProductGradients attention_context_backward(const Tensor& weights, const Tensor& v, const Tensor& dcontext) {
  // weights is (B,H,S,T), v is (B,H,T,d), dcontext is (B,H,S,d) -> dweights (B,H,S,T), dv (B,H,T,d)
  require(weights.rank() == 4 && v.rank() == 4 && dcontext.rank() == 4, "attention_context_backward: rank 4 tensors");
  ProductGradients g;
  // dweights = dcontext @ vᵀ: (B,H,S,d) @ (B,H,d,T)
  g.da = batched_matmul(dcontext, v, weights.axes, Transposes{false, true});
  // dv = weightsᵀ @ dcontext: (B,H,T,S) @ (B,H,S,d)
  g.db = batched_matmul(weights, dcontext, v.axes, Transposes{true, false});
  return g;
}

Tensor merge_heads_transpose(const Tensor& context) {
  // context is (B,H,S,d) -> (B,S,H,d)
  require(context.rank() == 4, "merge_heads: context must be (B,H,S,d)");
  return transposed(context, {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& context) {
  // context is (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  Tensor t = merge_heads_transpose(context);
  return reshaped(t, {t.shape[0], t.shape[1], t.shape[2] * t.shape[3]}, {t.axes[0], t.axes[1], "H*d"});
}

Tensor merge_heads_backward(const Tensor& dconcat, std::size_t num_heads) {
  // dconcat is (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
  return split_heads(dconcat, num_heads);
}

}  // namespace attn

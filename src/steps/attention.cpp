#include "steps/attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <Eigen/Dense>

#include "attn/error.h"
#include "kernels/matrix_kernel.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMatrix>;

void require(bool ok, const std::string& what) {
  if (!ok) throw InternalError(what);
}

// C = A @ B for row-major A (M,K), B (K,P), C (M,P). Small products (every walkthrough's)
// are summed the plain way, c_ij = sum over k of a_ik * b_kj in order of k, one rounding
// per multiply and per add: what a hand calculation does, what NumPy's reference BLAS
// does, and the same numbers on every CPU. Large ones go to Eigen's kernels, which use
// FMA and blocking on this machine and so differ in the last bits (matrix_kernel.cpp).
void matrix_product(const double* a, const double* b, double* c, std::size_t M, std::size_t K, std::size_t P) {
  if (M * K * P < kExactMaxElements) {
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < P; ++j) {
        double sum = 0.0;
        for (std::size_t k = 0; k < K; ++k) sum += a[i * K + k] * b[k * P + j];
        c[i * P + j] = sum;
      }
    return;
  }
  large_matrix_product(a, K, b, P, c, P, M, K, P);
}

// a is (..., M, K), b is (..., K, P) with the same leading axes -> (..., M, P).
Tensor batched_matmul(const Tensor& a, const Tensor& b, AxisNames out_axes) {
  const std::size_t rank = a.rank();
  require(rank >= 2 && b.rank() == rank, "batched_matmul: ranks differ");
  for (std::size_t i = 0; i + 2 < rank; ++i) require(a.shape[i] == b.shape[i], "batched_matmul: batch axes differ");
  const std::size_t M = a.shape[rank - 2], K = a.shape[rank - 1], P = b.shape[rank - 1];
  require(b.shape[rank - 2] == K, fmt::format("batched_matmul: inner sizes differ ({} vs {})", K, b.shape[rank - 2]));
  Shape out_shape(a.shape.begin(), a.shape.end() - 2);
  out_shape.push_back(M);
  out_shape.push_back(P);
  Tensor out = Tensor::uninitialized(out_shape, std::move(out_axes));  // every element is written below
  const std::size_t batches = element_count(Shape(a.shape.begin(), a.shape.end() - 2));
  // One (M,K) @ (K,P) product per head and batch item, the heads split over the threads;
  // inside a parallel region Eigen runs each product on one thread.
  const bool parallel = batches > 1 && M * K * P * batches >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (std::size_t i = 0; i < batches; ++i)
    matrix_product(a.data.data() + i * M * K, b.data.data() + i * K * P, out.data.data() + i * M * P, M, K, P);
  return out;
}

}  // namespace

Tensor linear_projection(const Tensor& x, const Tensor& W, const Tensor& b, const std::string& out_axis) {
  // x is (B,S,N), W is (N,M), b is (M,)
  require(x.rank() == 3 && W.rank() == 2, "linear_projection: x must be (B,S,N) and W (N,M)");
  const std::size_t B = x.shape[0], S = x.shape[1], N = x.shape[2], M = W.shape[1];
  require(W.shape[0] == N, "linear_projection: W rows must equal x's last axis");
  require(b.data.empty() || b.size() == M, "linear_projection: bias length must equal W's columns");
  Tensor out = Tensor::uninitialized({B, S, M}, {x.axes[0], x.axes[1], out_axis});  // every element is written below
  // One product for all positions: (B*S, N) @ (N, M). A large one is split into two
  // blocks of W's columns, one per thread, each an ordinary one-thread Eigen product:
  // Eigen's own parallel product synchronizes its threads inside every block of the
  // product and spent more time waiting than multiplying (a third of a base-size run,
  // measured with perf). Columns rather than rows: each thread packs only its half of W,
  // the larger operand (measured 5-20% faster than halves of the rows).
  const std::size_t rows = B * S;
  const bool parallel = M >= 16 && rows * N * M >= kParallelMinElements;
  if (!parallel) {
    matrix_product(x.data.data(), W.data.data(), out.data.data(), rows, N, M);
  } else {
#pragma omp parallel for num_threads(2) schedule(static, 1)
    for (std::size_t part = 0; part < 2; ++part) {
      const std::size_t first = M * part / 2, count = M * (part + 1) / 2 - first;
      large_matrix_product(x.data.data(), N, W.data.data() + first, M, out.data.data() + first, M, rows, N, count);
    }
  }
  if (!b.data.empty())
    MatrixMap(out.data.data(), static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(M)).rowwise() +=
        Eigen::Map<const Eigen::RowVectorXd>(b.data.data(), static_cast<Eigen::Index>(M));
  return out;
}

Tensor split_heads_reshape(const Tensor& x, std::size_t num_heads) {
  // x is (B,S,H*d) -> (B,S,H,d)
  require(x.rank() == 3 && num_heads > 0 && x.shape[2] % num_heads == 0,
          "split_heads: the last axis must be a multiple of the number of heads");
  const std::size_t d = x.shape[2] / num_heads;
  return reshaped(x, {x.shape[0], x.shape[1], num_heads, d}, {x.axes[0], x.axes[1], "H", "d"});
}

Tensor split_heads(const Tensor& x, std::size_t num_heads) {
  // (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
  return transposed(split_heads_reshape(x, num_heads), {0, 2, 1, 3});
}

Tensor transpose_keys(const Tensor& k) {
  // (B,H,T,d) -> (B,H,d,T)
  require(k.rank() == 4, "transpose_keys: k must be (B,H,T,d)");
  return transposed(k, {0, 1, 3, 2});
}

Tensor attention_scores(const Tensor& q, const Tensor& k_t) {
  // (B,H,S,d) @ (B,H,d,T) -> (B,H,S,T)
  require(q.rank() == 4 && k_t.rank() == 4, "attention_scores: q and k_t must be rank 4");
  return batched_matmul(q, k_t, {q.axes[0], q.axes[1], q.axes[2], k_t.axes[3]});
}

Tensor scale_scores(const Tensor& scores, std::size_t d_head) {
  // (B,H,S,T) -> (B,H,S,T); divide (not multiply by 1/sqrt) so values match NumPy's scores / np.sqrt(d)
  Tensor out = Tensor::uninitialized(scores.shape, scores.axes);  // every element is written below
  const double scale = std::sqrt(static_cast<double>(d_head));
  const double* in = scores.data.data();
  double* o = out.data.data();
  const std::size_t n = out.size();
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
  for (std::size_t i = 0; i < n; ++i) o[i] = in[i] / scale;
  return out;
}

Tensor causal_mask(std::size_t query_len, std::size_t key_len) {
  // (S,T): row i may see keys 0..i
  Tensor mask({query_len, key_len}, {"S", "S"});
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < query_len; ++i)
    for (std::size_t j = i + 1; j < key_len; ++j) mask.data[i * key_len + j] = neg_inf;
  return mask;
}

Tensor apply_mask(const Tensor& scores, const Tensor& mask) {
  // scores is (B,H,S,T); mask is (S,T) or (B,S,T)
  require(scores.rank() == 4, "apply_mask: scores must be (B,H,S,T)");
  const std::size_t B = scores.shape[0], H = scores.shape[1], S = scores.shape[2], T = scores.shape[3];
  const bool per_batch = mask.rank() == 3;
  require((mask.rank() == 2 && mask.shape[0] == S && mask.shape[1] == T) ||
              (per_batch && mask.shape[0] == B && mask.shape[1] == S && mask.shape[2] == T),
          "apply_mask: mask must be (S,T) or (B,S,T)");
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

Tensor softmax_rows(const Tensor& scores, std::size_t* fully_masked_rows) {
  // (..., T) -> (..., T), each row sums to 1 (or is all zero when fully masked)
  require(scores.rank() >= 1, "softmax_rows: needs at least one axis");
  Tensor out = Tensor::uninitialized(scores.shape, scores.axes);  // every element is written below
  const std::size_t T = scores.shape.back();
  const std::size_t rows = T == 0 ? 0 : scores.size() / T;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  // NumPy's exp(x - max) / sum: the row sum in NumPy's pairwise order, and below 32K
  // elements (every walkthrough) glibc's exp, which is NumPy's own on a machine without
  // AVX-512, so the numbers match NumPy bit for bit. Larger tensors take Eigen's
  // vectorized exp (within an ulp or two). Its argument is kept above -708, where exp is
  // still a normal number, and entries below are set to 0 afterwards: a subnormal result
  // costs the CPU a micro-code assist (four times slower here, where a randn model's huge
  // scores put most of each row below -708), and Eigen's exp would clamp at -709.78 and
  // return 2.2e-308 instead of 0 for masked keys. So weights under exp(-708) = 3.3e-308
  // of the row's largest come out as 0 rather than as subnormals.
  const bool exact = scores.size() < kExactMaxElements;
  constexpr double kExpLow = -708.0;
  std::size_t masked = 0;
#pragma omp parallel for schedule(static) reduction(+ : masked) if (scores.size() >= kParallelMinElements)
  for (std::size_t r = 0; r < rows; ++r) {
    const double* in = scores.data.data() + r * T;
    double* row = out.data.data() + r * T;
    Eigen::Map<const Eigen::ArrayXd> x(in, static_cast<Eigen::Index>(T));
    Eigen::Map<Eigen::ArrayXd> y(row, static_cast<Eigen::Index>(T));
    const double max = x.maxCoeff();  // exact in any order
    if (max == kNegInf) {
      // Every key is masked: softmax would be 0/0. Policy: attend to nothing.
      y.setZero();
      ++masked;
      continue;
    }
    if (exact) {
      for (std::size_t j = 0; j < T; ++j) row[j] = std::exp(in[j] - max);
    } else {
      y = (x - max).max(kExpLow).exp();
      for (std::size_t j = 0; j < T; ++j) row[j] = in[j] - max < kExpLow ? 0.0 : row[j];  // a vectorized blend
    }
    const double sum = pairwise_sum(row, T);
    y /= sum;
  }
  if (fully_masked_rows) *fully_masked_rows = masked;
  return out;
}

Tensor attention_context(const Tensor& weights, const Tensor& v) {
  // (B,H,S,T) @ (B,H,T,d) -> (B,H,S,d)
  require(weights.rank() == 4 && v.rank() == 4, "attention_context: weights and v must be rank 4");
  return batched_matmul(weights, v, {weights.axes[0], weights.axes[1], weights.axes[2], v.axes[3]});
}

Tensor merge_heads_transpose(const Tensor& context) {
  // (B,H,S,d) -> (B,S,H,d)
  require(context.rank() == 4, "merge_heads: context must be (B,H,S,d)");
  return transposed(context, {0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& context) {
  // (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  Tensor t = merge_heads_transpose(context);
  return reshaped(t, {t.shape[0], t.shape[1], t.shape[2] * t.shape[3]}, {t.axes[0], t.axes[1], "H*d"});
}

}  // namespace attn

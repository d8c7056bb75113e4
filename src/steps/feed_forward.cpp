#include "steps/feed_forward.h"

#include <algorithm>
#include <cmath>

#include "core/shape_only.h"
#include "kernels/parallel.h"
#include "kernels/rows.h"
#include "steps/projection.h"

namespace attn {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr double kGeluTanhCubic = 0.044715;
}  // namespace

double activate(double x, Activation activation) {
  // x -> act(x), the reference formula
  switch (activation) {
    case Activation::ReLU:
      return x > 0 ? x : 0.0;
    case Activation::GELUTanh:
    case Activation::GeGLUTanh: {  // (GeGLU's gate: the same GELU)
      // PyTorch's gelu(approximate="tanh"): 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))
      const double inner = std::sqrt(2.0 / kPi) * (x + kGeluTanhCubic * x * x * x);
      return 0.5 * x * (1.0 + std::tanh(inner));
    }
    case Activation::SwiGLU:  // the gate's
    case Activation::SiLU:
      return x / (1.0 + std::exp(-x));  // SiLU, x · sigmoid(x), as F.silu
    case Activation::GELU:
      break;
  }
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

namespace {

// h[i] = act(h[i]) for i < n on this thread. A tensor of `total` elements below
// kExactMaxElements takes activate(), the plain formula (every walkthrough's numbers the
// same on any CPU, as the softmax and the products); a larger one the instruction set's
// kernel (kernels/rows.h bounds each against the formula; ReLU's is the formula's bits).
// The forward and the gated backward's recomputed gate decide alike: the same values.
void activate_range(double* h, std::size_t n, Activation activation, std::size_t total) {
  const ProductKernel kernel = chosen_product_kernel();
  if (activation == Activation::ReLU) return relu_by(kernel, h, n);
  if (total < kExactMaxElements) {
    for (std::size_t i = 0; i < n; ++i) h[i] = activate(h[i], activation);
    return;
  }
  switch (activation) {
    case Activation::GELUTanh:
    case Activation::GeGLUTanh:
      return gelu_tanh_by(kernel, h, n);  // as x / (1 + exp(-2 √(2/π) (x + 0.044715 x³)))
    case Activation::SwiGLU:
    case Activation::SiLU:
      return silu_by(kernel, h, n);
    default:
      return gelu_erf_by(kernel, h, n);
  }
}

// From how many elements activate_range's work is split between the threads: ReLU and
// the kernels are memory-bound; the formula's tanh, exp or erf is not (parallel.h).
std::size_t activation_split_from(std::size_t total, Activation activation) {
  return activation != Activation::ReLU && total < kExactMaxElements ? kParallelMinFormulaElements
                                                                     : kParallelMinElements;
}

}  // namespace

double activate_derivative(double x, Activation activation) {
  // x -> act'(x)
  switch (activation) {
    case Activation::ReLU:
      return x > 0 ? 1.0 : 0.0;
    case Activation::GELUTanh:
    case Activation::GeGLUTanh: {
      const double k = std::sqrt(2.0 / kPi);
      const double t = std::tanh(k * (x + kGeluTanhCubic * x * x * x));
      return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * kGeluTanhCubic * x * x);
    }
    case Activation::SwiGLU:
    case Activation::SiLU: {
      const double s = 1.0 / (1.0 + std::exp(-x));
      return s * (1.0 + x * (1.0 - s));
    }
    case Activation::GELU:
      break;
  }
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi);
}

Tensor feed_forward_hidden(const Tensor& x, const Tensor& W_1, const Tensor& b_1, Activation activation) {
  // x is (B,S,N), W_1 is (N,F), b_1 is (F,) -> (B,S,F)
  Tensor hidden = linear_projection(x, W_1, b_1, "F");
  if (shapes_only()) return hidden;
  // then the activation, element by element
  double* h = hidden.data.data();
  // A large tensor is shared between the threads (GELU's erf and the others' exp are
  // compute-bound), and a small one by the formula from a few thousand numbers; each
  // element's value does not depend on the thread.
  const std::size_t total = hidden.size();
  for_each_range(
      total, [&](std::size_t begin, std::size_t end) { activate_range(h + begin, end - begin, activation, total); },
      activation_split_from(total, activation));
  return hidden;
}

Tensor swiglu_hidden(const Tensor& x, const Tensor& W_1, const Tensor& W_3) {
  // x is (B,S,N), W_1 and W_3 are (N,F) -> (B,S,F)
  return gated_hidden(x, W_1, W_3, Activation::SwiGLU);
}

Tensor gated_hidden(const Tensor& x, const Tensor& W_1, const Tensor& W_3, Activation activation) {
  // x is (B,S,N), W_1 and W_3 are (N,F) -> (B,S,F)
  Tensor hidden = linear_projection(x, W_1, Tensor(), "F");  // the gate a, then act(a) ⊙ u
  const Tensor up = linear_projection(x, W_3, Tensor(), "F");
  if (shapes_only()) return hidden;
  double* h = hidden.data.data();
  const double* u = up.data.data();
  for_each_range(
      hidden.size(),
      [&](std::size_t begin, std::size_t end) {
        activate_range(h + begin, end - begin, activation, hidden.size());
        for (std::size_t i = begin; i < end; ++i) h[i] *= u[i];
      },
      activation_split_from(hidden.size(), activation));
  return hidden;
}

SwigluGradients swiglu_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& W_3, const Tensor& dhidden) {
  // x is (B,S,N), W_1 and W_3 are (N,F), dhidden is (B,S,F) -> dx (B,S,N), dW_1 and dW_3 (N,F)
  return gated_hidden_backward(x, W_1, W_3, Activation::SwiGLU, dhidden);
}

SwigluGradients gated_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& W_3, Activation activation,
                                      const Tensor& dhidden) {
  // x is (B,S,N), W_1 and W_3 are (N,F), dhidden is (B,S,F) -> dx (B,S,N), dW_1 and dW_3 (N,F)
  Tensor dgate = linear_projection(x, W_1, Tensor(), "F");  // a, then dL/da in place
  Tensor dup = linear_projection(x, W_3, Tensor(), "F");    // u, then dL/du in place
  double* a = dgate.data.data();
  double* u = dup.data.data();
  const double* dh = dhidden.data.data();
  for_each_range(dgate.size(), [&](std::size_t begin, std::size_t end) {
    // act(a) as the forward computed it (the same size decides), a chunk at a time
    double act[256];
    for (std::size_t b = begin; b < end; b += 256) {
      const std::size_t n = end - b < 256 ? end - b : 256;
      std::copy(a + b, a + b + n, act);
      activate_range(act, n, activation, dgate.size());
      for (std::size_t i = b; i < b + n; ++i) {
        const double gate = a[i], up = u[i];
        a[i] = dh[i] * up * activate_derivative(gate, activation);
        u[i] = dh[i] * act[i - b];
      }
    }
  });
  ProjectionGradients g1 = linear_projection_backward(x, W_1, false, dgate);
  ProjectionGradients g3 = linear_projection_backward(x, W_3, false, dup);
  double* dx = g1.dx.data.data();
  for (std::size_t i = 0; i < g1.dx.size(); ++i) dx[i] += g3.dx.data[i];
  return {std::move(g1.dx), std::move(g1.dW), std::move(g3.dW)};
}

Tensor feed_forward_output(const Tensor& hidden, const Tensor& W_2, const Tensor& b_2) {
  // hidden is (B,S,F), W_2 is (F,N), b_2 is (N,) -> (B,S,N)
  return linear_projection(hidden, W_2, b_2, "N");
}

ProjectionGradients feed_forward_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& b_1,
                                                 Activation activation, const Tensor& hidden, const Tensor& dhidden) {
  // x is (B,S,N), W_1 is (N,F), hidden and dhidden are (B,S,F) -> dx (B,S,N), dW_1 (N,F), db_1 (F,)
  // dpre = dhidden ⊙ act'(pre), element by element
  Tensor dpre = Tensor::uninitialized(dhidden.shape, dhidden.axes);  // every element is written below
  double* d = dpre.data.data();
  const double* dh = dhidden.data.data();
  if (activation == Activation::ReLU) {
    const double* h = hidden.data.data();  // hidden = max(0, pre): pre > 0 exactly where hidden > 0
    for (std::size_t i = 0; i < dpre.size(); ++i) d[i] = h[i] > 0 ? dh[i] : 0.0;
  } else {
    const Tensor pre = linear_projection(x, W_1, b_1, "F");  // the same numbers as the forward's
    const double* a = pre.data.data();
    for_each_range(dpre.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) d[i] = dh[i] * activate_derivative(a[i], activation);
    });
  }
  return linear_projection_backward(x, W_1, !b_1.data.empty(), dpre);
}

ProjectionGradients feed_forward_output_backward(const Tensor& hidden, const Tensor& W_2, bool has_b_2,
                                                 const Tensor& doutput) {
  // hidden is (B,S,F), W_2 is (F,N), doutput is (B,S,N) -> dhidden (B,S,F), dW_2 (F,N), db_2 (N,)
  return linear_projection_backward(hidden, W_2, has_b_2, doutput);
}

}  // namespace attn

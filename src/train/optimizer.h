// The optimizers, learning-rate schedules and gradient clipping of attn train, each with
// PyTorch's semantics (torch.optim.SGD, Adam, AdamW; clip_grad_norm_), so that N steps of
// attn equal N steps of PyTorch float64 on the same batches (tests/reference/).
#ifndef ATTN_TRAIN_OPTIMIZER_H_
#define ATTN_TRAIN_OPTIMIZER_H_

#include <cstddef>
#include <vector>

#include "attn/parameters.h"
#include "attn/tensor.h"
#include "attn/train.h"

namespace attn {

// One optimizer's state for every weight of a model: Adam's two moving averages, SGD's
// momentum buffer, and the number of updates made.
class Optimizer {
 public:
  // `weights` in parameters() order; their gradients come in the same order.
  Optimizer(const OptimizerOptions& options, std::vector<Parameter> weights);

  // One update of every weight with learning rate `lr`, given dL/dw for each (read only).
  //   SGD:   g = dw + wd·w; with momentum, buf = μ·buf + g (buf = g the first time), g = buf;
  //          w -= lr·g
  //   Adam:  g = dw + wd·w; m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²;
  //          w -= lr/(1-β1^t) · m / (√v / √(1-β2^t) + ε)
  //   AdamW: w = w·(1 - lr·wd) first, then Adam's update with wd = 0 in g
  void step(const std::vector<Tensor>& gradients, double lr);

  std::size_t steps_taken() const { return steps_; }
  // The bytes of state it keeps: two tensors per weight for Adam and AdamW, one for SGD
  // with momentum, none without.
  static std::size_t state_bytes(const OptimizerOptions& options, std::size_t parameter_count);

 private:
  void sgd(Tensor& w, const Tensor& dw, std::size_t i, double lr);
  void adam(Tensor& w, const Tensor& dw, std::size_t i, double lr);

  OptimizerOptions options_;
  std::vector<Parameter> weights_;
  std::vector<TensorData> first_, second_;  // m and v (Adam), the momentum buffer (SGD: first_)
  std::size_t steps_ = 0;
};

// The learning rate of update `step` (1 for the first) of `total`:
//   constant: lr, times step / warmup during the warmup
//   cosine:   lr · step / warmup during the warmup, then lr · (1 + cos(π·p)) / 2 with
//             p = (step - 1 - warmup) / (total - warmup), from lr down towards 0
//   noam:     lr · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5), the paper's (5.3)
//             with lr as its factor (the paper: 1)
double learning_rate(const OptimizerOptions& options, std::size_t step, std::size_t total, std::size_t d_model);

// The global 2-norm of every gradient together: √(Σ over weights of ‖dw‖²), each weight's
// norm first, as torch.nn.utils.clip_grad_norm_ takes it.
double gradient_norm(const std::vector<Tensor>& gradients);
// clip_grad_norm_(max_norm): every gradient times min(1, max_norm / (norm + 1e-6)). Returns
// the norm before clipping.
double clip_gradients(std::vector<Tensor>& gradients, double max_norm);

}  // namespace attn

#endif  // ATTN_TRAIN_OPTIMIZER_H_

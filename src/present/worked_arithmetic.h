// One element of a step computed in full, as text, the way the seed documents work their
// examples ("Q[0][0] = 1.34×0.1 + 0.64×0.5 + 0.81×0.2 + 1.20×0.4 = 0.134 + 0.320 + 0.162 +
// 0.480 = 1.096"): every operand, every product or intermediate, and the result.
//
// These functions take plain numbers (a row, a column, a score row) and do the small
// arithmetic needed to show the intermediate values themselves; that is presentation, not
// the model's computation, which stays in the step functions. They return text (lines
// joined by "\n", ending with a newline) and never print.
//
// Numbers: each group of numbers shown together (an operand vector, the list of products,
// the results) gets one count of digits after the point, the way NumPy's
// floatmode="maxprec_equal" prints an array: as many as the value that needs the most,
// at most `precision`. So 0.32 beside 0.134 prints as 0.320, and 1.2 beside 1.34 as 1.20.
// Whole numbers print without a point ("100", "e^0"). Negative factors are bracketed:
// 1.34×(-0.5).
#ifndef ATTN_PRESENT_WORKED_ARITHMETIC_H_
#define ATTN_PRESENT_WORKED_ARITHMETIC_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/error.h"
#include "attn/step_variants.h"
#include "attn/tensor.h"

namespace attn {

struct WorkedOptions {
  int precision = 4;          // at most this many digits after the point
  std::size_t max_terms = 8;  // longer sums show the first max_terms - 1 terms, "…", and the last
};

// The group formatting described above, exposed for tests and for callers that print
// their own worked lines. Non-finite values print as "nan", "inf", "-inf".
std::vector<std::string> format_number_group(const std::vector<double>& values, int precision);
std::string format_worked_number(double value, int precision);  // a group of one
// Every value with exactly `precision` digits after the point: softmax's powers, sums and
// weights, so that they print alike in every row.
std::vector<std::string> format_fixed_group(const std::vector<double>& values, int precision);

// Names in a worked dot product: `result` = `left` · `right`.
struct DotProductNames {
  std::string result;  // "Q[0][0]"
  std::string left;    // "X[0]"      (the naming line is omitted when left is empty)
  std::string right;   // "W_q[:,0]"
  std::string bias;    // "b_q[0]"    (when a bias is added)
};

//   Q[0][0] = X[0] · W_q[:,0]
//           = 1.34×0.1 + 0.64×0.5 + 0.81×0.2 + 1.20×0.4
//           = 0.134 + 0.320 + 0.162 + 0.480
//           = 1.096
// The sum is taken left to right, the bias (when given) added last as one more term.
// InternalError when the lengths differ or are 0.
std::string worked_dot_product(const DotProductNames& names, const std::vector<double>& left,
                               const std::vector<double>& right, std::optional<double> bias = std::nullopt,
                               const WorkedOptions& options = {});

// A projection cell: result[row][column] = x[row] · w[:, column] (+ bias[column]), x (S,N),
// w (N,M), bias (M,) or empty. Names: result "Q", input "X", weight "W_q", bias "b_q" give
// "Q[0][1] = X[0] · W_q[:,1] + b_q[1]".
std::string worked_projection_cell(const Tensor& x, const Tensor& w, const Tensor& bias, std::size_t row,
                                   std::size_t column, std::string_view result_name, std::string_view input_name,
                                   std::string_view weight_name, std::string_view bias_name = "b",
                                   const WorkedOptions& options = {});

// A score cell: scores[i][j] = q[i] · k[j], q (S,d) and k (T,d) (the rows of K, i.e. the
// columns of K^T). Names "scores", "Q", "K" give "scores[0][1] = Q[0] · K[1]".
std::string worked_score_cell(const Tensor& q, const Tensor& k, std::size_t i, std::size_t j,
                              std::string_view result_name = "scores", std::string_view query_name = "Q",
                              std::string_view key_name = "K", const WorkedOptions& options = {});

//   scaled[0][0] = scores[0][0] / √d = 3.79 / √4 = 3.79 / 2 = 1.895
std::string worked_scaling(double score, std::size_t d_head, std::string_view score_name = "scores[0][0]",
                           std::string_view result_name = "scaled[0][0]", const WorkedOptions& options = {});

// A softmax row: the maximum, x - max for each entry, e^(x - max) for each, their sum, each
// divided by the sum, and one sentence on why the maximum is subtracted. -inf entries (masked
// keys) get weight 0; a row that is all -inf is explained as having no weights to give
// (attn's policy: all-zero weights).
std::string worked_softmax_row(const std::vector<double>& row, std::string_view row_name = "scaled[0]",
                               std::string_view result_name = "weights[0]", const WorkedOptions& options = {});

// Names in a worked context row.
struct ContextNames {
  std::string result = "context[0]";
  std::string values = "V";
  std::vector<std::string> keys;  // a label per value row, as printed: "\"love\"" gives V["love"]; empty: V[1]
};

// context = Σ_j weights[j] × V[j], weights (T), values (T,d): the weighted sum of value
// rows, then each dimension worked as a dot product.
std::string worked_context_row(const std::vector<double>& weights, const Tensor& values, const ContextNames& names = {},
                               const WorkedOptions& options = {});

// LayerNorm of one row with PyTorch's semantics: mean, biased variance (divided by N),
// eps inside the square root, normalized, then gamma·x̂ + beta.
std::string worked_layer_norm_row(const std::vector<double>& x, const std::vector<double>& gamma,
                                  const std::vector<double>& beta, double eps, std::string_view row_name = "x",
                                  const WorkedOptions& options = {});

// One RoPE pair turned by hand: dimension i (< d/2) and i + d/2 of one position p, the
// angle p · theta^(-2i/d), its cos and sin, and the two rotated numbers.
struct RopeNames {
  std::string result;  // "Q_rope[0][0][2]" (the row; [i] and [i + d/2] are appended)
  std::string input;   // "Q_heads[0][0][2]"
};
std::string worked_rope_pair(double first, double second, std::size_t position, std::size_t pair, std::size_t d_head,
                             double theta, const RopeNames& names, const WorkedOptions& options = {});
// The angle of pair (i, i + d/2) at position p, its cos and sin, and the two lines that work
// them out ("position 1, pair (0, 2): angle = ...", "cos = ..., sin = ..."): the forward's
// pair and the backward's share them.
struct RopeAngle {
  double cos = 1, sin = 0;
  std::string text;
};
RopeAngle worked_rope_angle(std::size_t position, std::size_t pair, std::size_t d_head, double theta,
                            const WorkedOptions& options = {});

// One pair's frequency through Llama 3.1's adjustment (model.rope_scaling): f = theta^(-2i/d),
// its wavelength, its band, and the frequency RoPE uses (`adjusted`, the step's).
std::string worked_llama3_frequency(std::size_t pair, std::size_t d_head, double theta, const RopeScaling& scaling,
                                    double adjusted, const WorkedOptions& options = {});

// One RMSNorm row (model.norm "rmsnorm"): the mean of the squares, its root, x̂, γ·x̂.
std::string worked_rms_norm_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                                std::string_view row_name = "x", const WorkedOptions& options = {});
// Gemma's (model.norm RMSNormPlusOne): the same, then 1 + γ and (1 + γ)·x̂.
std::string worked_rms_norm_plus_one_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                                         std::string_view row_name = "x", const WorkedOptions& options = {});

// z (the sum before the activation) through ReLU or GELU:
//   hidden[0][0] = ReLU(z[0][0]) = max(0, -0.41) = 0
//   hidden[0][0] = GELU(z[0][0]) = z · Φ(z) = 0.5 × (1 + erf(0.5 / √2)) × 0.5 = ...
//   hidden[0][0] = GELU_tanh(z[0][0]) = 0.5 · z · (1 + tanh(√(2/π) · (z + 0.044715 · z³))) = ...
std::string worked_activation(double z, Activation activation, std::string_view result_name,
                              std::string_view input_name, const WorkedOptions& options = {});
// SwiGLU's hidden element from its gate a = (x·W_1)[i][j] and up u = (x·W_3)[i][j]:
//   hidden[0][0] = SiLU(a) · u = a / (1 + e^-a) · u = 0.5 / (1 + e^-0.5) × 2 = ...
std::string worked_swiglu(double gate, double up, std::string_view result_name, std::string_view gate_name,
                          std::string_view up_name, const WorkedOptions& options = {});
// GeGLU's (Gemma's) likewise, the gate through GELU's tanh form:
//   hidden[0][0] = GELU_tanh(a) · u = 0.5 · a · (1 + tanh(√(2/π) · (a + 0.044715 · a³))) · u = ...
std::string worked_geglu(double gate, double up, std::string_view result_name, std::string_view gate_name,
                         std::string_view up_name, const WorkedOptions& options = {});

// An element-wise sum of two rows: the residual connection.
//   residual1[0] = X[0] + attn_out[0]
//                = [0.1, 1.2] + [-2.36, -6.88]
//                = [-2.26, -5.68]
std::string worked_sum_row(const std::vector<double>& left, const std::vector<double>& right,
                           std::string_view result_name, std::string_view left_name, std::string_view right_name,
                           const WorkedOptions& options = {});

// One sinusoidal positional-encoding element, the pair index i = dimension / 2:
//   PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(the same angle)
std::string worked_positional_encoding(std::size_t position, std::size_t dimension, std::size_t d_model,
                                       const WorkedOptions& options = {});

// Every element of PE(pos) worked in turn (at most max_terms of them), then the row.
std::string worked_positional_encoding_row(std::size_t position, std::size_t d_model,
                                           const WorkedOptions& options = {});

// The value itself, sin or cos of pos / 10000^(2i/d_model) (for tests and callers).
double sinusoidal_positional_encoding(std::size_t position, std::size_t dimension, std::size_t d_model);

}  // namespace attn

#endif  // ATTN_PRESENT_WORKED_ARITHMETIC_H_

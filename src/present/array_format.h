// Tensors printed the way NumPy prints arrays (numpy.array2string with the "maxprec"
// float mode): one number format for the whole array, aligned columns, nested brackets,
// blank lines between blocks, "..." past the summarization threshold, lines wrapped at
// the given width.
#ifndef ATTN_PRESENT_ARRAY_FORMAT_H_
#define ATTN_PRESENT_ARRAY_FORMAT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "attn/walkthrough.h"

namespace attn {

// Same text as print(np.array(...)) with np.set_printoptions(precision, suppress,
// threshold, edgeitems, linewidth). `prefix_width` is the width of anything printed before
// the opening bracket on the first line (continuation lines are indented by it).
std::string format_array(const Tensor& tensor, const ArrayFormatOptions& options = {}, std::size_t prefix_width = 0);

// The indices NumPy shows along an axis of size n: all, or the first and last `edge` when the
// array is summarized (more elements than its threshold).
std::vector<std::size_t> shown_indices(std::size_t n, bool summarize, std::size_t edge);
// The values format_array shows, in C order: the ones its number format is chosen from.
std::vector<double> shown_values(const Tensor& tensor, const ArrayFormatOptions& options);

// One number formatted as NumPy formats a lone float64 of that array (for worked arithmetic).
std::string format_number(double value, int precision = 4);

// The per-array float formatter, exposed for tests: decides the layout from all values,
// then formats each one to the same width.
class FloatFormatter {
 public:
  FloatFormatter(const double* values, std::size_t count, int precision, bool suppress_small);
  FloatFormatter(const std::vector<double>& values, int precision, bool suppress_small)
      : FloatFormatter(values.data(), values.size(), precision, suppress_small) {}
  FloatFormatter(const TensorData& values, int precision, bool suppress_small)
      : FloatFormatter(values.data(), values.size(), precision, suppress_small) {}
  std::string operator()(double value) const;

 private:
  int precision_;
  bool exp_format_ = false;
  int pad_left_ = 0;
  int pad_right_ = 0;
  int exp_size_ = -1;  // digits of the exponent in exp format
  int min_digits_ = 0;
};

}  // namespace attn

#endif  // ATTN_PRESENT_ARRAY_FORMAT_H_

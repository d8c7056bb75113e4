// Views of recorded tensors that the printers show: one batch item, one head, one row, a
// reshape before a transpose. They move numbers, never compute new ones.
#ifndef ATTN_PRESENT_TENSOR_VIEWS_H_
#define ATTN_PRESENT_TENSOR_VIEWS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "attn/walkthrough.h"

namespace attn {

// The index of the axis called `name`, or t.rank() when there is none.
std::size_t axis_of(const Tensor& t, const std::string& name);
// The size of the B axis, 1 when there is none.
std::size_t batch_count(const Tensor& t);
// The rows of a (B?,S,N) tensor for batch item b as an (S,N) matrix.
Tensor batch_item(const Tensor& t, std::size_t b);
// The (S,d) matrix of head h of batch item b of a (B?,H,S,d) tensor.
Tensor head_matrix(const Tensor& t, std::size_t b, std::size_t h);
// "[b][h]" or "[h]": the leading indices of an element of a (B?,H,S,T) tensor.
std::string head_index(const Tensor& t, std::size_t b, std::size_t h);
// Row `row` of the matrix of the last two axes, flattened: t.reshape(-1, n)[row].
std::vector<double> row_of(const Tensor& t, std::size_t row);
// The sum of each row over the last axis, (..., T) -> (...): the check shown under the
// softmax that every row of weights sums to 1, added up plainly as a learner would.
Tensor row_sums(const Tensor& t);
// (B?,S,H*d) -> (B?,S,H,d): the reshape view of a projection, for the split-heads step.
Tensor view_split(const Tensor& projection, std::size_t num_heads);
// The tensor as the learner asked for it: --batch and --head pick one slice. InputError
// for an index the axis does not have.
Tensor selected_slice(const Tensor& t, const StepFilter& filter);
// The InputError for a --batch or --head index that the axis (B or H) does not have.
[[noreturn]] void slice_index_error(const char* option, const std::string& axis, std::size_t size, std::size_t index);

}  // namespace attn

#endif  // ATTN_PRESENT_TENSOR_VIEWS_H_

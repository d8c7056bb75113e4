#include "steps/masks.h"

#include <limits>

#include "core/require.h"
#include "core/shape_only.h"

namespace attn {

Tensor padding_mask(const Tensor& ids, std::size_t pad_id) {
  // ids is (B,S) -> (B,S)
  if (shapes_only()) return shape_only(ids.shape, ids.axes);
  Tensor mask(ids.shape, ids.axes);
  for (std::size_t i = 0; i < ids.size(); ++i)
    mask.data[i] = static_cast<std::size_t>(ids.data[i]) == pad_id ? 1.0 : 0.0;
  return mask;
}

Tensor causal_mask(std::size_t query_len, std::size_t key_len) {
  // query_len S, key_len T -> (S,T): row i may see keys 0..i
  if (shapes_only()) return shape_only({query_len, key_len}, {"S", "S"});
  Tensor mask({query_len, key_len}, {"S", "S"});
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < query_len; ++i)
    for (std::size_t j = i + 1; j < key_len; ++j) mask.data[i * key_len + j] = neg_inf;
  return mask;
}

Tensor sliding_window_mask(std::size_t query_len, std::size_t key_len, std::size_t window) {
  // query_len S, key_len T, window W -> (S,T): row i may see keys i-W+1 .. i
  require(window > 0, "sliding_window_mask: the window must be at least 1");
  if (shapes_only()) return shape_only({query_len, key_len}, {"S", "S"});
  Tensor mask = causal_mask(query_len, key_len);
  const double neg_inf = -std::numeric_limits<double>::infinity();
  for (std::size_t i = window; i < query_len; ++i)
    for (std::size_t j = 0; j + window <= i && j < key_len; ++j) mask.data[i * key_len + j] = neg_inf;
  return mask;
}

Tensor attention_mask(std::size_t query_len, std::size_t key_len, bool causal, const Tensor* key_padding,
                      std::size_t window) {
  // query_len S, key_len T, key_padding (B,T) or null -> (S,T), or (B,S,T) with key_padding
  Tensor base = causal && window ? sliding_window_mask(query_len, key_len, window)
                : causal         ? causal_mask(query_len, key_len)
                : shapes_only()  ? shape_only({query_len, key_len}, {"S", "S"})
                                 : Tensor({query_len, key_len}, {"S", "S"});
  if (!key_padding) return base;
  require(key_padding->rank() == 2 && key_padding->shape[1] == key_len, "attention_mask: key padding must be (B,T)");
  const std::size_t B = key_padding->shape[0];
  if (shapes_only()) return shape_only({B, query_len, key_len}, {"B", base.axes[0], base.axes[1]});
  const double neg_inf = -std::numeric_limits<double>::infinity();
  Tensor mask({B, query_len, key_len}, {"B", base.axes[0], base.axes[1]});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < query_len; ++i)
      for (std::size_t j = 0; j < key_len; ++j)
        mask.data[(b * query_len + i) * key_len + j] =
            key_padding->data[b * key_len + j] != 0 ? neg_inf : base.data[i * key_len + j];
  return mask;
}

}  // namespace attn

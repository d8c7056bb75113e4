#include "steps/embedding.h"

#include <algorithm>
#include <cmath>

#include "core/require.h"
#include "core/shape_only.h"

namespace attn {

Tensor embedding_lookup(const Tensor& ids, const Tensor& table) {
  // ids is (B,S), table is (V,N) -> (B,S,N)
  require(ids.rank() == 2 && table.rank() == 2, "embedding_lookup: ids (B,S), table (V,N)");
  const std::size_t B = ids.shape[0], S = ids.shape[1], V = table.shape[0], N = table.shape[1];
  if (shapes_only()) return shape_only({B, S, N}, {"B", ids.axes[1], "N"});
  Tensor out({B, S, N}, {"B", ids.axes[1], "N"});
  for (std::size_t i = 0; i < B * S; ++i) {
    const auto id = static_cast<std::size_t>(ids.data[i]);
    require(id < V, "embedding_lookup: id out of range");
    if (table.stored) {  // a checkpoint's table: the rows read, widened; never the whole table
      table.stored->widen_row(id, N, out.data.data() + i * N);
      continue;
    }
    std::copy(table.data.begin() + static_cast<std::ptrdiff_t>(id * N),
              table.data.begin() + static_cast<std::ptrdiff_t>((id + 1) * N),
              out.data.begin() + static_cast<std::ptrdiff_t>(i * N));
  }
  return out;
}

void embedding_lookup_backward(const Tensor& ids, const Tensor& dx, Tensor& dtable) {
  // ids is (B,S), dx is (B,S,N), dtable is (V,N)
  require(ids.rank() == 2 && dx.rank() == 3 && dtable.rank() == 2 && dx.shape[2] == dtable.shape[1] &&
              ids.size() * dtable.shape[1] == dx.size(),
          "embedding_lookup_backward: ids (B,S), dx (B,S,N), dtable (V,N)");
  const std::size_t N = dtable.shape[1];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto id = static_cast<std::size_t>(ids.data[i]);
    require(id < dtable.shape[0], "embedding_lookup_backward: id out of range");
    for (std::size_t n = 0; n < N; ++n) dtable.data[id * N + n] += dx.data[i * N + n];
  }
}

Tensor token_type_rows(const Tensor& type_ids, const Tensor& table) {
  // type_ids is (B,S), table is (types,N) -> (B,S,N): a lookup in the second table
  return embedding_lookup(type_ids, table);
}

void token_type_rows_backward(const Tensor& type_ids, const Tensor& drows, Tensor& dtable) {
  // type_ids is (B,S), drows is (B,S,N), dtable is (types,N): a scatter-add, as the lookup's
  embedding_lookup_backward(type_ids, drows, dtable);
}

Tensor scale_embedding(const Tensor& x) {
  // x is (B,S,N) -> (B,S,N)
  if (shapes_only()) return shape_only(x.shape, x.axes);
  Tensor out = x;
  const double scale = std::sqrt(static_cast<double>(x.shape.back()));
  for (double& v : out.data) v *= scale;
  return out;
}

Tensor scale_embedding_backward(const Tensor& dscaled) {
  // dscaled is (B,S,N) -> (B,S,N): the same factor sqrt(N)
  return scale_embedding(dscaled);
}

}  // namespace attn

// CachedHeads (attn/generate.h): a decoder layer's keys or values kept with room to grow,
// so that a generated token writes its own row and copies the cache out once (the scores'
// k_t, or the context's v), not three times (a grown copy, a batched one, a transposed one).
#include <algorithm>

#include "attn/error.h"
#include "attn/generate.h"
#include "core/shape_only.h"

namespace attn {

void CachedHeads::make_room(std::size_t t) {
  if (t <= room_ || shapes_only()) return;
  const std::size_t room = room_for(t);
  CachedHeads grown(keys_);
  grown.G_ = G_, grown.d_ = d_, grown.room_ = room, grown.t_ = t_, grown.head_axis_ = head_axis_;
  grown.numbers_.resize(G_ * room * d_);  // the first t_ positions written below, the rest as rows come
  for (std::size_t g = 0; g < G_; ++g)
    for (std::size_t s = 0; s < t_; ++s)
      for (std::size_t j = 0; j < d_; ++j) grown.numbers_[grown.at(g, s, j)] = numbers_[at(g, s, j)];
  *this = std::move(grown);
}

void CachedHeads::assign(const Tensor& heads) {
  // heads is (1,G,T,d)
  if (heads.rank() != 4 || heads.shape[0] != 1) throw InternalError("CachedHeads::assign: heads must be (1,G,T,d)");
  *this = CachedHeads(keys_);
  G_ = heads.shape[1], d_ = heads.shape[3], head_axis_ = heads.axes[1];
  const std::size_t T = heads.shape[2];
  make_room(T);
  t_ = T;
  if (shapes_only()) return;
  for (std::size_t g = 0; g < G_; ++g)
    for (std::size_t s = 0; s < T; ++s)
      for (std::size_t j = 0; j < d_; ++j) numbers_[at(g, s, j)] = heads.data[(g * T + s) * d_ + j];
}

void CachedHeads::append(const Tensor& row) {
  // row is (1,G,1,d)
  if (row.rank() != 4 || row.shape[0] != 1 || row.shape[2] != 1 || (t_ && (row.shape[1] != G_ || row.shape[3] != d_)))
    throw InternalError("CachedHeads::append: the row must be (1,G,1,d) of the cache's G and d");
  if (!t_) G_ = row.shape[1], d_ = row.shape[3], head_axis_ = row.axes[1];
  make_room(t_ + 1);
  if (!shapes_only())
    for (std::size_t g = 0; g < G_; ++g)
      for (std::size_t j = 0; j < d_; ++j) numbers_[at(g, t_, j)] = row.data[g * d_ + j];
  ++t_;
}

Tensor CachedHeads::heads(std::size_t from) const {
  // (G,t,d) -> (1,G,t-from,d)
  const std::size_t kept = t_ - from;
  if (shapes_only()) return shape_only({1, G_, kept, d_}, {"B", head_axis_, "T", "d"});
  Tensor out = Tensor::uninitialized({1, G_, kept, d_}, {"B", head_axis_, "T", "d"});  // every number written below
  double* to = out.data.data();
  for (std::size_t g = 0; g < G_; ++g) {
    if (!keys_) {  // each head's run of positions as held
      to = std::copy_n(numbers_.data() + at(g, from, 0), kept * d_, to);
      continue;
    }
    for (std::size_t s = 0; s < kept; ++s)
      for (std::size_t j = 0; j < d_; ++j) *to++ = numbers_[at(g, from + s, j)];
  }
  return out;
}

Tensor CachedHeads::transposed_heads(std::size_t from) const {
  // (G,t,d) -> (1,G,d,t-from)
  const std::size_t kept = t_ - from;
  if (shapes_only()) return shape_only({1, G_, d_, kept}, {"B", head_axis_, "d", "T"});
  Tensor out = Tensor::uninitialized({1, G_, d_, kept}, {"B", head_axis_, "d", "T"});  // every number written below
  double* to = out.data.data();
  for (std::size_t g = 0; g < G_; ++g)
    for (std::size_t j = 0; j < d_; ++j) {
      if (keys_) {  // each (head, number)'s run of positions as held
        to = std::copy_n(numbers_.data() + at(g, from, j), kept, to);
        continue;
      }
      for (std::size_t s = 0; s < kept; ++s) *to++ = numbers_[at(g, from + s, j)];
    }
  return out;
}

Tensor CachedHeads::as_tensor() const {
  // (G,t,d)
  if (shapes_only()) return shape_only(shape(), axes());
  Tensor all = heads(0);
  all.shape.erase(all.shape.begin());
  all.axes = axes();
  return all;
}

}  // namespace attn

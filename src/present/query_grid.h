// Where one query looks in every layer and head (attn explain --query POS): a grid with a
// row per layer and a column per head, each cell the key that query weighs most and its
// weight ("3 .45"), in blocks of heads that fit the line; then the keys' tokens. bertviz's
// model view for one token, in characters. The rows are taken from each layer's attention
// weights as the trace streams by (QueryRows::see), before the walkthrough forgets them.
#ifndef ATTN_PRESENT_QUERY_GRID_H_
#define ATTN_PRESENT_QUERY_GRID_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/trace.h"

namespace attn {

class QueryRows {
 public:
  explicit QueryRows(std::size_t position) : position_(position) {}
  // Keeps the query's row of every head of a self-attention's weights over the source
  // (batch item 0); other records pass by.
  void see(const TraceRecord& record);
  std::size_t position() const { return position_; }

  // The grid, every line within `width` columns; `tokens` label the key positions.
  std::string grid(const std::vector<std::string>& tokens, bool decoder_only, std::size_t width) const;

 private:
  struct LayerRows {
    int layer = 0;
    std::vector<std::vector<double>> heads;  // each head's weights over the keys
  };
  std::size_t position_;
  std::vector<LayerRows> blocks_;
};

}  // namespace attn

#endif  // ATTN_PRESENT_QUERY_GRID_H_

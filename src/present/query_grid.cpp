#include "present/query_grid.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/terminal.h"

namespace attn {

void QueryRows::see(const TraceRecord& r) {
  const StepId& id = r.id;
  const bool self = id.block == Block::SelfAttention || id.block == Block::MaskedSelfAttention;
  if (!is_attention_pattern(id.kind) || id.gradient || !self || id.sequence != Sequence::Source) return;
  const std::size_t rank = r.shape.size();
  if (rank < 3) return;
  const std::size_t H = r.shape[rank - 3], S = r.shape[rank - 2], T = r.shape[rank - 1];  // (B?,H,S,T), item 0
  if (position_ >= S) return;
  LayerRows block{id.layer, {}};
  for (std::size_t h = 0; h < H; ++h) {
    const double* row = r.data + (h * S + position_) * T;
    block.heads.emplace_back(row, row + T);
  }
  blocks_.push_back(std::move(block));
}

namespace {

// ".45", "1.0": a weight in two digits
std::string two_digits(double v) {
  const long hundredths = std::lround(v * 100);
  return hundredths >= 100 ? "1.0" : fmt::format(".{:02d}", hundredths);
}

}  // namespace

std::string QueryRows::grid(const std::vector<std::string>& tokens, bool decoder_only, std::size_t width) const {
  const std::string query = position_ < tokens.size() ? tokens[position_] : std::to_string(position_);
  std::string out = wrapped(fmt::format("each cell: the key position \"{}\" (position {}) weighs most in that layer's "
                                        "head, and its weight; --head N --steps softmax shows a head's whole map",
                                        query, position_),
                            width) +
                    "\n";
  std::size_t heads = 0, keys = 0;
  for (const LayerRows& b : blocks_) {
    heads = std::max(heads, b.heads.size());
    for (const auto& row : b.heads) keys = std::max(keys, row.size());
  }
  const std::size_t cell = fmt::format("{} .00", keys ? keys - 1 : 0).size() + 2;
  const std::size_t label = 6, fit = std::max<std::size_t>(1, width > label + cell ? (width - label) / cell : 1);
  for (std::size_t first = 0; first < heads; first += fit) {
    const std::size_t last = std::min(heads, first + fit);
    std::string header = std::string(label, ' ');
    for (std::size_t h = first; h < last; ++h) header += fmt::format("{:<{}}", fmt::format("h{}", h), cell);
    header.erase(header.find_last_not_of(' ') + 1);
    out += (first ? "\n" : "") + header + "\n";
    for (const LayerRows& b : blocks_) {
      std::string line = fmt::format("{:<{}}", fmt::format(decoder_only ? "L{}" : "enc {}", b.layer), label);
      for (std::size_t h = first; h < last && h < b.heads.size(); ++h) {
        const auto& row = b.heads[h];
        const auto top = static_cast<std::size_t>(std::max_element(row.begin(), row.end()) - row.begin());
        line += fmt::format("{:<{}}", fmt::format("{} {}", top, two_digits(row[top])), cell);
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
    }
  }
  std::string legend = "keys:";
  for (std::size_t j = 0; j < keys; ++j)
    legend += fmt::format(" {} {}{}", j, j < tokens.size() ? tokens[j] : "?", j + 1 < keys ? "," : "");
  return out + wrapped(legend, width) + "\n";
}

}  // namespace attn

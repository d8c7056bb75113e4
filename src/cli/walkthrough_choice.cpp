#include "walkthrough_choice.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/model_file.h"
#include "present/terminal.h"

namespace attn::cli {

namespace {

// The element --cell names: four non-negative integers b,h,i,j, each within 2^64 - 1 (a
// larger one was read as 9223372036854775807).
std::array<std::size_t, 4> parse_cell(const std::string& text) {
  const auto refuse = [&](const std::string& why) {
    throw InputError(
        "--cell", "",
        "expected four non-negative integers b,h,i,j (batch, head, row, column), found \"" + text + "\"" + why);
  };
  std::array<std::size_t, 4> cell{};
  std::size_t k = 0, at = 0;
  for (; k < 4 && at <= text.size(); ++k) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::string part = text.substr(at, comma - at);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) refuse("");
    errno = 0;
    const unsigned long long v = std::strtoull(part.c_str(), nullptr, 10);
    if (errno == ERANGE) refuse(": " + part + " is past the largest index, 18446744073709551615");
    cell[k] = static_cast<std::size_t>(v);
    at = comma + 1;
  }
  if (k != 4 || at <= text.size()) refuse("");
  return cell;
}

// The layer --layer names, checked against the stack it names.
void check_layer(const LayerSelection& l, const RunSize& size) {
  const std::size_t layers = !l.stack                     ? std::max(size.encoder_layers, size.decoder_layers)
                             : *l.stack == Stack::Encoder ? size.encoder_layers
                                                          : size.decoder_layers;
  const char* stack = !l.stack ? "the longer stack" : *l.stack == Stack::Encoder ? "the encoder" : "the decoder";
  if (static_cast<std::size_t>(l.layer) >= layers)
    throw InputError("--layer", "",
                     layers == 0 ? fmt::format("this model has no layers in {}", stack)
                                 : fmt::format("expected a layer below {} ({} has {} layer{}), found {}", layers, stack,
                                               layers, layers == 1 ? "" : "s", l.layer));
}

}  // namespace

WalkthroughOptions walkthrough_options(const PrintChoice& print, const StepChoice& steps, bool dump_to_stdout) {
  WalkthroughOptions walk;
  walk.array.precision = print.precision;
  walk.array.threshold = print.threshold;
  walk.array.line_width = print.line_width ? print.line_width : terminal_width(STDOUT_FILENO);
  walk.explanations = !print.brief;
  walk.list_only = print.list_only;
  walk.full = print.full;
  walk.top_k = print.top_k;
  if (!steps.cell.empty()) {
    walk.cell = parse_cell(steps.cell);
    walk.cell_given = true;
  }
  if (!steps.steps.empty()) walk.filter = parse_step_selection(steps.steps);
  parse_layer_option(steps.layer, walk.filter);
  if (steps.head >= 0) walk.filter.head = static_cast<std::size_t>(steps.head);
  if (steps.batch >= 0) walk.filter.batch = static_cast<std::size_t>(steps.batch);
  const ColorMode mode = parse_color_mode(print.color).value_or(ColorMode::Auto);
  walk.color = use_color(mode, dump_to_stdout ? STDERR_FILENO : STDOUT_FILENO);
  walk.color_depth = detect_color_depth();
  if (print.heatmap == "color") walk.heatmap_style = HeatmapStyle::Color;
  if (print.heatmap == "shade") walk.heatmap_style = HeatmapStyle::Shade;
  if (print.heatmap == "ascii") walk.heatmap_style = HeatmapStyle::Ascii;
  return walk;
}

// (They used to pick nothing, silently.)
void check_selection(const WalkthroughOptions& walk, const Model& model, const RunInput& input) {
  const RunSize size = run_size_of(model, input);
  const StepFilter& filter = walk.filter;
  if (filter.batch && !input.batched)
    throw InputError(
        "--batch", "",
        "this run's input is one sequence, not a batch: there is no batch item to pick (leave --batch out)");
  if (filter.batch && *filter.batch >= size.batch)
    throw InputError("--batch", "", fmt::format("expected an index below B={}, found {}", size.batch, *filter.batch));
  if (filter.layer) check_layer(*filter.layer, size);
  if (!walk.cell_given) return;
  // Rows are positions; columns are positions (scores, weights) or features (Q's H*d,
  // d_model, the feed-forward's d_ff).
  const auto& c = model.config;
  const std::size_t B = input.batched ? size.batch : 1, rows = std::max(size.seq_len, size.target_len);
  const std::size_t columns = std::max({rows, c.d_model, c.num_heads * c.d_head, c.d_ff});
  const auto& cell = walk.cell;
  if (cell[0] >= B || cell[1] >= c.num_heads || cell[2] >= rows || cell[3] >= columns)
    throw InputError("--cell", "",
                     fmt::format("expected b,h,i,j with b < B={}, h < H={}, i < {} (positions) and j < {} (positions "
                                 "or features), found {},{},{},{}",
                                 B, c.num_heads, rows, columns, cell[0], cell[1], cell[2], cell[3]));
}

}  // namespace attn::cli

#include "present/model_overview.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/print_limits.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// Each score's short name and its letter in the grid, in head_score_names()' order.
struct RoleName {
  const char* name;
  const char* word;
  char letter;
};
constexpr RoleName kRoles[] = {{"previous_token", "prev", 'P'}, {"first_token", "first", 'F'},
                               {"induction", "ind", 'I'},       {"induction_2", "ind2", 'J'},
                               {"duplicate_token", "dup", 'D'}, {"self", "self", 'S'}};

// The largest defined score and its role, or nullptr when none is defined.
const RoleName* largest_score(const HeadScores& scores, double& value) {
  const RoleName* best = nullptr;
  for (const auto& r : kRoles) {
    const HeadScore s = score_named(scores, r.name);
    if (s && (!best || *s > value)) {
      best = &r;
      value = *s;
    }
  }
  return best;
}

// ".52", "1.0": two digits of a score in [0, 1].
std::string two_digits(double v) {
  const long hundredths = std::lround(v * 100);
  return hundredths >= 100 ? "1.0" : fmt::format(".{:02d}", hundredths);
}

bool is_self_attention(const StepId& id) {
  return id.block == Block::SelfAttention || id.block == Block::MaskedSelfAttention;
}

std::string row_label(const StepId& id, const Model& model) {
  if (model.decoder.empty() || model.encoder.empty()) return fmt::format("L{}", id.layer);
  return fmt::format("{}{}", id.stack == Stack::Decoder ? "dec " : "enc ", id.layer);
}

// One block of the grid: heads [first, last) of every layer.
std::string grid_columns(const std::vector<const BlockHeads*>& rows, const Model& model, std::size_t first,
                         std::size_t last) {
  std::string text = "      ";
  for (std::size_t h = first; h < last; ++h) text += fmt::format("{:<5}", fmt::format("h{}", h));
  while (text.back() == ' ') text.pop_back();
  text += "\n";
  for (const BlockHeads* row : rows) {
    std::string line = fmt::format("{:<6}", row_label(row->block, model));
    for (std::size_t h = first; h < last && h < row->heads.size(); ++h) {
      double value = 0;
      const RoleName* best = largest_score(row->heads[h], value);
      const bool role = best && value >= 0.5;
      const std::string cell =
          !best ? "-"
                : std::string(1, role ? best->letter : static_cast<char>(best->letter - 'A' + 'a')) + two_digits(value);
      line += fmt::format("{:<5}", cell);
    }
    while (line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

}  // namespace

bool is_big_model(const Model& model) {
  const std::size_t layers = std::max(model.encoder.size(), model.decoder.size());
  return layers * model.config.num_heads > kOverviewFromHeads;
}

void ModelOverview::see(const TraceEntry& entry, const Trace& trace, std::size_t b) {
  const StepId& id = entry.id;
  if (!is_attention_pattern(id.kind) || id.gradient || !is_self_attention(id)) return;
  const Tensor& w = entry.tensor;  // (B?,H,S,S)
  if (w.rank() < 3) return;
  b = std::min(b, batch_count(w) - 1);
  const std::size_t H = w.shape[w.rank() - 3], S = w.shape[w.rank() - 2];
  // Only which tokens are equal matters to the scores: the i-th distinct token gets id i.
  std::vector<std::size_t> ids(S);
  const auto* tokens = trace.tokens(id.sequence);
  std::map<std::string, std::size_t> seen;
  for (std::size_t p = 0; p < S; ++p) {
    const bool known = tokens && b < tokens->size() && p < (*tokens)[b].size();
    ids[p] = known ? seen.emplace((*tokens)[b][p], seen.size()).first->second : S + p;  // X: none repeat
  }
  BlockHeads block{id, {}};
  for (std::size_t h = 0; h < H; ++h) block.heads.push_back(score_head(head_matrix(w, b, h), ids));
  blocks_.push_back(std::move(block));
}

const BlockHeads* ModelOverview::self_attention(const StepId& layer) const {
  for (const auto& b : blocks_)
    if (b.block.stack == layer.stack && b.block.layer == layer.layer) return &b;
  return nullptr;
}

std::string head_role_text(const HeadScores& scores) {
  double value = 0;
  const RoleName* best = largest_score(scores, value);
  if (!best) return "-";
  return fmt::format("{}{} {}", value >= 0.5 ? "" : "~", best->word, two_digits(value));
}

std::string heads_line(const BlockHeads& heads) {
  // Heads grouped by role: those with one first ("prev 3 (.81)"), then the mixed ones by
  // the score they lean to ("leaning to first 1 5, self 2").
  std::vector<std::pair<const RoleName*, std::string>> roles, leanings;
  const auto add = [](auto& groups, const RoleName* role, const std::string& text) {
    for (auto& [r, t] : groups)
      if (r == role) return void(t += " " + text);
    groups.emplace_back(role, text);
  };
  std::string undefined;
  for (std::size_t h = 0; h < heads.heads.size(); ++h) {
    double value = 0;
    const RoleName* best = largest_score(heads.heads[h], value);
    if (!best)
      undefined += " " + std::to_string(h);
    else if (value >= 0.5)
      add(roles, best, fmt::format("{} ({})", h, two_digits(value)));
    else
      add(leanings, best, std::to_string(h));
  }
  std::string text;
  for (const auto& [role, t] : roles) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", role->word, t);
  if (!leanings.empty()) text += text.empty() ? "mixed, leaning to" : "; mixed, leaning to";
  for (std::size_t i = 0; i < leanings.size(); ++i)
    text += fmt::format("{} {} {}", i ? "," : "", leanings[i].first->word, leanings[i].second);
  if (!undefined.empty()) text += (text.empty() ? "no score:" : "; no score:") + undefined;
  return "heads: " + text;
}

std::string heads_grid(const std::vector<BlockHeads>& blocks, const Model& model, std::size_t width) {
  std::vector<const BlockHeads*> rows;
  std::size_t heads = 0;
  for (const auto& b : blocks) {
    rows.push_back(&b);
    heads = std::max(heads, b.heads.size());
  }
  // Indented by 4 on the page; a row label of 6, then 5 columns a head.
  const std::size_t fit = std::max<std::size_t>(1, width > 10 + 5 ? (width - 10) / 5 : 1);
  std::string text;
  for (std::size_t first = 0; first < heads; first += fit)
    text += (first ? "\n" : "") + grid_columns(rows, model, first, std::min(heads, first + fit));
  return text;
}

TextTable heads_grid_table(const std::vector<BlockHeads>& blocks, const Model& model, std::size_t width) {
  TextTable table;
  table.text = heads_grid(blocks, model, width);
  std::size_t heads = 0;
  for (const auto& b : blocks) heads = std::max(heads, b.heads.size());
  table.header.push_back("");
  for (std::size_t h = 0; h < heads; ++h) table.header.push_back(fmt::format("h{}", h));
  for (const auto& b : blocks) {
    std::vector<std::string> row = {row_label(b.block, model)};
    for (const HeadScores& scores : b.heads) row.push_back(head_role_text(scores));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace attn

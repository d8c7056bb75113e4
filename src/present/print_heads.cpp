#include "present/print_heads.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "forward/ablation.h"
#include "present/probability_text.h"
#include "present/terminal.h"

namespace attn {

namespace {

std::string score_text(const HeadScore& s) { return s ? fmt::format("{:.2f}", *s) : "-"; }

// The role and the score that names it: "induction 0.98", or "mixed (self 0.31)".
// `bidirectional`: a model without a causal mask anywhere (BERT), whose heads may look ahead:
// next_token and last_token ([SEP]) are among its roles.
std::string role_cell(const HeadScores& scores, bool bidirectional) {
  const std::string role = strongest_role(scores, bidirectional);
  if (role != "mixed") return role + " " + score_text(score_named(scores, role));
  std::string best;
  double best_value = -1;
  for (const std::string& name : head_score_names(bidirectional))
    if (const HeadScore s = score_named(scores, name); s && *s > best_value) {
      best = name;
      best_value = *s;
    }
  return best.empty() ? "mixed" : fmt::format("mixed ({} {:.2f})", best, best_value);
}

std::string without_trailing_spaces(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

// One block's table: layers as rows, heads as columns, in blocks of as many heads as fit in
// `width` columns (a block of heads under the other when the model has more).
void print_table(std::ostream& out, const std::vector<ScoredHead>& heads, const std::string& block, bool bidirectional,
                 std::size_t width) {
  std::vector<const ScoredHead*> in_block;
  std::size_t cell = 6, H = 0;
  int layers = 0;
  for (const ScoredHead& h : heads)
    if (h.block == block) {
      in_block.push_back(&h);
      cell = std::max(cell, role_cell(h.scores, bidirectional).size());
      H = std::max(H, h.head + 1);
      layers = std::max(layers, h.layer + 1);
    }
  out << "\n" << wrapped(block + ": each head's strongest role (its largest score, if ≥ 0.5)", width) << "\n";
  // "layer 11" then "  " + a cell per head
  const std::size_t per_block = std::max<std::size_t>(1, width > 8 ? (width - 8) / (cell + 2) : 1);
  for (std::size_t first = 0; first < H; first += per_block) {
    const std::size_t last = std::min(H, first + per_block);
    if (first > 0) out << "\n";
    std::string header = fmt::format("{:<8}", "");
    for (std::size_t h = first; h < last; ++h) header += fmt::format("  {:<{}}", fmt::format("head {}", h), cell);
    out << without_trailing_spaces(header) << "\n";
    for (int l = 0; l < layers; ++l) {
      std::string row = fmt::format("{:<8}", fmt::format("layer {}", l));
      for (const ScoredHead* h : in_block)
        if (h->layer == l && h->head >= first && h->head < last)
          row += fmt::format("  {:<{}}", role_cell(h->scores, bidirectional), cell);
      out << without_trailing_spaces(row) << "\n";
    }
  }
}

// One table per block, in the order the run met them.
void print_tables(std::ostream& out, const std::vector<ScoredHead>& heads, bool bidirectional, std::size_t width) {
  std::vector<std::string> blocks;
  for (const ScoredHead& h : heads)
    if (std::find(blocks.begin(), blocks.end(), h.block) == blocks.end()) blocks.push_back(h.block);
  for (const std::string& block : blocks) print_table(out, heads, block, bidirectional, width);
}

void print_changes(std::ostream& out, const Model& model, const std::vector<PositionChange>& changes,
                   const std::string& label) {
  out << "\nnext tokens without and with the ablation (" << label << "):\n";
  std::vector<std::array<std::string, 4>> rows = {{"", "unablated", "ablated p", "ablated pick"}};
  for (const PositionChange& c : changes)
    rows.push_back({fmt::format("{} after {}", c.position, readable_token(model, c.after)),
                    readable_token(model, c.unablated_id) + " " + probability_text(c.unablated_p, 4),
                    probability_text(c.ablated_p, 4),
                    readable_token(model, c.ablated_id) + " " + probability_text(c.ablated_pick_p, 4)});
  std::array<std::size_t, 4> width{};
  for (const auto& r : rows)
    for (std::size_t k = 0; k < 4; ++k) width[k] = std::max(width[k], display_width(r[k]));
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t k = 0; k < 4; ++k) line += r[k] + std::string(width[k] - display_width(r[k]) + 2, ' ');
    out << without_trailing_spaces(line) << "\n";
  }
}

nlohmann::ordered_json changes_json(const Model& model, const Ablation& ablation,
                                    const std::vector<PositionChange>& changes) {
  nlohmann::ordered_json j;
  j["heads"] = nlohmann::ordered_json::array();
  for (const HeadAblation& h : ablation.heads)
    j["heads"].push_back(
        {{"stack", h.stack == Stack::Encoder ? "encoder" : "decoder"}, {"layer", h.layer}, {"head", h.head}});
  j["mean"] = ablation.mean;
  j["positions"] = nlohmann::ordered_json::array();
  for (const PositionChange& c : changes)
    j["positions"].push_back({{"position", c.position},
                              {"after", c.after},
                              {"unablated", {{"token", model.vocab.token(c.unablated_id)}, {"p", c.unablated_p}}},
                              {"ablated_p", c.ablated_p},
                              {"ablated", {{"token", model.vocab.token(c.ablated_id)}, {"p", c.ablated_pick_p}}}});
  return j;
}

// The sequence as the report's first line shows it: a checkpoint's pieces readable, beside
// their ids ("␣cat"→3797); a word model's words.
std::string joined_sequence(const Model& model, const std::vector<std::string>& sequence) {
  std::string joined;
  for (const std::string& t : sequence) {
    const auto id = model.checkpoint.present() ? model.vocab.exact(t) : std::nullopt;
    joined += (joined.empty() ? "" : " ") + (id ? fmt::format("\"{}\"→{}", readable_token(model, t), *id) : t);
  }
  return joined;
}

}  // namespace

void print_heads_json(std::ostream& out, const Model& model, const HeadsReport& report) {
  nlohmann::ordered_json doc;
  doc["sequence"] = report.sequence;
  if (report.target) doc["target"] = *report.target;
  doc["heads"] = nlohmann::ordered_json::array();
  for (const ScoredHead& h : report.heads) {
    nlohmann::ordered_json j = {{"block", h.block}, {"layer", h.layer}, {"head", h.head}};
    for (const std::string& name : head_score_names(report.bidirectional)) {
      const HeadScore s = score_named(h.scores, name);
      j[name] = s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
    }
    j["role"] = strongest_role(h.scores, report.bidirectional);
    doc["heads"].push_back(j);
  }
  if (!report.ablation.empty()) doc["ablation"] = changes_json(model, report.ablation, report.changes);
  out << doc.dump() << "\n";
}

void print_heads_report(std::ostream& out, const Model& model, const std::string& source, const HeadsReport& report,
                        std::size_t width) {
  out << wrapped(fmt::format("attn heads: {}, {} tokens: {}", source, report.sequence.size(),
                             joined_sequence(model, report.sequence)),
                 width)
      << "\n";
  if (report.target)  // written as the source is, readable pieces with their ids
    out << wrapped("the decoder read: " + joined_sequence(model, *report.target), width) << "\n";
  const bool ablated = !report.ablation.empty();
  if (ablated)
    out << wrapped(fmt::format("ablated: {} (the scores below are the ablated run's)", ablation_label(report.ablation)),
                   width)
        << "\n";
  print_tables(out, report.heads, report.bidirectional, width);
  if (ablated && model.output.present) print_changes(out, model, report.changes, ablation_label(report.ablation));
}

}  // namespace attn

// attn patch on a terminal and as JSON: the two runs' metric, a heatmap per site kind of the
// normalised effect, the strongest sites.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "present/experiment_report.h"
#include "present/heatmap.h"
#include "present/terminal.h"

namespace attn {

namespace {

const char* kind_title(SiteKind kind) {
  switch (kind) {
    case SiteKind::ResidPre:
      return "resid_pre: the input of each layer (the residual stream before its first block)";
    case SiteKind::AttnOut:
      return "attn_out: each layer's self-attention output (after W_o and its bias), before the residual add";
    case SiteKind::MlpOut:
      return "mlp_out: each layer's feed-forward output, before the residual add";
    case SiteKind::Head:
      return "head: each head's context vectors (before W_o), at every position";
  }
  return "";
}

const char* stack_word(Stack stack) { return stack == Stack::Encoder ? "encoder" : "decoder"; }

const SiteStack* stack_of(const PatchResult& result, Stack stack) {
  for (const SiteStack& s : result.stacks)
    if (s.stack == stack) return &s;
  return nullptr;
}

std::string token_at(const Model& model, const SiteStack& stack, std::size_t p) {
  return p < stack.tokens.size() ? readable_token(model, stack.tokens[p]) : std::to_string(p);
}

// One cell: the shade of |v| (clamped to 1), then v with two decimals ("▓ 0.98", "░-0.12").
std::string cell_text(double v, const ReportStyle& style, std::size_t width) {
  if (std::isnan(v)) return pad_left("", width);
  const double shade = std::min(1.0, std::fabs(v));
  const std::string number = fmt::format("{:5.2f}", v);
  if (style.color && style.heatmap == HeatmapStyle::Color)
    return heatmap_cell_colors(shade, style.depth) + pad_left(number, width) + kResetSequence;
  return pad_left(heatmap_glyph(shade, style.heatmap) + number, width);
}

std::string grid_text(const EffectGrid& grid, const ReportStyle& style) {
  std::size_t label = 0, width = 6;
  for (const auto& r : grid.row_labels) label = std::max(label, display_width(r));
  for (const auto& c : grid.column_labels) width = std::max(width, display_width(c));
  std::string text = pad_right("", label);
  for (const auto& c : grid.column_labels) text += " " + pad_left(c, width);
  text += "\n";
  for (std::size_t r = 0; r < grid.row_labels.size(); ++r) {
    text += pad_right(grid.row_labels[r], label);
    for (const double v : grid.cells[r]) text += " " + cell_text(v, style, width);
    text += "\n";
  }
  return text;
}

}  // namespace

std::string site_label(const Site& site, bool with_stack) {
  const std::string where = site.kind == SiteKind::Head ? fmt::format("L{} H{}", site.layer, site.index)
                                                        : fmt::format("L{} p{}", site.layer, site.index);
  return fmt::format("{}{} {}", with_stack ? std::string(stack_word(site.stack)) + " " : "", site_kind_name(site.kind),
                     where);
}

std::vector<EffectGrid> effect_grids(const Model& model, const PatchResult& result) {
  std::vector<EffectGrid> grids;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const SiteStack& stack : result.stacks)
    for (const SiteKind kind : site_kinds()) {
      EffectGrid grid;
      const bool head = kind == SiteKind::Head;
      const std::size_t columns = head ? stack.heads : stack.positions;
      grid.title = (result.stacks.size() > 1 ? std::string(stack_word(stack.stack)) + " " : "") + kind_title(kind);
      for (std::size_t c = 0; c < columns; ++c)
        grid.column_labels.push_back(head ? fmt::format("H{}", c) : token_at(model, stack, c));
      for (int l = 0; l < stack.layers; ++l) {
        grid.row_labels.push_back(fmt::format("layer {}", l));
        grid.cells.emplace_back(columns, nan);
      }
      bool any = false;
      for (const SiteValue& s : result.sites)
        if (s.site.stack == stack.stack && s.site.kind == kind && s.site.index < columns) {
          grid.cells[static_cast<std::size_t>(s.site.layer)][s.site.index] =
              normalised_effect(s.value, result.clean, result.corrupt);
          any = true;
        }
      if (any) grids.push_back(std::move(grid));
    }
  return grids;
}

std::vector<std::string> strongest_sites(const Model& model, const PatchResult& result, std::size_t count) {
  std::vector<const SiteValue*> order;
  for (const SiteValue& s : result.sites) order.push_back(&s);
  const auto effect = [&](const SiteValue* s) {
    return std::fabs(normalised_effect(s->value, result.clean, result.corrupt));
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const SiteValue* a, const SiteValue* b) { return effect(a) > effect(b); });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < order.size() && i < count; ++i) {
    const Site& site = order[i]->site;
    const SiteStack* stack = stack_of(result, site.stack);
    const std::string token =
        site.kind == SiteKind::Head || !stack ? "" : " (\"" + token_at(model, *stack, site.index) + "\")";
    out.push_back(fmt::format("{}{} {:.2f}", site_label(site, result.stacks.size() > 1), token,
                              normalised_effect(order[i]->value, result.clean, result.corrupt)));
  }
  return out;
}

void print_patch(std::ostream& out, const Model& model, const PatchResult& result, const ReportStyle& style) {
  const SiteStack& last = result.stacks.back();
  const auto joined = [&](const std::vector<std::string>& tokens) {
    std::string text;
    for (const auto& t : tokens) text += (text.empty() ? "" : " ") + readable_token(model, t);
    return text;
  };
  const Metric& m = result.metric;
  const std::string answer = readable_token(model, m.answer);
  const std::string metric = m.wrong
                                 ? fmt::format("logit(\"{}\") - logit(\"{}\")", answer, readable_token(model, *m.wrong))
                                 : fmt::format("logit(\"{}\")", answer);
  out << fmt::format("attn patch: {}{}\n", style.model_name,
                     result.stacks.size() == 1 ? fmt::format(", {} tokens", last.positions) : "");
  for (const SiteStack& stack : result.stacks) {
    const std::string which = result.stacks.size() > 1 ? fmt::format(" ({})", stack_word(stack.stack)) : "";
    out << fmt::format("clean{}:    {}\n", which, joined(stack.tokens));
    out << fmt::format("corrupt{}:  {}\n", which, joined(stack.corrupt_tokens));
  }
  out << fmt::format("metric m = {} at the last position (after \"{}\")\n", metric,
                     token_at(model, last, last.positions - 1));
  out << fmt::format("  clean run:     m = {:.{}f}\n  corrupted run: m = {:.{}f}\n", result.clean, style.precision,
                     result.corrupt, style.precision);
  if (result.clean == result.corrupt)
    out << "the two runs give the same m: there is nothing for a patch to restore (every effect is shown as 0)\n";
  if (result.detail) {
    out << "\n" << site_arithmetic(model, result, style.precision);
    return;
  }
  out << "\nEach site: the corrupted run again with that one activation replaced by the clean run's.\n"
         "Shown: the normalised effect (m - m_corrupt) / (m_clean - m_corrupt): 1 restores the clean\n"
         "answer, 0 changes nothing.\n";
  for (const EffectGrid& grid : effect_grids(model, result)) {
    out << "\n" << grid.title << "\n";
    out << grid_text(grid, style);
  }
  const std::vector<std::string> strongest = strongest_sites(model, result, 5);
  if (!strongest.empty()) {
    out << "\nstrongest sites:\n";
    for (const std::string& s : strongest) out << "  " << s << "\n";
  }
}

std::string patch_json(const PatchResult& result) {
  nlohmann::ordered_json doc;
  doc["metric"] = result.metric.name();
  doc["clean"] = result.clean;
  doc["corrupt"] = result.corrupt;
  doc["sites"] = nlohmann::ordered_json::array();
  for (const SiteValue& s : result.sites) {
    nlohmann::ordered_json j;
    j["kind"] = site_kind_name(s.site.kind);
    if (result.stacks.size() > 1) j["stack"] = stack_word(s.site.stack);
    j["layer"] = s.site.layer;
    j[s.site.kind == SiteKind::Head ? "head" : "position"] = s.site.index;
    j["value"] = s.value;
    doc["sites"].push_back(std::move(j));
  }
  return doc.dump() + "\n";
}

}  // namespace attn

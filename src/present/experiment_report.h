// What attn patch and attn attribute show (docs/experiments.md): on a terminal, the metric of
// the two runs, one heatmap per site kind of the normalised effect and the strongest sites,
// one site's arithmetic in full; the attribution's components and their sum worked out; and
// both as JSON. The numbers are interp's (attn/experiments.h): nothing here computes a run.
#ifndef ATTN_PRESENT_EXPERIMENT_REPORT_H_
#define ATTN_PRESENT_EXPERIMENT_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "attn/experiments.h"
#include "attn/model.h"
#include "attn/walkthrough.h"

namespace attn {

struct ReportStyle {
  HeatmapStyle heatmap = HeatmapStyle::Shade;
  bool color = false;
  ColorDepth depth = ColorDepth::Basic;
  int precision = 4;
  std::string model_name;  // "example trained_induction", the folder
};

// One site as the report names it: "resid_pre L3 p5", "head L1 H1" (with the stack before it
// in a model of two stacks: "encoder resid_pre L0 p2").
std::string site_label(const Site& site, bool with_stack);

// The values of one kind at one stack as a grid: layers by positions (or heads), the
// normalised effect of each (NaN where a layer has no such site).
struct EffectGrid {
  std::string title;  // "resid_pre: the input of each layer"
  std::vector<std::string> row_labels, column_labels;
  std::vector<std::vector<double>> cells;  // rows x columns
};
std::vector<EffectGrid> effect_grids(const Model& model, const PatchResult& result);
// The strongest sites, by |normalised effect|, at most `count`: "resid_pre L1 p6 (\"f\") 0.98".
std::vector<std::string> strongest_sites(const Model& model, const PatchResult& result, std::size_t count);

void print_patch(std::ostream& out, const Model& model, const PatchResult& result, const ReportStyle& style);
std::string patch_json(const PatchResult& result);
// --site: the patch of one site worked out.
std::string site_arithmetic(const Model& model, const PatchResult& result, int precision);

void print_attribution(std::ostream& out, const Model& model, const Attribution& attribution, const Metric& metric,
                       const ReportStyle& style);
std::string attribution_json(const Attribution& attribution, const Metric& metric);

// attn explain --lens --answer: one line per layer.
std::vector<std::string> answer_lines(const std::vector<LayerAnswer>& answers, const std::string& answer);

}  // namespace attn

#endif  // ATTN_PRESENT_EXPERIMENT_REPORT_H_

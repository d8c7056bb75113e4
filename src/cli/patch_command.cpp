#include "patch_command.h"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "attn/error.h"
#include "command_run.h"
#include "html/experiment_page.h"
#include "io/output_file.h"
#include "present/experiment_report.h"
#include "present/progress.h"
#include "present/terminal.h"
#include "validators.h"

namespace attn::cli {

namespace {

// --sites: comma-separated site kinds; every kind when empty.
std::vector<SiteKind> parse_site_kinds(const std::string& text) {
  if (text.empty()) return site_kinds();
  std::vector<SiteKind> kinds;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const std::optional<SiteKind> kind = site_kind_named(name);
    if (!kind)
      throw InputError("--sites", "", fmt::format("expected resid_pre, attn_out, mlp_out or head, found \"{}\"", name));
    kinds.push_back(*kind);
    start = comma + 1;
  }
  return kinds;
}

std::size_t parse_index(const std::string& text, const std::string& option, const char* what) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    throw InputError(option, "", fmt::format("expected {} (a number from 0), found \"{}\"", what, text));
  return std::stoul(text);
}

// --positions A-B (inclusive) or A.
std::pair<std::size_t, std::size_t> parse_positions(const std::string& text) {
  if (text.empty()) return {0, SIZE_MAX};
  const std::size_t dash = text.find('-');
  if (dash == std::string::npos) {
    const std::size_t p = parse_index(text, "--positions", "a position or a range A-B");
    return {p, p};
  }
  const std::size_t a = parse_index(text.substr(0, dash), "--positions", "a range A-B");
  const std::size_t b = parse_index(text.substr(dash + 1), "--positions", "a range A-B");
  if (b < a) throw InputError("--positions", "", fmt::format("expected A <= B in A-B, found {}", text));
  return {a, b};
}

// --site KIND,LAYER,INDEX; the layer as --layer names one ("3", "encoder.1").
Site parse_site(const std::string& text, const Model& model) {
  const std::size_t a = text.find(','), b = a == std::string::npos ? a : text.find(',', a + 1);
  if (b == std::string::npos || text.find(',', b + 1) != std::string::npos)
    throw InputError("--site", "", fmt::format("expected KIND,LAYER,INDEX (resid_pre,3,5), found \"{}\"", text));
  Site site;
  site.kind = parse_site_kinds(text.substr(0, a)).front();
  const std::optional<LayerSelection> layer = parse_layer_selection(text.substr(a + 1, b - a - 1));
  if (!layer) throw InputError("--site", "", fmt::format("expected a layer (3, encoder.1), found \"{}\"", text));
  site.stack = layer->stack ? *layer->stack : model.has_decoder() ? Stack::Decoder : Stack::Encoder;
  site.layer = layer->layer;
  site.index = parse_index(text.substr(b + 1), "--site", site.kind == SiteKind::Head ? "a head" : "a position");
  return site;
}

// The corrupted text, with the clean run's target when the model has a decoder.
RunInput corrupt_input(const Model& model, const RunInput& clean, const std::string& text) {
  RunInput corrupt = clean;
  replace_source_text(model, corrupt, text, "--corrupt");
  if (model.has_target()) corrupt.target_tokens = clean.target_tokens;
  return corrupt;
}

// The sweep's progress on a terminal's stderr, "attn patch: 37/144 sites patched, 2.1 s":
// drawn once the sweep has taken half a second (ATTN_PROGRESS_AFTER), erased when it ends or
// fails. Nothing when stderr is not a terminal.
std::function<void(std::size_t, std::size_t)> progress_observer(std::unique_ptr<ProgressLine>& line) {
  if (!::isatty(STDERR_FILENO)) return {};
  line = std::make_unique<ProgressLine>(std::cerr, 0, 0);
  return [line = line.get(), started = std::chrono::steady_clock::now()](std::size_t done, std::size_t total) {
    line->show(fmt::format("attn patch: {}/{} sites patched, {:.1f} s", done, total, seconds_since(started)),
               seconds_since(started));
  };
}

ReportStyle report_style(const std::string& model_name) {
  ReportStyle style;
  style.color = use_color(ColorMode::Auto, STDOUT_FILENO);
  style.heatmap = style.color ? HeatmapStyle::Color : HeatmapStyle::Shade;
  style.depth = detect_color_depth();
  style.model_name = model_name;
  return style;
}

}  // namespace

void setup_patch(CLI::App& app, PatchOptions& options) {
  CLI::App* patch = app.add_subcommand(
      "patch",
      "Activation patching: run a corrupted text with one activation at a time taken from a clean run, and see "
      "which sites restore the answer (docs/experiments.md)");
  add_experiment_options(*patch, options.run, "--clean");
  patch->add_option("--corrupt", options.corrupt, "The corrupted text: as many tokens as the clean one")
      ->required()
      ->check(values_from(ValueList::FreeText));
  patch->add_option("--sites", options.sites, "Site kinds to patch: resid_pre,attn_out,mlp_out,head (default: all)")
      ->check(non_empty("site kinds"));
  patch->add_option("--positions", options.positions, "Only these positions: A-B (inclusive) or A")
      ->check(non_empty("a position or a range A-B"));
  patch->add_option("--site", options.site, "One site's patch worked out in full: KIND,LAYER,INDEX (resid_pre,3,5)")
      ->check(non_empty("KIND,LAYER,INDEX"));
  patch->add_option("--html", options.html_path, "Also draw the heatmaps as a web page, FILE")
      ->check(non_empty("a file name"));
  patch->add_flag("--no-resume", options.no_resume,
                  "Run every patched run from the embeddings instead of from its site's layer (slower; the same "
                  "numbers)");
  run_on_parse(*patch, options, run_patch);
}

int run_patch(const PatchOptions& options) {
  const std::unique_ptr<Session> session = open_experiment_session(options.run);
  const Model& model = session->model();
  PatchResult result;
  result.metric = experiment_metric(options.run, model);
  const RunInput corrupt = corrupt_input(model, session->input(), options.corrupt);
  const std::vector<SiteKind> kinds = parse_site_kinds(options.sites);
  const auto [first, last] = parse_positions(options.positions);
  const std::optional<Site> site = options.site.empty() ? std::nullopt : std::optional(parse_site(options.site, model));
  std::optional<OutputFile> page;  // refused before the runs when it cannot be written
  if (!options.html_path.empty()) page.emplace(options.html_path, "the page");
  PatchExperiment::Options run;
  run.max_memory_bytes = session->load_options().max_memory_bytes;
  run.resume = !options.no_resume;
  const PatchExperiment experiment(model, session->input(), corrupt, result.metric, run);
  result.clean = experiment.clean();
  result.corrupt = experiment.corrupt();
  result.stacks = experiment.stacks();
  const std::size_t positions = result.stacks.back().positions;
  if (first >= positions)
    throw InputError("--positions", "", fmt::format("expected positions 0..{}, found {}", positions - 1, first));
  std::vector<Site> sites = experiment.sites(kinds, first, last);
  if (site) {
    experiment.check_site(*site, "--site");
    sites = {*site};
    result.detail = experiment.detail(*site);
  }
  std::unique_ptr<ProgressLine> progress;
  const std::vector<double> values = experiment.each(sites, progress_observer(progress));
  if (progress) progress->clear();
  for (std::size_t i = 0; i < sites.size(); ++i) result.sites.push_back({sites[i], values[i]});
  const std::string name = session->source_name();
  if (page) {
    page->write(patch_page(model, result, "attn patch: " + name));
    page->commit();
  }
  if (options.run.json)
    std::cout << patch_json(result);
  else
    print_patch(std::cout, model, result, report_style(name));
  return 0;
}

}  // namespace attn::cli

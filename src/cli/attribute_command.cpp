#include "attribute_command.h"

#include <unistd.h>

#include <iostream>

#include "present/experiment_report.h"

namespace attn::cli {

void setup_attribute(CLI::App& app, ExperimentOptions& options) {
  CLI::App* attribute = app.add_subcommand(
      "attribute",
      "Direct logit attribution: what each head, MLP and the embedding wrote to the last position's logit, summing "
      "to it (pre-norm models; docs/experiments.md)");
  add_experiment_options(*attribute, options, "");
  attribute->callback([&options]() {
    const int code = run_attribute(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_attribute(const ExperimentOptions& options) {
  LoadOptions load;
  load.trace_kept = false;
  // A checkpoint's matrices stay as stored, widened as the products pack them (not kept twice)
  load.weights_as_stored = true;
  LoadedModel loaded = load_experiment_model(options, load);
  const Model& model = loaded.model;
  const Metric metric = experiment_metric(options, model);
  const Attribution attribution = attribute(model, loaded.input, metric);
  if (options.json) {
    std::cout << attribution_json(attribution, metric);
    return 0;
  }
  ReportStyle style;
  style.model_name = model_source_name(options.model);
  print_attribution(std::cout, model, attribution, metric, style);
  return 0;
}

}  // namespace attn::cli

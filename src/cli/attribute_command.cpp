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
  run_on_parse(*attribute, options, run_attribute);
}

int run_attribute(const ExperimentOptions& options) {
  const std::unique_ptr<Session> session = open_experiment_session(options);
  const Model& model = session->model();
  const Metric metric = experiment_metric(options, model);
  const Attribution attribution = attribute(model, session->input(), metric);
  if (options.json) {
    std::cout << attribution_json(attribution, metric);
    return 0;
  }
  ReportStyle style;
  style.model_name = session->source_name();
  print_attribution(std::cout, model, attribution, metric, style);
  return 0;
}

}  // namespace attn::cli

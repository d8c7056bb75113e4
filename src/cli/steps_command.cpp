#include "steps_command.h"

#include <iostream>

#include <fmt/format.h>

#include "attn/walkthrough.h"
#include "validators.h"

namespace attn::cli {

void setup_steps(CLI::App& app, StepsOptions& options) {
  CLI::App* steps = app.add_subcommand(
      "steps", "List every step of a run (the built-in model, -c FILE or --example NAME) with its formula and shapes");
  add_model_options(*steps, options.run.model, options.run.reading);
  steps->add_option("--layer", options.run.steps.layer, "Only one layer: 1, encoder.1 or decoder.0")
      ->check(values_from(ValueList::FreeText));
  steps->add_flag("--kinds", options.kinds, "List the step kinds --steps accepts instead");
  steps->callback([&options]() {
    if (options.kinds) {
      for (const auto& kind : step_kinds()) std::cout << fmt::format("{:<18} {}\n", kind.name, kind.description);
      return;
    }
    // explain's run, listed: titles, formulas and shapes, no colour
    PrintChoice& print = options.run.print;
    print.list_only = true;
    print.brief = true;
    print.color = "never";
    const int code = run_explain(options.run);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace attn::cli

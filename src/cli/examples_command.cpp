#include "examples_command.h"

#include <iostream>

#include <fmt/format.h>

#include "model/examples.h"

namespace attn::cli {

void setup_examples(CLI::App& app) {
  CLI::App* examples =
      app.add_subcommand("examples", "List the bundled examples; run one with 'attn explain --example NAME'");
  examples->callback([]() {
    const int code = run_examples();
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_examples() {
  std::size_t width = 0;
  for (const auto& e : bundled_examples()) width = std::max(width, std::string(e.name).size());
  for (const auto& e : bundled_examples()) std::cout << fmt::format("{:<{}}  {}\n", e.name, width, example_summary(e));
  std::cout << "\nRun one with: attn explain --example NAME   (the seed number alone also works: --example seed000)\n";
  return 0;
}

}  // namespace attn::cli

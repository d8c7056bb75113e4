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

namespace {

// "trained_sort, sort": the name, and the short name a trained model also answers to.
std::string listed_name(const BundledExample& example) {
  const std::string short_name = example_short_name(example);
  return short_name.empty() ? example.name : fmt::format("{}, {}", example.name, short_name);
}

}  // namespace

int run_examples() {
  std::size_t width = 0;
  for (const auto& e : bundled_examples()) width = std::max(width, listed_name(e).size());
  for (const auto& e : bundled_examples())
    std::cout << fmt::format("{:<{}}  {}\n", listed_name(e), width, example_summary(e));
  std::cout << "\nRun one with: attn explain --example NAME   (the seed number alone also works: --example seed000;\n"
               "a trained model answers to its task's name: attn generate --example sort \"2 0 1 1 0 2\")\n";
  return 0;
}

}  // namespace attn::cli

#include "validate_command.h"

#include "validators.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/model_file.h"

namespace attn::cli {

namespace {

std::string summary(const Model& m) {
  const ModelConfig& c = m.config;
  std::string input;
  if (m.has_tokens())
    input = m.source_tokens.texts.empty() ? "tokens" : "text";
  else
    input = shape_with_axes(m.batched ? m.input.shape : Shape(m.input.shape.begin() + 1, m.input.shape.end()),
                            m.batched ? m.input.axes : AxisNames(m.input.axes.begin() + 1, m.input.axes.end()));
  std::string parts = fmt::format("{} encoder layer{}", m.encoder.size(), m.encoder.size() == 1 ? "" : "s");
  if (m.decoder_only())
    parts = fmt::format("decoder-only (GPT-style), {} layer{}", m.decoder.size(), m.decoder.size() == 1 ? "" : "s");
  else if (!m.decoder.empty())
    parts += fmt::format(", {} decoder layer{}", m.decoder.size(), m.decoder.size() == 1 ? "" : "s");
  parts +=
      fmt::format(", d_model {}, {} head{} of d={}", c.d_model, c.num_heads, c.num_heads == 1 ? "" : "s", c.d_head);
  if (c.d_ff) parts += fmt::format(", d_ff {}", c.d_ff);
  if (!m.vocab.empty()) parts += fmt::format(", vocab {}", m.vocab.size());
  parts += fmt::format(", input {}, {} parameters", input, parameter_count(m));
  return parts;
}

}  // namespace

void setup_validate(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check model files without running them: every problem, one line each (exit 2), or a summary (exit 0)");
  validate->add_option("files", options.files, "Model files (JSON) to check; - reads standard input")
      ->required()
      ->check(non_empty("a file name"));
  validate
      ->add_option("--max-memory", options.max_memory_gib,
                   "Report runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
  validate->callback([&options]() {
    const int code = run_validate(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_validate(const ValidateOptions& options) {
  LoadOptions load;
  load.collect_all_errors = true;
  if (options.max_memory_gib > 0)
    load.max_memory_bytes = static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0);
  if (std::count(options.files.begin(), options.files.end(), "-") > 1)
    throw InputError(model_file_name("-"), "", "given more than once, but standard input can be read only once");
  int code = 0;
  for (const auto& file : options.files) {
    try {
      const Model model = load_model_file(file, load);
      std::cout << printable(model_file_name(file)) << ": valid: " << summary(model) << "\n";
    } catch (const InputErrors& e) {
      for (const auto& error : e.errors()) std::cerr << error.what() << "\n";
      code = 2;
    } catch (const InputError& e) {
      std::cerr << e.what() << "\n";
      code = 2;
    }
  }
  return code;
}

}  // namespace attn::cli

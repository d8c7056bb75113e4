#include "validate_command.h"

#include "option_groups.h"
#include "validators.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/load_model.h"
#include "attn/model_file.h"

namespace attn::cli {

namespace {

std::string summary(const Model& m, const RunInput& in) {
  const ModelConfig& c = m.config;
  std::string input;
  if (in.has_tokens())
    input = in.source_tokens.texts.empty() ? "tokens" : "text";
  else
    input = shape_with_axes(in.batched ? in.X.shape : Shape(in.X.shape.begin() + 1, in.X.shape.end()),
                            in.batched ? in.X.axes : AxisNames(in.X.axes.begin() + 1, in.X.axes.end()));
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

// What a checkpoint is: "GPT2LMHeadModel from DIR: 2 layers, d_model 4, 2 heads of d=2, d_ff
// 16, vocab 50257 rows; tokenizer byte-level BPE of 50257 tokens; up to 16 positions; N
// parameters".
std::string checkpoint_summary(const Model& m) {
  const ModelConfig& c = m.config;
  const CheckpointSource& origin = m.checkpoint;
  const std::size_t layers = m.decoder.empty() ? m.encoder.size() : m.decoder.size();  // an encoder alone: BERT's
  return fmt::format(
      "{} from {}: {} layer{}, d_model {}, {} head{} of d={}{}, d_ff {}, vocab {} rows; tokenizer {} of {} tokens; up "
      "to {} positions; {} parameters",
      origin.architecture, origin.folder, layers, layers == 1 ? "" : "s", c.d_model, c.num_heads,
      c.num_heads == 1 ? "" : "s", c.d_head,
      c.kv_heads() == c.num_heads ? std::string() : fmt::format(" ({} key/value heads)", c.kv_heads()), c.d_ff,
      m.vocab.size(), m.tokenizer->kind(), m.tokenizer->size(), origin.max_positions, parameter_count(m));
}

// Loads one model (a file, or a checkpoint with `checkpoint`) and prints what it is, or
// every problem: the exit code.
int validate_one(const std::string& source, bool checkpoint, const LoadOptions& load) {
  try {
    if (checkpoint) {
      const LoadedModel loaded = load_checkpoint(source, load);
      std::cout << printable(checkpoint_summary(loaded.model)) << "\n";
    } else {
      const LoadedModel loaded = load_model(source, load);
      std::cout << printable(model_file_name(source)) << ": valid: " << summary(loaded.model, loaded.input) << "\n";
    }
    return 0;
  } catch (const InputErrors& e) {
    for (const auto& error : e.errors()) std::cerr << error.what() << "\n";
  } catch (const InputError& e) {
    std::cerr << e.what() << "\n";
  }
  return 2;
}

}  // namespace

void setup_validate(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check model files without running them: every problem, one line each (exit 2), or a summary (exit 0)");
  validate->add_option("files", options.files, "Model files (JSON) to check; - reads standard input")
      ->check(non_empty("a file name"));
  validate
      ->add_option("--model", options.checkpoints,
                   "A Hugging Face model to check (a folder or a Hub name in the local cache); repeatable")
      ->check(non_empty("a folder or a Hub name"))
      // one folder each time: `--model DIR FILE` checks FILE as a model file, not as a second folder
      ->allow_extra_args(false);
  add_memory_option(*validate, options.max_memory_gib,
                    "Report runs estimated to need more than this many GiB (default: half the machine's memory)");
  run_on_parse(*validate, options, run_validate);
}

int run_validate(const ValidateOptions& options) {
  LoadOptions load;
  load.collect_all_errors = true;
  load.weights_as_stored = true;  // read, checked finite and counted; never computed with
  if (options.max_memory_gib > 0)
    load.max_memory_bytes = static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0);
  if (std::count(options.files.begin(), options.files.end(), "-") > 1)
    throw InputError(model_file_name("-"), "", "given more than once, but standard input can be read only once");
  if (options.files.empty() && options.checkpoints.empty())
    throw InputError("attn validate", "", "expected model files or --model DIR|NAME, found neither");
  int code = 0;
  for (const auto& file : options.files) code = std::max(code, validate_one(file, false, load));
  for (const auto& checkpoint : options.checkpoints) code = std::max(code, validate_one(checkpoint, true, load));
  return code;
}

}  // namespace attn::cli

#include "init_command.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include "attn/error.h"
#include "io/output_file.h"
#include "model/load_context.h"
#include "model/presets.h"
#include "option_groups.h"
#include "validators.h"

namespace attn::cli {

void setup_init(CLI::App& app, InitOptions& options) {
  CLI::App* init = app.add_subcommand("init",
                                      "Write a model file of a given size, every weight \"xavier_uniform\" (or "
                                      "--init): a paper-sized model in a few lines of JSON");
  std::string names;
  for (const auto& p : presets()) names += fmt::format("\n  {:<5} {}", p.name, p.description);
  init->add_option("-p,--preset", options.preset, "Start from these sizes:" + names)
      ->check(CLI::IsMember([] {
        std::vector<std::string> all;
        for (const auto& p : presets()) all.push_back(p.name);
        return all;
      }()))
      ->capture_default_str();
  init->add_option("--d-model", options.d_model, "d_model (N), replaces the preset's")
      ->transform(non_negative_integer());
  init->add_option("--heads", options.heads, "Number of heads (H), a divisor of d_model")
      ->transform(non_negative_integer());
  init->add_option("--d-ff", options.d_ff, "Feed-forward width (F); 0 for attention-only layers")
      ->transform(non_negative_integer());
  init->add_option("--layers", options.layers, "Number of encoder layers")->transform(non_negative_integer());
  init->add_option("--seq", options.seq, "Length of the random input sequence (S)")->transform(non_negative_integer());
  init->add_option("--batch", options.batch, "Number of input sequences (B); 1 writes X as one sequence (S, d_model)")
      ->transform(non_negative_integer());
  init->add_option("--seed", options.seed, "Seed of every \"randn\", as np.random.seed")
      ->transform(seed_number())
      ->capture_default_str();
  init->add_option("--init", options.init,
                   "How the layers' weights are drawn: xavier_uniform (PyTorch's, unsaturated at any size), randn, "
                   "normal_0.02 or kaiming_uniform")
      ->check(CLI::IsMember({"xavier_uniform", "randn", "normal_0.02", "kaiming_uniform"}))
      ->capture_default_str();
  init->add_option("-o,--output", options.output, "Write the model file to FILE (default: stdout)")
      ->check(non_empty("a file name"));
  init->add_flag("-f,--force", options.force, "Replace FILE if it exists");
  options.command = init;
  run_on_parse(*init, options, run_init);
}

int run_init(const InitOptions& options) {
  const Preset* preset = find_preset(options.preset);
  if (!preset) throw InputError("attn init", "--preset", fmt::format("unknown preset \"{}\"", options.preset));
  ModelSize size = preset->size;
  std::string command = "attn init --preset " + options.preset;
  // An option given on the command line replaces the preset's value.
  const auto given = [&](const char* option, std::size_t value, std::size_t& target) {
    if (options.command && options.command->count(option) == 0) return;
    // A size no model file may have would make a file nobody can load.
    if (value > kMaxDimension)
      throw InputError(
          "attn init", option,
          fmt::format("expected at most {} (the largest size a model file may give), found {}", kMaxDimension, value));
    target = value;
    command += fmt::format(" {} {}", option, value);
  };
  given("--d-model", options.d_model, size.d_model);
  given("--heads", options.heads, size.num_heads);
  given("--d-ff", options.d_ff, size.d_ff);
  given("--layers", options.layers, size.num_layers);
  given("--seq", options.seq, size.seq_len);
  given("--batch", options.batch, size.batch);
  size.seed = options.seed;
  if (options.seed != 0) command += fmt::format(" --seed {}", options.seed);
  size.init = options.init;
  if (options.init != "xavier_uniform") command += " --init " + options.init;

  const std::string comment = fmt::format(
      "Made by '{}': d_model {}, {} heads, {}{} encoder layer{}, input X of {} random sequence{} of {} tokens. Every "
      "weight is \"{}\", drawn from np.random.seed({}) in the order of docs/model-file.md.",
      command, size.d_model, size.num_heads, size.d_ff ? fmt::format("d_ff {}, ", size.d_ff) : "no feed-forward, ",
      size.num_layers, size.num_layers == 1 ? "" : "s", size.batch, size.batch == 1 ? "" : "s", size.seq_len, size.init,
      size.seed);
  const std::string text = model_file_text(size, comment, "attn init");

  if (options.output != "-" && !options.force) {
    struct stat st {};
    if (::stat(options.output.c_str(), &st) == 0)
      throw InputError(options.output, "", "already exists; use --force to replace it");
  }
  OutputFile out(options.output, "the model file");
  out.write(text);
  out.commit();
  return 0;
}

}  // namespace attn::cli

// `attn train`: learn every weight of a model from examples, or run one of the built-in
// tasks (copy, reverse, sort, translate), and write the trained model as a model file
// (docs/training.md).
#ifndef ATTN_CLI_TRAIN_COMMAND_H_
#define ATTN_CLI_TRAIN_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace attn::cli {

struct TrainCommandOptions {
  std::string model_file;  // -c FILE
  std::string data_file;   // --data FILE (JSON Lines)
  std::string task;        // --task NAME: its own model and data
  std::string output;      // -o FILE: the trained model
  std::string eval_file;   // --eval FILE: held-out examples
  std::string log_file;    // --log FILE: JSON Lines, a line per step and per evaluation
  std::size_t d_model = 0, heads = 0, d_ff = 0, layers = 0;  // --task's model sizes
  std::size_t steps = 0, epochs = 0, batch_size = 32, warmup = 0, eval_every = 0;
  std::string optimizer = "adam", schedule = "constant";
  double lr = 1e-3, weight_decay = 0, momentum = 0, clip = 0;
  std::uint32_t seed = 0;
  bool no_shuffle = false;
  bool quiet = false;          // no progress line, no summary
  bool force = false;          // replace an existing -o FILE
  std::string curve = "auto";  // auto | unicode | ascii | none
  double max_memory_gib = 0;
  const CLI::App* command = nullptr;  // which options were given
};

void setup_train(CLI::App& app, TrainCommandOptions& options);
// How errors name what is trained: the -c model file, or "attn train --task copy".
std::string train_source_name(const TrainCommandOptions& options);
// Returns the process exit code; throws attn::InputError for bad options or data.
int run_train(const TrainCommandOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_TRAIN_COMMAND_H_

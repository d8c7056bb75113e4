// `attn init`: write a model file of a given size whose weights are all "randn", from a
// preset (tiny, base, big) and/or explicit sizes.
#ifndef ATTN_CLI_INIT_COMMAND_H_
#define ATTN_CLI_INIT_COMMAND_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace attn::cli {

struct InitOptions {
  std::string preset = "tiny";
  std::size_t d_model = 0, heads = 0, d_ff = 0, layers = 0, seq = 0, batch = 0;  // given: replaces the preset's
  std::uint32_t seed = 0;
  std::string init = "xavier_uniform";
  std::string output = "-";           // -o FILE; "-": stdout
  bool force = false;                 // replace an existing FILE
  const CLI::App* command = nullptr;  // to ask which options were given
};

void setup_init(CLI::App& app, InitOptions& options);
// Returns the process exit code; throws attn::InputError for bad sizes or an unwritable FILE.
int run_init(const InitOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_INIT_COMMAND_H_

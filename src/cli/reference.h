// The man page attn(1) and the bash and zsh completions, generated from the command line
// itself (the CLI11 app main() builds), so that they list every subcommand and option
// there is, with the same descriptions as --help: a new subcommand appears in them
// without any change here. The build runs the binary to write them (src/cli/CMakeLists.txt):
//   attn --man-page                  attn(1), in roff (man -l to read it)
//   attn --completion bash|zsh       the completion script for that shell
// These two are read before the command line is parsed, and --help does not list them
// (docs/cli.md does).
#ifndef ATTN_CLI_REFERENCE_H_
#define ATTN_CLI_REFERENCE_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attn::cli {

// One option or positional argument, as the reference shows it.
struct OptionReference {
  std::vector<std::string> names;  // "-c", "--config"; a positional's name alone ("text")
  bool positional = false;
  bool takes_value = false;  // false for flags
  bool repeats = false;      // a positional that takes several values ("files...")
  bool required = false;
  std::string type;           // as --help shows it: "TEXT", "UINT:UINT", "TEXT:{auto,always,never}"
  std::string default_value;  // "" when none is shown
  std::string description;
  std::vector<std::string> choices;   // the values it accepts or suggests, when it lists them
  std::string choices_are;            // what they are, for the man page: "One of", "Step kinds", ...
  std::vector<std::string> excludes;  // the options it cannot go with
  // How a shell completes the value: "choices", "files" (text), "none" (numbers).
  std::string completion;
};

struct CommandReference {
  std::string name;  // "" for attn itself
  std::string description;
  std::vector<OptionReference> options;  // in --help's order: positionals first
};

struct ProgramReference {
  std::string name;  // "attn"
  std::string version;
  CommandReference program;                // attn's own options
  std::vector<CommandReference> commands;  // its subcommands, in --help's order
};

// Reads the app's subcommands and options. Non-const: CLI11 2.1 finds validators only so.
ProgramReference describe_program(CLI::App& app, const std::string& name, const std::string& version);

void write_man_page(const ProgramReference& program, std::ostream& out);
void write_bash_completion(const ProgramReference& program, std::ostream& out);
void write_zsh_completion(const ProgramReference& program, std::ostream& out);

// When argv is `attn --man-page` or `attn --completion bash|zsh`, writes it to stdout and
// returns the exit code (2, with a line on stderr, for another shell); otherwise nullopt.
std::optional<int> write_reference_if_asked(CLI::App& app, const std::string& version, int argc, char** argv);

}  // namespace attn::cli

#endif  // ATTN_CLI_REFERENCE_H_

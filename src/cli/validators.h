// Option checks shared by the subcommands.
#ifndef ATTN_CLI_VALIDATORS_H_
#define ATTN_CLI_VALIDATORS_H_

#include <string>

#include <CLI/CLI.hpp>

namespace attn::cli {

// For options read into unsigned integers: CLI11 2.1 reads "-5" into one as 2^64 - 5, and
// its own NonNegativeNumber prints the range 0 to 1.8e308 in full. This says, on one line:
//   --seq: expected a non-negative integer, found -5
inline CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        return digits ? std::string() : "expected a non-negative integer, found " + value;
      },
      "UINT", "non-negative integer");
}

}  // namespace attn::cli

#endif  // ATTN_CLI_VALIDATORS_H_

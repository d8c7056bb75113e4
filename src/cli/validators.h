// Option checks shared by the subcommands.
#ifndef ATTN_CLI_VALIDATORS_H_
#define ATTN_CLI_VALIDATORS_H_

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace attn::cli {

// For options read into unsigned integers (given with ->transform, since it rewrites the
// value): CLI11 2.1 reads "-5" into one as 2^64 - 5, and
// its own NonNegativeNumber prints the range 0 to 1.8e308 in full. This says, on one line:
//   --seq: expected a non-negative integer, found -5
inline CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const bool digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
        // Beyond 2^64 - 1 CLI11 would quietly keep the largest value instead.
        const std::string largest = "18446744073709551615";
        const std::string significant = value.substr(std::min(value.find_first_not_of('0'), value.size()));
        const bool fits =
            significant.size() < largest.size() || (significant.size() == largest.size() && significant <= largest);
        if (!digits || !fits) return "expected a non-negative integer, found " + value;
        // CLI11 would read a leading zero as octal (012 as 10): the number is decimal.
        value = significant.empty() ? "0" : significant;
        return std::string();
      },
      "UINT", "non-negative integer");
}

// --seed: np.random.seed's range, 0 to 2^32 - 1, said as such (CLI11 said only "Could not
// convert" past it).
inline CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const std::string problem = non_negative_integer()(value);
        if (problem.empty() && (value.size() < 10 || (value.size() == 10 && value <= "4294967295"))) return problem;
        return "expected an integer from 0 to 4294967295 (np.random.seed's range), found " + value;
      },
      "UINT", "seed");
}

// --max-memory: a number of GiB that means something. A tiny one would round to no limit
// at all, and inf or 1e400 would overflow the conversion to bytes.
constexpr double kMinMemoryGiB = 0.000001;  // about 1 KiB
constexpr double kMaxMemoryGiB = 1048576;   // 1 PiB
inline CLI::Validator memory_limit_gib() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double gib = std::strtod(value.c_str(), &end);
        const bool number = !value.empty() && *end == '\0' && errno == 0 && std::isfinite(gib);
        if (number && gib >= kMinMemoryGiB && gib <= kMaxMemoryGiB) return std::string();
        return "expected a number of GiB from 0.000001 to 1048576, found " + value;
      },
      "GiB", "memory limit");
}

// Real-valued options: a finite number in a range, else one line naming what was expected:
//   --lr: expected a finite number > 0, found nan
// (CLI11's own checks let nan through, and print the range 0 to 1.8e308 in 309 digits for inf.)
// A number too large for a double (1e400) is refused as not finite; one too small (1e-320)
// is kept as the tiny number it is.
// `range` says the bounds in words ("> 0"); high may be +inf (no upper bound).
inline CLI::Validator finite_number(double low, bool low_closed, double high, bool high_closed,
                                    const std::string& range) {
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(value.c_str(), &end);
        const bool number = !value.empty() && *end == '\0' && std::isfinite(x);
        const bool above = low_closed ? x >= low : x > low;
        const bool below = high_closed ? x <= high : x < high;
        if (number && above && below) return std::string();
        return "expected a finite number " + range + ", found " + value;
      },
      "FLOAT", "finite number");
}
constexpr double kNoBound = HUGE_VAL;

// Options that name something: an empty value ('') names nothing.
inline CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& value) -> std::string {
        return value.empty() ? "expected " + what + ", found an empty string" : std::string();
      },
      "", "non-empty");
}

// What the values of an option are, for the shell completions and the man page
// (reference.h): a validator that accepts everything and only carries its name.
// Options with a list of choices (CLI::IsMember) need none: the completions offer the
// choices; other text values complete as file names unless marked FreeText (a sentence,
// a layer: nothing to offer), numbers as nothing.
enum class ValueList { Examples, StepKinds, FreeText };
inline const char* value_list_name(ValueList list) {
  return list == ValueList::Examples    ? "values:examples"
         : list == ValueList::StepKinds ? "values:step-kinds"
                                        : "values:text";
}
inline CLI::Validator values_from(ValueList list) {
  return CLI::Validator([](std::string&) { return std::string(); }, "", value_list_name(list));
}

}  // namespace attn::cli

#endif  // ATTN_CLI_VALIDATORS_H_

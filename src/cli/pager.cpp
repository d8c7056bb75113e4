#include "pager.h"

#include <algorithm>

#include <fmt/format.h>

namespace attn::cli {

namespace {

// The index of the place of step `step`, or places.size() when it was not shown.
std::size_t place_of(const std::vector<StepPlace>& places, int step) {
  for (std::size_t i = 0; i < places.size(); ++i)
    if (places[i].step == step) return i;
  return places.size();
}

// A step number as typed, or -1.
int typed_step(const std::string& answer) {
  if (answer.empty() || answer.size() > 7 || answer.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(answer);
}

}  // namespace

void page_steps(const std::string& text, const std::vector<StepPlace>& places, std::istream& in, std::ostream& out,
                std::ostream& prompt) {
  if (places.empty()) {
    out << text;
    return;
  }
  const auto chunk = [&](std::size_t i) {
    const std::size_t from = i == 0 ? 0 : places[i].offset;
    const std::size_t to = i + 1 < places.size() ? places[i + 1].offset : text.size();
    return text.substr(from, to - from);
  };
  std::size_t i = 0;
  out << chunk(0) << std::flush;
  while (i + 1 < places.size()) {
    prompt << fmt::format("[step {} (steps {} to {}): Enter next, b back, a number jumps, q quits] ", places[i].step,
                          places.front().step, places.back().step)
           << std::flush;
    std::string answer;
    if (!std::getline(in, answer)) {  // no more input: run to the end
      for (std::size_t k = i + 1; k < places.size(); ++k) out << chunk(k);
      return;
    }
    answer.erase(0, answer.find_first_not_of(' '));
    answer.erase(answer.find_last_not_of(' ') + 1);
    std::size_t next = i + 1;
    if (answer == "q" || answer == "Q") {
      out << fmt::format("\n(stopped at step {})\n", places[i].step);
      return;
    } else if (answer == "b" || answer == "B") {
      next = i == 0 ? 0 : i - 1;
    } else if (!answer.empty()) {
      next = place_of(places, typed_step(answer));
      if (next == places.size()) {
        prompt << fmt::format("(no step \"{}\" here: type a number from {} to {})\n", answer, places.front().step,
                              places.back().step);
        continue;
      }
    }
    i = next;
    out << chunk(i) << std::flush;
  }
}

}  // namespace attn::cli

#include "pager.h"

#include <algorithm>

#include <fmt/format.h>

#include "attn/error.h"

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

// The text of the i-th step (with what comes before the first).
std::string chunk(const PagedText& paged, std::size_t i) {
  const std::size_t from = i == 0 ? 0 : paged.places[i].offset;
  const std::size_t to = i + 1 < paged.places.size() ? paged.places[i + 1].offset : paged.text.size();
  return paged.text.substr(from, to - from);
}

}  // namespace

bool read_answer(std::istream& in, std::string& answer) {
  answer.clear();
  std::size_t read = 0;
  for (int c = in.get(); c != std::char_traits<char>::eof(); c = in.get()) {
    if (c == '\n') return true;
    if (++read > kLongestLine) return false;
    if (answer.size() < kLongestAnswer) answer.push_back(static_cast<char>(c));
  }
  return read > 0;
}

void page_steps(const PagedText& walkthrough, const PagedText* in_full, std::istream& in, std::ostream& out,
                std::ostream& prompt) {
  const std::vector<StepPlace>& places = walkthrough.places;
  if (places.empty()) {
    out << walkthrough.text;
    return;
  }
  // A step jumped to, in full when the full text has it.
  const auto jumped_to = [&](std::size_t i) {
    if (in_full) {
      const std::size_t j = place_of(in_full->places, places[i].step);
      if (j < in_full->places.size()) return chunk(*in_full, j);
    }
    return chunk(walkthrough, i);
  };
  std::size_t i = 0;
  out << chunk(walkthrough, 0) << std::flush;
  while (i + 1 < places.size()) {
    prompt << fmt::format("[step {} (steps {} to {}): Enter next, b back, a number jumps, q quits] ", places[i].step,
                          places.front().step, places.back().step)
           << std::flush;
    std::string answer;
    if (!read_answer(in, answer)) {  // no more input: run to the end
      for (std::size_t k = i + 1; k < places.size(); ++k) out << chunk(walkthrough, k);
      return;
    }
    answer.erase(0, answer.find_first_not_of(' '));
    answer.erase(answer.find_last_not_of(' ') + 1);
    std::size_t next = i + 1;
    bool jump = false;
    if (answer == "q" || answer == "Q") {
      out << fmt::format("\n(stopped at step {})\n", places[i].step);
      return;
    } else if (answer == "b" || answer == "B") {
      next = i == 0 ? 0 : i - 1;
    } else if (!answer.empty()) {
      next = place_of(places, typed_step(answer));
      if (next == places.size()) {
        prompt << fmt::format("(no step \"{}\" here: type a number from {} to {})\n", printable(answer),
                              places.front().step, places.back().step);
        continue;
      }
      jump = true;
    }
    i = next;
    out << (jump ? jumped_to(i) : chunk(walkthrough, i)) << std::flush;
  }
}

}  // namespace attn::cli

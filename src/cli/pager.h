// --pause: the walkthrough one step at a time, for teaching live.
#ifndef ATTN_CLI_PAGER_H_
#define ATTN_CLI_PAGER_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "attn/walkthrough.h"

namespace attn::cli {

// A walkthrough's text and where each shown step starts in it.
struct PagedText {
  std::string text;
  std::vector<StepPlace> places;
};

// The longest answer kept from a line typed at the prompt (the rest is dropped), and the
// longest line read at all: past it, the input is no one typing (attn explain --pause <
// /dev/zero) and is treated as its end, so it takes neither memory nor forever.
constexpr std::size_t kLongestAnswer = 64;
constexpr std::size_t kLongestLine = 4096;

// Shows `walkthrough` one step at a time (what comes before the first step goes with it),
// asking on `prompt` after each: Enter shows the next step, b the one before, a step number
// that step, q quits. A step jumped to is shown from `in_full` when given (the same
// walkthrough with every step in full, --full's), since a step met before in the order may
// be drawn as one line. At the end of `in` the rest is shown.
void page_steps(const PagedText& walkthrough, const PagedText* in_full, std::istream& in, std::ostream& out,
                std::ostream& prompt);

// One line of `in`, its first kLongestAnswer characters; false at the end of the input
// with nothing read, or after kLongestLine characters without a newline.
bool read_answer(std::istream& in, std::string& answer);

}  // namespace attn::cli

#endif  // ATTN_CLI_PAGER_H_

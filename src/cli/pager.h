// --pause: the walkthrough one step at a time, for teaching live.
#ifndef ATTN_CLI_PAGER_H_
#define ATTN_CLI_PAGER_H_

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "attn/walkthrough.h"

namespace attn::cli {

// Shows `text` one step at a time (`places`: where each shown step starts; what comes
// before the first goes with it), asking on `prompt` after each: Enter shows the next step,
// b the one before, a step number that step, q quits. At the end of `in` the rest is shown.
void page_steps(const std::string& text, const std::vector<StepPlace>& places, std::istream& in, std::ostream& out,
                std::ostream& prompt);

}  // namespace attn::cli

#endif  // ATTN_CLI_PAGER_H_

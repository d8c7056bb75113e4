// The loss curve attn train draws in the terminal when it ends: the loss of every step,
// as columns of block characters (Unicode ▁▂▃▄▅▆▇█, or ASCII for terminals without it).
#ifndef ATTN_LOSS_CURVE_H_
#define ATTN_LOSS_CURVE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace attn {

struct LossCurveOptions {
  std::size_t width = 75;  // the whole picture's columns, labels included
  std::size_t height = 8;  // rows of the plot
  bool unicode = true;     // block characters in eighths; ASCII '#' and '.' otherwise
};

// The picture, lines ending in '\n': the y axis from 0 to the largest loss, one column per
// run of steps (their mean), the x axis labelled with the first and last step:
//   loss 2.312 ┤█▇
//              │ █▆▄
//              │  ██▆▃▂▁▁▁
//            0 ┤█████████████▁▁▁▁▁
//              └──────────────────
//               1          step 600
// "" for no losses.
std::string loss_curve(const std::vector<double>& losses, const LossCurveOptions& options);

// Whether the terminal shows the block characters: not when TERM is "dumb", nor when the
// locale (LC_ALL, else LC_CTYPE, else LANG) is set and does not say UTF-8.
bool terminal_shows_unicode();

}  // namespace attn

#endif  // ATTN_LOSS_CURVE_H_

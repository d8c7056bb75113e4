// A probability as a table shows it: with `decimals` digits after the point while that shows
// a digit that is not zero ("0.93", "0.0125" with 4), and with its two significant digits
// below that ("0.0012", "3.4e-07"), so that a small probability never reads as 0.00. Zero is
// "0" with its decimals ("0.00").
#ifndef ATTN_PRESENT_PROBABILITY_TEXT_H_
#define ATTN_PRESENT_PROBABILITY_TEXT_H_

#include <string>

namespace attn {

std::string probability_text(double p, int decimals);

}  // namespace attn

#endif  // ATTN_PRESENT_PROBABILITY_TEXT_H_

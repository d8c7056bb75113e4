// The pieces worked arithmetic is written with (worked_arithmetic.cpp for the forward's
// steps, worked_backward.cpp for the backward's): lists, sums, factors and labelled lines.
// Internal to present/.
#ifndef ATTN_PRESENT_WORKED_TEXT_H_
#define ATTN_PRESENT_WORKED_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace attn::worked_text {

// The indices shown of a list of n: all, or the first max_terms - 1, an ellipsis, the last.
std::vector<std::size_t> shown(std::size_t n, std::size_t max_terms);
// "[a, b, …, z]"
std::string bracketed(const std::vector<std::string>& items, std::size_t max_terms);
// " + t", or " - |t|" when t is negative: a term added after others.
std::string signed_term(const std::string& text);
// "a + b - c + … + z": a negative term after the first is subtracted.
std::string sum_text(const std::vector<std::string>& terms, std::size_t max_terms);
// "a×b + c×d + …" with the given separator between shown items.
std::string joined(const std::vector<std::string>& items, std::string_view separator, std::size_t max_terms);
// A factor in a product: negative numbers in brackets, "1.34×(-0.5)".
std::string factor(const std::string& text);
// Steps of a calculation joined by " = ", a step that reads the same as the one before
// left out: a one-term sum is "sum = 1", not "sum = 1 = 1".
std::string chain(const std::vector<std::string>& steps);
// A line "label = text" with the label padded to `width`, indented by two spaces.
std::string labelled(const std::string& label, std::size_t width, const std::string& text);

}  // namespace attn::worked_text

#endif  // ATTN_PRESENT_WORKED_TEXT_H_

// Progress of a long run, for stderr when it is a terminal: one line redrawn in place,
//   attn: encoder layer 3/6 (attention.scores), 33% of the layers, 1.2 s, dump 350.2 MB
// Quick runs (under half a second) never show it.
#ifndef ATTN_PRESENT_PROGRESS_H_
#define ATTN_PRESENT_PROGRESS_H_

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "attn/trace.h"

namespace attn {

class ProgressLine {
 public:
  ProgressLine(std::ostream& out, std::size_t encoder_layers, std::size_t decoder_layers)
      : out_(out), encoder_layers_(encoder_layers), decoder_layers_(decoder_layers) {}
  // (A run that ends in an error leaves no line behind its message.)
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Called with each record's trace name, the dump's size so far (0: no dump) and the
  // seconds since the run began. Redraws when the run has taken half a second and a tenth
  // of a second has passed since the last redraw.
  void update(const StepId& record, std::uint64_t dump_bytes, double seconds);
  // The same with a text of the caller's ("attn: token 5 of at most 40, 3.1 s").
  void show(const std::string& text, double seconds);
  // Erases the line, if one was drawn.
  void clear();

  // The text of the line (without the carriage return).
  std::string describe(const StepId& record, std::uint64_t dump_bytes, double seconds) const;

 private:
  std::ostream& out_;
  std::size_t encoder_layers_, decoder_layers_;
  double last_draw_ = -1;
  bool drawn_ = false;
};

}  // namespace attn

#endif  // ATTN_PRESENT_PROGRESS_H_

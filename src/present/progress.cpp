#include "present/progress.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "attn/step_roles.h"

namespace attn {

namespace {
constexpr double kRedraw = 0.1;  // seconds between redraws

// Seconds before the line appears: 0.5 (short runs never show it), or ATTN_PROGRESS_AFTER's
// number of seconds (the tests' 0 shows it whatever the machine's speed).
double first_draw() {
  static const double seconds = [] {
    const char* text = std::getenv("ATTN_PROGRESS_AFTER");
    if (text == nullptr || *text == '\0') return 0.5;
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    return *end == '\0' && value >= 0 && value <= 1e6 ? value : 0.5;
  }();
  return seconds;
}
}  // namespace

std::string ProgressLine::describe(const StepId& id, std::uint64_t dump_bytes, double seconds) const {
  const std::size_t total = encoder_layers_ + decoder_layers_;
  std::string where;
  std::size_t done = 0;  // layers finished before this record
  if (id.in_layer()) {
    // encoder.3.attention.scores: layer 3 of the encoder, step "attention.scores"
    const bool encoder = id.stack == Stack::Encoder;
    const auto layer = static_cast<std::size_t>(id.layer);
    done = (encoder ? 0 : encoder_layers_) + layer;
    where = fmt::format("{} layer {}/{} ({})", encoder ? "encoder" : "decoder", layer + 1,
                        encoder ? encoder_layers_ : decoder_layers_, trace_name(id).substr(layer_name(id).size() + 1));
  } else {
    const bool after = is_model_output(id.kind) || is_final_norm(id.kind);
    where = after ? "output head" : "input";
    done = after ? total : id.sequence == Sequence::Target ? encoder_layers_ : 0;
  }
  std::string line =
      fmt::format("attn: {}, {}% of the layers, {:.1f} s", where, total ? done * 100 / total : 100, seconds);
  if (dump_bytes) line += fmt::format(", dump {:.1f} MB", static_cast<double>(dump_bytes) / 1e6);
  return line;
}

void ProgressLine::update(const StepId& id, std::uint64_t dump_bytes, double seconds) {
  if (seconds < first_draw() || (drawn_ && seconds - last_draw_ < kRedraw)) return;
  show(describe(id, dump_bytes, seconds), seconds);
}

void ProgressLine::show(const std::string& text, double seconds) {
  if (seconds < first_draw() || (drawn_ && seconds - last_draw_ < kRedraw)) return;
  // \r back to the start of the line, ESC [K erases what is left of the previous text.
  out_ << '\r' << text << "\x1b[K" << std::flush;
  last_draw_ = seconds;
  drawn_ = true;
}

void ProgressLine::clear() {
  if (drawn_) out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace attn

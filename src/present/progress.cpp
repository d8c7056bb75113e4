#include "present/progress.h"

#include <fmt/format.h>

namespace attn {

namespace {
constexpr double kFirstDraw = 0.5;  // seconds before the line appears
constexpr double kRedraw = 0.1;     // seconds between redraws
}  // namespace

std::string ProgressLine::describe(const std::string& name, std::uint64_t dump_bytes, double seconds) const {
  const std::size_t total = encoder_layers_ + decoder_layers_;
  std::string where;
  std::size_t done = 0;  // layers finished before this record
  // "encoder.3.attention.scores" -> layer 3 of the encoder, step "attention.scores"
  for (const char* stack : {"encoder", "decoder"}) {
    const std::string prefix = std::string(stack) + ".";
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::size_t dot = name.find('.', prefix.size());
    const std::string index =
        name.substr(prefix.size(), dot == std::string::npos ? std::string::npos : dot - prefix.size());
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::size_t layer = std::stoul(index);
    const std::size_t layers = stack[0] == 'e' ? encoder_layers_ : decoder_layers_;
    done = (stack[0] == 'e' ? 0 : encoder_layers_) + layer;
    where = fmt::format("{} layer {}/{} ({})", stack, layer + 1, layers,
                        dot == std::string::npos ? "" : name.substr(dot + 1));
  }
  if (where.empty()) {
    const bool after = name.compare(0, 7, "output.") == 0 || name == "encoder.norm" || name == "decoder.norm";
    where = after ? "output head" : "input";
    done = after ? total : 0;
    if (name.compare(0, 7, "target_") == 0 || name == "decoder.self_mask" || name == "decoder.cross_mask")
      done = encoder_layers_;
  }
  std::string line =
      fmt::format("attn: {}, {}% of the layers, {:.1f} s", where, total ? done * 100 / total : 100, seconds);
  if (dump_bytes) line += fmt::format(", dump {:.1f} MB", static_cast<double>(dump_bytes) / 1e6);
  return line;
}

void ProgressLine::update(const std::string& name, std::uint64_t dump_bytes, double seconds) {
  if (seconds < kFirstDraw || (drawn_ && seconds - last_draw_ < kRedraw)) return;
  // \r back to the start of the line, ESC [K erases what is left of the previous text.
  out_ << '\r' << describe(name, dump_bytes, seconds) << "\x1b[K" << std::flush;
  last_draw_ = seconds;
  drawn_ = true;
}

void ProgressLine::clear() {
  if (drawn_) out_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
}

}  // namespace attn

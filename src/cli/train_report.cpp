#include "train_report.h"

#include <iostream>

#include <fmt/format.h>

#include "attn/loss_curve.h"
#include "io/number_text.h"

namespace attn::cli {

namespace {

std::string percent(std::size_t part, std::size_t whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "n/a";
}

}  // namespace

std::string exact_match_text(const EvalReport& report) {
  return fmt::format("exact match {} ({}/{})", percent(report.exact, report.examples), report.exact, report.examples);
}

std::string TrainProgress::describe(const StepReport& r, const std::optional<EvalReport>& eval, double seconds) {
  std::string line = fmt::format("step {}/{}  loss {:.4f}", r.step, r.total, r.loss);
  if (r.counted) line += "  acc " + percent(r.correct, r.counted);
  if (eval && eval->has_labels) line += "  held-out " + percent(eval->exact, eval->examples);
  const double rate = seconds > 0 ? static_cast<double>(r.step) / seconds : 0;
  if (rate > 0)
    line += fmt::format("  {:.0f} steps/s  {:.0f} s left", rate, static_cast<double>(r.total - r.step) / rate);
  return line;
}

void TrainProgress::step(const StepReport& report) {
  if (!shown_) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (last_draw_ >= 0 && seconds - last_draw_ < 0.1 && report.step != report.total) return;
  last_draw_ = seconds;
  std::cerr << "\r\033[K" << describe(report, last_eval_, seconds) << std::flush;
  drawn_ = true;
}

void TrainProgress::clear() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

TrainLog::TrainLog(const std::string& path) {
  if (!path.empty()) file_ = std::make_unique<OutputFile>(path, "the log");
}

void TrainLog::step(const StepReport& r) {
  if (!file_) return;
  std::string line = fmt::format("{{\"step\": {}, \"loss\": {}, \"lr\": {}, \"grad_norm\": {}", r.step,
                                 shortest_text(r.loss), shortest_text(r.lr), shortest_text(r.grad_norm));
  if (r.counted)
    line += ", \"accuracy\": " + shortest_text(static_cast<double>(r.correct) / static_cast<double>(r.counted));
  file_->write(line + "}\n");
}

void TrainLog::eval(std::size_t step, const EvalReport& r) {
  if (!file_) return;
  std::string line = fmt::format("{{\"step\": {}, \"eval_loss\": {}", step, shortest_text(r.loss));
  if (r.has_labels)
    line += fmt::format(", \"eval_exact_match\": {}, \"eval_token_accuracy\": {}", shortest_text(r.exact_match()),
                        shortest_text(static_cast<double>(r.correct) / static_cast<double>(r.counted)));
  file_->write(line + "}\n");
}

void TrainLog::commit() {
  if (file_) file_->commit();
}

std::string train_summary(const std::vector<double>& losses, const std::optional<EvalReport>& held_out,
                          const std::string& held_out_source, const std::string& curve_style, std::size_t width) {
  std::string out = fmt::format("{} step{}: loss {:.4f} at the first, {:.4f} at the last\n", losses.size(),
                                losses.size() == 1 ? "" : "s", losses.front(), losses.back());
  if (curve_style != "none") {
    LossCurveOptions curve;
    curve.width = width;
    curve.unicode = curve_style == "unicode" || (curve_style == "auto" && terminal_shows_unicode());
    out += loss_curve(losses, curve);
  }
  if (held_out) {
    out += fmt::format("held-out ({}, {} examples): loss {:.4f}", held_out_source, held_out->examples, held_out->loss);
    if (held_out->has_labels)
      out += fmt::format(", {}, tokens {:.1f}%", exact_match_text(*held_out),
                         100.0 * static_cast<double>(held_out->correct) / static_cast<double>(held_out->counted));
    out += "\n";
  }
  return out;
}

}  // namespace attn::cli

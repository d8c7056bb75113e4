// What attn train reports while it runs and when it ends: the progress line (stderr, a
// terminal only), the log (JSON Lines) and the summary with the loss curve (stdout).
#ifndef ATTN_CLI_TRAIN_REPORT_H_
#define ATTN_CLI_TRAIN_REPORT_H_

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attn/train.h"
#include "io/output_file.h"

namespace attn::cli {

// The line redrawn on stderr, at most ten times a second:
//   step 120/600  loss 0.4321  acc 93.1%  held-out 88.0%  55 steps/s  9 s left
class TrainProgress {
 public:
  explicit TrainProgress(bool shown) : shown_(shown), start_(std::chrono::steady_clock::now()) {}
  void step(const StepReport& report);
  void eval(const EvalReport& report) { last_eval_ = report; }
  void clear();
  static std::string describe(const StepReport& report, const std::optional<EvalReport>& eval, double seconds);

 private:
  bool shown_;
  std::chrono::steady_clock::time_point start_;
  double last_draw_ = -1;
  bool drawn_ = false;
  std::optional<EvalReport> last_eval_;
};

// --log FILE: one JSON object per line, written as the run goes, the file committed (written
// whole or not at all) when it ends:
//   {"step": 1, "loss": 2.31, "lr": 0.001, "grad_norm": 1.73, "accuracy": 0.12}
//   {"step": 100, "eval_loss": 0.41, "eval_exact_match": 0.87, "eval_token_accuracy": 0.97}
class TrainLog {
 public:
  explicit TrainLog(const std::string& path);
  void step(const StepReport& report);
  void eval(std::size_t step, const EvalReport& report);
  void commit();

 private:
  std::unique_ptr<OutputFile> file_;
};

// The summary at the end: the steps and how the loss went, the curve, the held-out figures.
std::string train_summary(const std::vector<double>& losses, const std::optional<EvalReport>& held_out,
                          const std::string& held_out_source, const std::string& curve_style, std::size_t width);
// "exact match 99.4% (497/500)".
std::string exact_match_text(const EvalReport& report);

}  // namespace attn::cli

#endif  // ATTN_CLI_TRAIN_REPORT_H_

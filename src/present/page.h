// The walkthrough's output: numbered steps with their headers, and everything printed
// inside a step. Every line goes through a Page, so the learner's filters (--steps,
// --layer, --batch, --head, --brief) and modes (attn steps' list, colour) apply to all
// printers alike.
#ifndef ATTN_PRESENT_PAGE_H_
#define ATTN_PRESENT_PAGE_H_

#include <optional>
#include <ostream>
#include <string>

#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"

namespace attn {

// Thrown to stop the walkthrough when the learner quits a paused session.
struct StopWalkthrough {};

class Page {
 public:
  Page(std::ostream& out, const Model& model, const WalkthroughOptions& options)
      : out_(out), model_(model), options_(options) {}

  // Starts step number step()+1, of the kind --steps and `attn steps` call `shown_kind`,
  // titled `title`, explained by explanation_for(why); returns whether it is shown.
  bool begin_step(const char* shown_kind, const std::string& title, const std::string& why);
  int step() const { return step_; }
  bool shown() const { return shown_; }

  // Headers when the walkthrough enters a new layer or a new block of one, printed with the
  // next step that is shown.
  void enter(const StepId& id);
  // Steps outside any layer (tokens, masks, the output head): headers of a layer whose
  // steps were all filtered out must not stick to them.
  void leave_layer();

  // The lines of a step.
  void formula(const std::string& text);
  void shapes(const std::string& text);
  void line(const std::string& text);
  void note(const std::string& text);
  // Multi-line text (worked arithmetic, tables, heatmaps), indented.
  void indented(const std::string& text);
  void worked(const std::string& text, const char* heading = "worked, one element:");
  // A tensor as NumPy prints it, with its stats line, sliced by --batch and --head.
  void tensor(const std::string& label, const Tensor& full, bool integers = false, bool stats = true);
  // A weight, when weights are shown.
  void weight(const std::string& label, const Tensor& w);
  // Raw lines (the side-by-side head matrices), when the step is shown in full.
  void raw(const std::string& text);
  // The explanation of `why` (explanation_for), under a banner, when the step is shown in
  // full and explanations are on.
  void explain(const std::string& why);
  bool full_text() const { return shown_ && !options_.list_only; }

 private:
  std::string paint(const std::string& text, const char* code) const;
  std::string margin() const;
  void explanation(const std::string& why);

  std::ostream& out_;
  const Model& model_;
  const WalkthroughOptions& options_;
  int step_ = 0;
  int printed_steps_ = 0;
  bool shown_ = false;
  // Where the walkthrough is: the layer and the block of the last entry entered.
  std::optional<StepId> layer_;
  std::optional<StepId> block_;
  std::string pending_layer_header_;
  std::string pending_block_header_;
  std::string pending_block_why_;  // the explanation printed under the block header
};

}  // namespace attn

#endif  // ATTN_PRESENT_PAGE_H_

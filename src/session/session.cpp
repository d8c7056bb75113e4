#include "session/session.h"

#include <sys/stat.h>

#include <chrono>
#include <utility>

#include "attn/backward.h"
#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/forward.h"
#include "attn/load_model.h"
#include "forward/ablation.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "model/loss_section.h"

namespace attn {

namespace {

// The model `choice` names, as it comes: its own input, if any.
LoadedModel load_chosen(const ModelChoice& choice, const LoadOptions& load) {
  if (!choice.example.empty()) {
    const BundledExample& example = find_example(choice.example);
    return load_model_text(example.json, std::string("example ") + example.name, load);
  }
  if (!choice.checkpoint.empty()) return load_checkpoint(choice.checkpoint, load);
  return choice.model_file.empty() ? load_model_text(default_model_json(), kDefaultModelSource, load)
                                   : load_model(choice.model_file, load);
}

}  // namespace

std::string model_source_name(const ModelChoice& choice) {
  // Display text: a folder or file name may hold any byte but NUL, escaped as the error
  // messages escape it (printable), wherever the name is shown.
  if (!choice.checkpoint.empty()) return printable(choice.checkpoint);
  if (!choice.example.empty()) return std::string("example ") + find_example(choice.example).name;
  return choice.model_file.empty() ? kDefaultModelSource : printable(model_file_name(choice.model_file));
}

std::uint64_t model_file_bytes(const ModelChoice& choice) {
  if (!choice.example.empty()) return std::string(find_example(choice.example).json).size();
  if (!choice.checkpoint.empty() || choice.model_file == "-") return 0;
  if (choice.model_file.empty()) return default_model_json().size();
  struct stat info {};
  return ::stat(choice.model_file.c_str(), &info) == 0 && S_ISREG(info.st_mode)
             ? static_cast<std::uint64_t>(info.st_size)
             : 0;
}

Session::Session(const ModelChoice& choice, const ReadingChoice& reading, LoadOptions load, bool text_optional)
    : choice_(choice), reading_(reading), load_(load) {
  const auto started = std::chrono::steady_clock::now();
  if (reading.max_memory_gib > 0)
    load_.max_memory_bytes = static_cast<std::uint64_t>(reading.max_memory_gib * 1073741824.0);
  loaded_ = load_chosen(choice, load_);
  // A checkpoint has no input of its own: its text is the command line's (an empty one is
  // refused by name), encoded by its tokenizer.
  const bool checkpoint = loaded_.model.checkpoint.present();
  if (!choice.text.empty() || (checkpoint && !text_optional))
    replace_source_text(loaded_.model, loaded_.input, choice.text, "text (command line)");
  if (checkpoint && loaded_.input.has_tokens()) check_run_memory(loaded_.model, loaded_.input, load_);
  if (!choice.target.empty())
    replace_target_text(loaded_.model, loaded_.input, choice.target, "--target (command line)");
  load_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

Session::Session(LoadedModel loaded, LoadOptions load) : load_(load), loaded_(std::move(loaded)) {}

void Session::check_memory(RunPlan plan) const {
  plan.model_file_bytes = model_file_bytes(choice_);
  check_run_memory(loaded_.model, loaded_.input, load_, plan);
}

void Session::grow_target(bool estimate) {
  RunInput& input = loaded_.input;
  const bool greedy = input.target_tokens.from_bos;
  if (estimate || greedy) check_run_memory(loaded_.model, input, load_, greedy ? generated_length(input) + 1 : 0);
  if (greedy) extend_target_greedily(loaded_.model, input, generated_length(input));
}

void Session::grow_target(RunPlan plan) {
  RunInput& input = loaded_.input;
  const bool greedy = input.target_tokens.from_bos;
  if (greedy) plan.target_len = generated_length(input) + 1;
  check_memory(plan);
  if (greedy) extend_target_greedily(loaded_.model, input, generated_length(input));
}

void Session::set_labels(const std::string& given) {
  const Model& model = loaded_.model;
  RunInput& input = loaded_.input;
  // --labels alone implies the decoder's target, --target alone the labels (a training pair).
  if (model.has_target() && !given.empty() && choice_.target.empty())
    replace_target_text(model, input, target_implied_by_labels(model, given),
                        "the target --labels imply (<BOS> and the labels but the last)");
  const std::string labels = !given.empty() || choice_.target.empty() || !model.output.present
                                 ? given
                                 : labels_implied_by_target(model, input);
  if (!labels.empty())
    replace_labels(
        model, input, labels,
        given.empty() ? "the labels --target implies (the target shifted, then <EOS>)" : "--labels (command line)");
  // A causal language model without labels learns its own text's next tokens.
  if (labels.empty()) use_next_tokens_as_labels(model, input);
  check_loss_defined(model, input);
}

void Session::apply_reading() {
  if (reading_.lens && !loaded_.model.output.present)
    throw InputError("--lens", "",
                     "this model has no output head (\"output\" in the model file): there are no logits to read after "
                     "each layer");
  loaded_.input.lens = reading_.lens;
  if (!reading_.answer.empty()) lens_answer_ = single_token(loaded_.model, reading_.answer, "--answer");
  if (reading_.ablate.empty()) return;
  loaded_.input.ablation = parse_ablation(reading_.ablate, reading_.ablate_mean, loaded_.model);
}

Tensor Session::run(Trace& trace) const { return run_model(loaded_.model, loaded_.input, trace); }

double Session::backward(Trace& trace) const { return run_backward(loaded_.model, loaded_.input, trace); }

}  // namespace attn

#include "command_run.h"

#include <iostream>

#include "attn/error.h"
#include "html_option.h"
#include "standard_streams.h"

namespace attn::cli {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::unique_ptr<Session> open_session(const ModelChoice& model, const ReadingChoice& reading,
                                      const std::string& dump_path, bool pause, const LoadOptions& load,
                                      bool text_optional) {
  const bool model_from_stdin = model.model_file == "-";
  if (model_from_stdin && pause)
    throw InputError("--pause", "", "waits for Enter on standard input, which -c - reads the model file from");
  if (!dump_path.empty()) check_dump_target(dump_path, {model_from_stdin ? std::string() : model.model_file});
  return std::make_unique<Session>(model, reading, load, text_optional);
}

DumpOptions dump_options_of(const OutputChoice& output) {
  DumpOptions options;
  options.non_finite = parse_json_non_finite(output.json_non_finite).value_or(JsonNonFinite::String);
  options.parameters = parse_dump_parameters(output.dump_parameters).value_or(DumpParameters::Auto);
  return options;
}

std::function<std::uint64_t(const std::vector<const Shape*>&, long double)> dump_memory(const std::string& dump_path,
                                                                                        const Model& model,
                                                                                        const DumpOptions& options) {
  if (dump_path.empty()) return {};
  return [dump_path, &model, options](const std::vector<const Shape*>& shapes, long double tensors) {
    return dump_held_bytes(dump_path, model, options, shapes, tensors);
  };
}

CommandRun::CommandRun(Session& session, const ModelChoice& choice, const OutputChoice& output, const char* command)
    : session_(session), choice_(choice), output_(output), command_(command), dump_options_(dump_options_of(output)) {}

std::ostream& CommandRun::terminal() const { return dump_to_stdout() ? std::cerr : std::cout; }

void CommandRun::open_dump() {
  if (!output_.dump_path.empty() && !dump_to_stdout())
    dump_ = std::make_unique<TraceDump>(output_.dump_path, session_.model(), session_.input(), dump_options_);
}

void CommandRun::open_lesson(const WalkthroughOptions& walkthrough, RunPlan plan) {
  const LoadOptions& load = session_.load_options();
  plan.lesson_bytes = check_html_memory(output_.html_path, session_.model(), walkthrough,
                                        PageSize{&session_.input(), load.backward, 0}, load);
  if (plan.lesson_bytes) session_.check_memory(plan);
  lesson_ = open_html_lesson(output_, choice_, command_, session_.model(), walkthrough);
}

void CommandRun::stream_into_dump(Trace& trace) {
  if (!dump_) return;
  trace.set_sink([this](const TraceRecord& record) {
    const auto before = std::chrono::steady_clock::now();
    dump_->add(record);
    dump_seconds_ += seconds_since(before);
  });
}

void CommandRun::commit(const Trace& trace) {
  // A walkthrough that could not be written fails the run before the lesson or the dump is
  // committed.
  if (!output_.dump_path.empty() || lesson_) check_standard_output();
  if (lesson_) lesson_->commit();
  if (output_.dump_path.empty()) return;
  const auto before = std::chrono::steady_clock::now();
  if (dump_to_stdout()) {
    dump_ = std::make_unique<TraceDump>(output_.dump_path, session_.model(), session_.input(), dump_options_);
    for (const auto& e : trace.entries()) dump_->add(e.record());
  }
  dump_->finish(trace);
  dump_seconds_ += seconds_since(before);
}

void CommandRun::print_notes_if_quiet(const Trace& trace) const {
  if (!output_.quiet) return;
  for (const auto& w : trace.warnings()) std::cerr << "note: " << w.name << ": " << w.message << "\n";
}

}  // namespace attn::cli

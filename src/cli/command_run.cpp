#include "command_run.h"

#include <iostream>

#include "html_option.h"
#include "standard_streams.h"

namespace attn::cli {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

CommandRun::CommandRun(const ExplainOptions& options, const char* command, LoadOptions load)
    : options_(options), command_(command), load_(load) {
  const auto started = std::chrono::steady_clock::now();
  loaded_ = load_run_model(options, load_);
  load_seconds_ = seconds_since(started);
  dump_options_.non_finite = parse_json_non_finite(options.json_non_finite).value_or(JsonNonFinite::String);
  dump_options_.parameters = parse_dump_parameters(options.dump_parameters).value_or(DumpParameters::Auto);
}

std::ostream& CommandRun::terminal() const { return dump_to_stdout() ? std::cerr : std::cout; }

void CommandRun::open_dump() {
  if (!options_.dump_path.empty() && !dump_to_stdout())
    dump_ = std::make_unique<TraceDump>(options_.dump_path, loaded_.model, loaded_.input, dump_options_);
}

void CommandRun::open_lesson(const WalkthroughOptions& walkthrough) {
  check_html_memory(options_, loaded_.model, walkthrough, PageSize{&loaded_.input, load_.backward, 0}, load_);
  lesson_ = open_html_lesson(options_, command_, loaded_.model, walkthrough);
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
  if (!options_.dump_path.empty() || lesson_) check_standard_output();
  if (lesson_) lesson_->commit();
  if (options_.dump_path.empty()) return;
  const auto before = std::chrono::steady_clock::now();
  if (dump_to_stdout()) {
    dump_ = std::make_unique<TraceDump>(options_.dump_path, loaded_.model, loaded_.input, dump_options_);
    for (const auto& e : trace.entries()) dump_->add(e.record());
  }
  dump_->finish(trace);
  dump_seconds_ += seconds_since(before);
}

void CommandRun::print_notes_if_quiet(const Trace& trace) const {
  if (!options_.quiet) return;
  for (const auto& w : trace.warnings()) std::cerr << "note: " << w.name << ": " << w.message << "\n";
}

}  // namespace attn::cli

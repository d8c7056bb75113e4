// What explain, grad and generate share around a session's run: the session opened once the
// command line's own checks pass (open_session), the dump and the HTML lesson opened before
// anything runs (a path that cannot take them is refused first), the trace's records
// streamed into the dump, and, once the run has succeeded, the commit: the terminal's
// walkthrough checked as written, then the lesson, then the dump (to stdout from the kept
// trace, since what is written there cannot be taken back). Each command keeps only what is
// its own: explain's walkthrough, grad's backward pass, generate's tokens.
#ifndef ATTN_CLI_COMMAND_RUN_H_
#define ATTN_CLI_COMMAND_RUN_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "attn/dump.h"
#include "attn/model_file.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "html/html_lesson.h"
#include "option_groups.h"
#include "session/session.h"

namespace attn::cli {

double seconds_since(std::chrono::steady_clock::time_point start);

// Checks what can be checked before anything is read (--pause with -c -, the dump's path),
// then opens the session: the model the options name with the command line's sentences.
std::unique_ptr<Session> open_session(const ModelChoice& model, const ReadingChoice& reading,
                                      const std::string& dump_path, bool pause, const LoadOptions& load,
                                      bool text_optional = false);

// The dump's options as --json-nonfinite and --dump-parameters say (each checked as parsed).
DumpOptions dump_options_of(const OutputChoice& output);
// What a dump to `dump_path` holds beside the run, for the run's memory estimate
// (RunPlan::dump_held; attn/dump.h's dump_held_bytes): empty without a dump.
std::function<std::uint64_t(const std::vector<const Shape*>&, long double)> dump_memory(const std::string& dump_path,
                                                                                        const Model& model,
                                                                                        const DumpOptions& options);

class CommandRun {
 public:
  // `command` titles the lesson ("attn explain").
  CommandRun(Session& session, const ModelChoice& choice, const OutputChoice& output, const char* command);
  CommandRun(const CommandRun&) = delete;
  CommandRun& operator=(const CommandRun&) = delete;

  const Model& model() const { return session_.model(); }
  RunInput& input() { return session_.input(); }
  // Where the walkthrough goes: standard error when the dump takes standard output.
  std::ostream& terminal() const;
  bool dump_to_stdout() const { return output_.dump_to_stdout(); }

  // Opens the dump when it goes to a file (streamed: each record as the trace makes it);
  // then, once the walkthrough's options are known, the lesson, its page estimated alone
  // and then beside the command's run (`plan`, the run's estimate as the command made it).
  void open_dump();
  void open_lesson(const WalkthroughOptions& walkthrough, RunPlan plan);
  TraceDump* dump() { return dump_.get(); }
  HtmlLesson* lesson() { return lesson_.get(); }
  // Gives every record of `trace` to the streamed dump, timed.
  void stream_into_dump(Trace& trace);
  // Adds `seconds` spent writing the dump another way.
  double& dump_seconds() { return dump_seconds_; }

  // After a successful run: the terminal's text checked as written (a failed write fails the
  // run before anything is committed), the lesson committed, the dump finished (written from
  // the kept `trace` when it goes to standard output).
  void commit(const Trace& trace);
  // --quiet: the trace's notes on stderr, which matter without the walkthrough (an unknown
  // word, a fully masked row).
  void print_notes_if_quiet(const Trace& trace) const;

 private:
  Session& session_;
  const ModelChoice& choice_;
  const OutputChoice& output_;
  const char* command_;
  DumpOptions dump_options_;
  std::unique_ptr<TraceDump> dump_;
  std::unique_ptr<HtmlLesson> lesson_;
  double dump_seconds_ = 0;
};

}  // namespace attn::cli

#endif  // ATTN_CLI_COMMAND_RUN_H_

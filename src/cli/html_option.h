// --html FILE: the walkthrough as one self-contained web page (src/html/), for every command
// that shows a walkthrough. A command adds the option with add_html_option, opens the lesson
// before its run with open_html_lesson (a path that cannot be written is refused before
// anything runs), starts its walkthrough with start_walkthrough, and commits the lesson once
// the run has succeeded.
#ifndef ATTN_CLI_HTML_OPTION_H_
#define ATTN_CLI_HTML_OPTION_H_

#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/model.h"
#include "attn/model_file.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "html/html_lesson.h"
#include "html/lesson_memory.h"
#include "option_groups.h"

namespace attn::cli {

void add_html_option(CLI::App& command, std::string& path);

// The lesson output.html_path asks for, titled by what was run (`command`, "attn explain",
// and the sentence, example or model file `choice` names); nullptr without --html.
// InputError when the path cannot be written, is the model file or the dump.
std::unique_ptr<HtmlLesson> open_html_lesson(const OutputChoice& output, const ModelChoice& choice, const char* command,
                                             const Model& model, const WalkthroughOptions& walkthrough);

// The page (--html `html_path`, none when empty) is built in memory before it is written:
// InputError naming --html when the page is estimated to need more than `load`'s limit
// (html/lesson_memory.h's estimate). Returns that estimate with the file's buffer, what
// the run holds besides for its page (RunPlan::lesson_bytes); 0 without a page.
std::uint64_t check_html_memory(const std::string& html_path, const Model& model, const WalkthroughOptions& walkthrough,
                                const PageSize& page, const LoadOptions& load);

// The run's walkthrough: on the terminal into `out` unless `quiet`, and into `lesson` when
// there is one; nullptr when it is drawn nowhere. `forget`: as StreamingWalkthrough's.
std::unique_ptr<StreamingWalkthrough> start_walkthrough(std::ostream& out, Trace& trace, const Model& model,
                                                        const RunInput& input, const WalkthroughOptions& walkthrough,
                                                        bool quiet, bool forget, HtmlLesson* lesson);

// Draws a finished run's whole trace (attn grad's forward and backward entries) into
// `lesson`, step for step as the terminal's walkthrough shows it; the lesson is then ready
// to commit.
void draw_lesson(HtmlLesson& lesson, Trace& trace, const Model& model, const RunInput& input,
                 const WalkthroughOptions& walkthrough);

}  // namespace attn::cli

#endif  // ATTN_CLI_HTML_OPTION_H_

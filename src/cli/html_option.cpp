#include "html_option.h"

#include "attn/error.h"
#include "core/same_file.h"
#include "validators.h"

namespace attn::cli {

void add_html_option(CLI::App& command, std::string& path) {
  command
      .add_option("--html", path,
                  "Also write the walkthrough to FILE as one self-contained web page: every step, tensors as tables, "
                  "attention heatmaps per head; written whole or not at all")
      ->check(non_empty("a file name, such as lesson.html"));
}

namespace {

// What the page is titled by: the sentence, else the example or the model file.
std::string lesson_subject(const ExplainOptions& options) {
  if (!options.text.empty()) return "\"" + options.text + "\"";
  if (!options.example.empty()) return "example " + options.example;
  if (!options.checkpoint.empty()) return options.checkpoint;
  return options.model_file.empty() ? "the built-in model" : options.model_file;
}

}  // namespace

std::unique_ptr<HtmlLesson> open_html_lesson(const ExplainOptions& options, const char* command, const Model& model,
                                             const WalkthroughOptions& walkthrough) {
  if (options.html_path.empty()) return nullptr;
  if (!options.dump_path.empty() && same_file(options.html_path, options.dump_path))
    throw InputError("--html", "", "expected another file than --dump's, found the same: " + options.html_path);
  return std::make_unique<HtmlLesson>(options.html_path, std::vector<std::string>{options.model_file}, model,
                                      walkthrough, LessonInfo{command, lesson_subject(options)});
}

std::unique_ptr<StreamingWalkthrough> start_walkthrough(std::ostream& out, Trace& trace, const Model& model,
                                                        const RunInput& input, const WalkthroughOptions& walkthrough,
                                                        bool quiet, bool forget, HtmlLesson* lesson) {
  std::unique_ptr<StreamingWalkthrough> printer;
  if (!quiet)
    printer = std::make_unique<StreamingWalkthrough>(out, trace, model, input, walkthrough, forget);
  else if (lesson)
    printer = std::make_unique<StreamingWalkthrough>(trace, model, input, walkthrough, forget);
  if (lesson) lesson->attach(*printer);
  return printer;
}

void draw_lesson(HtmlLesson& lesson, Trace& trace, const Model& model, const RunInput& input,
                 const WalkthroughOptions& walkthrough) {
  StreamingWalkthrough pages(trace, model, input, walkthrough, /*forget=*/false);
  lesson.attach(pages);
  for (const auto& entry : trace.entries()) pages.add(entry);
  pages.finish();
}

}  // namespace attn::cli

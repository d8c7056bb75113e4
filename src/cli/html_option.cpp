#include "html_option.h"

#include <fmt/format.h>

#include "attn/error.h"
#include "core/same_file.h"
#include "html/lesson_memory.h"
#include "io/output_file.h"
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
std::string lesson_subject(const ModelChoice& choice) {
  if (!choice.text.empty()) return "\"" + choice.text + "\"";
  if (!choice.example.empty()) return "example " + choice.example;
  if (!choice.checkpoint.empty()) return choice.checkpoint;
  return choice.model_file.empty() ? "the built-in model" : choice.model_file;
}

}  // namespace

std::unique_ptr<HtmlLesson> open_html_lesson(const OutputChoice& output, const ModelChoice& choice, const char* command,
                                             const Model& model, const WalkthroughOptions& walkthrough) {
  if (output.html_path.empty()) return nullptr;
  if (!output.dump_path.empty() && same_file(output.html_path, output.dump_path))
    throw InputError("--html", "", "expected another file than --dump's, found the same: " + output.html_path);
  return std::make_unique<HtmlLesson>(output.html_path, std::vector<std::string>{choice.model_file}, model, walkthrough,
                                      LessonInfo{command, lesson_subject(choice)});
}

std::uint64_t check_html_memory(const std::string& html_path, const Model& model, const WalkthroughOptions& walkthrough,
                                const PageSize& page, const LoadOptions& load) {
  if (html_path.empty() || !page.input) return 0;
  const PageMemory memory = lesson_page_memory(model, walkthrough, page);
  const long double need = memory.bytes, cells = memory.cells, numbers = memory.numbers;
  const std::uint64_t limit = load.max_memory_bytes ? load.max_memory_bytes : default_memory_limit();
  if (need <= static_cast<long double>(limit)) return static_cast<std::uint64_t>(need) + OutputFile::kBufferHeapBytes;
  throw InputError("--html", "",
                   fmt::format("the page would need about {:.1f} GiB while it is built (about {:.0f} heatmap cells "
                               "and {:.0f} numbers), more than the limit of {:.1f} GiB; draw less (a shorter text, "
                               "--steps, --layer, fewer new tokens) or raise --max-memory",
                               static_cast<double>(need / 1073741824.0L), static_cast<double>(cells),
                               static_cast<double>(numbers), static_cast<double>(limit) / 1073741824.0));
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

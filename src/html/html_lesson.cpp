#include "html/html_lesson.h"

#include "attn/dump.h"
#include "attn/error.h"
#include "io/output_file.h"

namespace attn {

WalkthroughOptions lesson_options(const WalkthroughOptions& terminal) {
  WalkthroughOptions options = terminal;
  options.color = false;
  options.list_only = false;
  options.heatmap_style.reset();
  return options;
}

HtmlLesson::HtmlLesson(const std::string& path, const std::vector<std::string>& input_paths, const Model& model,
                       const WalkthroughOptions& options, LessonInfo info)
    : options_(lesson_options(options)) {
  if (path == "-")
    throw InputError("--html", "",
                     "expected a file name, found \"-\": the lesson is one file, not a stream (give a name such as "
                     "lesson.html)");
  check_output_target(path, input_paths, "the HTML lesson", "lesson.html");
  file_ = std::make_unique<OutputFile>(path, "the HTML lesson");
  page_ = std::make_unique<HtmlPage>(*file_, model, options_, std::move(info));
}

HtmlLesson::~HtmlLesson() = default;

void HtmlLesson::attach(StreamingWalkthrough& walkthrough) { walkthrough.draw_also(*page_, options_); }

void HtmlLesson::commit() { file_->commit(); }

std::uint64_t HtmlLesson::bytes_written() const { return file_->bytes_written(); }

}  // namespace attn

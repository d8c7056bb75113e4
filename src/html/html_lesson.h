// The HTML lesson a command writes with --html FILE (docs/cli.md): the walkthrough drawn as
// one self-contained web page (html_page.h) into a file written whole or not at all, like the
// dump (io/output_file.h): a temporary file beside FILE, renamed into place by commit().
#ifndef ATTN_HTML_HTML_LESSON_H_
#define ATTN_HTML_HTML_LESSON_H_

#include <memory>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/walkthrough.h"
#include "html/html_page.h"

namespace attn {

class OutputFile;

// The walkthrough options of the lesson: the terminal's filters and teaching choices (--steps,
// --layer, --head, --batch, --brief, --cell, --full, --precision, --threshold, --top), without
// colour or attn steps' list.
WalkthroughOptions lesson_options(const WalkthroughOptions& terminal);

class HtmlLesson {
 public:
  // Checks that `path` can be written without destroying anything (not one of
  // `input_paths`, not a directory, in a folder that exists) and opens its temporary file;
  // InputError naming the path otherwise, before anything runs.
  HtmlLesson(const std::string& path, const std::vector<std::string>& input_paths, const Model& model,
             const WalkthroughOptions& options, LessonInfo info);
  ~HtmlLesson();  // without commit(): nothing is left at the path
  HtmlLesson(const HtmlLesson&) = delete;
  HtmlLesson& operator=(const HtmlLesson&) = delete;

  // Draws the walkthrough's steps into the lesson too (before its first entry).
  void attach(StreamingWalkthrough& walkthrough);
  // Once the walkthrough has finished: the file, complete, renamed into place.
  void commit();
  std::uint64_t bytes_written() const;

 private:
  WalkthroughOptions options_;
  std::unique_ptr<OutputFile> file_;
  std::unique_ptr<HtmlPage> page_;
};

}  // namespace attn

#endif  // ATTN_HTML_HTML_LESSON_H_

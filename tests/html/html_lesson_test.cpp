#include "html/html_lesson.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/examples.h"

namespace {

bool exists(const std::string& path) {
  struct stat s {};
  return ::stat(path.c_str(), &s) == 0;
}

// A fresh folder for one test's files.
std::string fresh_folder() {
  char name[] = "/tmp/attn-html-XXXXXX";
  REQUIRE(::mkdtemp(name) != nullptr);
  return name;
}

std::size_t entries(const std::string& folder) {
  std::size_t n = 0;
  DIR* dir = ::opendir(folder.c_str());
  REQUIRE(dir != nullptr);
  while (const dirent* e = ::readdir(dir)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  ::closedir(dir);
  return n;
}

// Runs seed 003 with its lesson, finished but not committed.
void run_into(attn::HtmlLesson& lesson, const attn::LoadedModel& model, const attn::WalkthroughOptions& options) {
  attn::Trace trace(!model.input.batched);
  std::ostringstream terminal;
  attn::StreamingWalkthrough walkthrough(terminal, trace, model.model, model.input, options, true);
  lesson.attach(walkthrough);
  trace.set_entry_observer([&](const attn::TraceEntry& e) { walkthrough.add(e); });
  attn::run_model(model.model, model.input, trace);
  walkthrough.finish();
}

}  // namespace

TEST_CASE("the lesson's file is written whole or not at all", "[html]") {
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("seed003").json, "example seed003");
  const std::string folder = fresh_folder();
  const std::string path = folder + "/lesson.html";
  attn::WalkthroughOptions options;
  options.color = true;  // the terminal's: never in the page
  {
    attn::HtmlLesson lesson(path, {}, model.model, options, {"attn explain", "example seed003"});
    run_into(lesson, model, options);
    CHECK_FALSE(exists(path));  // finished, not committed: only the temporary file
    CHECK(entries(folder) == 1);
  }
  CHECK(entries(folder) == 0);  // and that is gone with the lesson
  {
    attn::HtmlLesson lesson(path, {}, model.model, options, {"attn explain", "example seed003"});
    run_into(lesson, model, options);
    lesson.commit();
    CHECK(lesson.bytes_written() > 10000);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(text.str().find("</html>\n") == text.str().size() - 8);
  CHECK(text.str().find("\x1b[") == std::string::npos);
  CHECK(text.str().find("<h1 class=\"title\">Attention, step by step: example seed003</h1>") != std::string::npos);
  std::remove(path.c_str());
  ::rmdir(folder.c_str());
}

TEST_CASE("a lesson that cannot be written is refused before the run", "[html]") {
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("seed003").json, "example seed003");
  const auto refused = [&](const std::string& path, const std::string& message) {
    INFO(path);
    try {
      attn::HtmlLesson lesson(path, {"/etc/hostname"}, model.model, {}, {"attn explain", "x"});
      FAIL("accepted");
    } catch (const attn::InputError& e) {
      CHECK(std::string(e.what()) == message);
    }
  };
  refused("-",
          "--html: expected a file name, found \"-\": the lesson is one file, not a stream (give a name such as "
          "lesson.html)");
  refused("/tmp", "/tmp: cannot write the HTML lesson: it is a directory; give a file name, such as /tmp/lesson.html");
  refused(
      "/nonexistent-folder/lesson.html",
      "/nonexistent-folder/lesson.html: cannot write the HTML lesson: the folder /nonexistent-folder does not exist");
  refused("/etc/hostname",
          "/etc/hostname: cannot write the HTML lesson: it is the input model file /etc/hostname; choose another name "
          "for the HTML lesson");
}

TEST_CASE("the lesson's options are the terminal's filters without colour or the list", "[html]") {
  attn::WalkthroughOptions terminal;
  terminal.color = true;
  terminal.list_only = true;
  terminal.heatmap_style = attn::HeatmapStyle::Ascii;
  terminal.explanations = false;
  terminal.filter.head = 1;
  const attn::WalkthroughOptions lesson = attn::lesson_options(terminal);
  CHECK_FALSE(lesson.color);
  CHECK_FALSE(lesson.list_only);
  CHECK_FALSE(lesson.heatmap_style);
  CHECK_FALSE(lesson.explanations);
  CHECK(lesson.filter.head == std::size_t{1});
}

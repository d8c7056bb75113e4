#include "attn/dump.h"
#include "io/output_file.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

#include <omp.h>
#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "error_message.h"
#include "model/examples.h"
#include "model/json_reader.h"

using attn_test::input_error_of;

namespace {
attn::LoadedModel small_model(bool causal) {
  return attn::load_model_text(
      std::string(R"({"model": {"d_model": 2, "num_heads": 1, "causal": )") + (causal ? "true" : "false") + R"(},
      "input": {"X": [[[0.1, 0.2], [0.3, 0.4]]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity", "W_o": "identity"}}]})",
      "small.json");
}

// A fresh empty folder under /tmp, removed (with what is left in it) at the end of the test.
struct ScratchFolder {
  std::string path;
  ScratchFolder() {
    char name[] = "/tmp/attn_dump_test_XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~ScratchFolder() {
    for (const auto& f : files()) std::remove((path + "/" + f).c_str());
    ::rmdir(path.c_str());
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* dir = ::opendir(path.c_str())) {
      while (const dirent* e = ::readdir(dir))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
      ::closedir(dir);
    }
    return out;
  }
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// 3 x 301 x 307 = 277,221 numbers: many parts of 8,192, rows split between them, and
// values of every layout (0.000123, 12.5, 1e-07, -3.25e+21, 0.0).
attn::Trace large_trace() {
  attn::Tensor t({3, 301, 307}, {"B", "S", "N"});
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data[i] = std::sin(static_cast<double>(i)) * std::pow(10.0, static_cast<double>(i % 47) - 23) / (1 + i % 7);
  attn::Trace trace;
  trace.record(attn::StepId{attn::StepKind::Input}, t);
  return trace;
}

// The dump's text when OpenMP is told to use `threads` threads (the dump takes its count).
std::string json_with_threads(int threads, const attn::Trace& trace, const attn::LoadedModel& model) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model.model, model.input);
  omp_set_num_threads(before);
  return out.str();
}
}  // namespace

TEST_CASE("the dump holds every tensor, in order, nested like its shape, full precision", "[dump]") {
  const attn::LoadedModel model = small_model(false);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model.model, model.input);
  const attn::Json doc = attn::Json::parse(out.str());
  CHECK(doc["format"] == "attn-trace");
  CHECK(doc["version"] == 1);
  CHECK(doc["model"]["d_model"] == 2);
  CHECK(doc["model"]["num_heads"] == 1);
  const auto& tensors = doc["tensors"];
  REQUIRE(tensors.size() == trace.entries().size());
  CHECK(tensors[0]["name"] == "input");
  CHECK(tensors[0]["shape"] == attn::Json::array({1, 2, 2}));
  CHECK(tensors[0]["axes"] == attn::Json::array({"B", "S", "N"}));
  CHECK(tensors[0]["data"][0][1][0].get<double>() == 0.3);
  // shortest round-trip: parsing the text gives the exact double back
  const auto& weights = find_entry(trace, "encoder.0.attention.weights")->tensor;
  for (const auto& t : tensors)
    if (t["name"] == "encoder.0.attention.weights")
      CHECK(t["data"][0][0][0][1].get<double>() == weights.at({0, 0, 0, 1}));
}

TEST_CASE("the JSON dump writes -inf as a string by default, or as null or as Python's literal", "[dump]") {
  const attn::LoadedModel model = small_model(true);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  const auto dumped = [&](attn::JsonNonFinite mode) {
    std::ostringstream out;
    attn::write_trace_json(out, trace, model.model, model.input, attn::DumpOptions{mode});
    const std::string text = out.str();
    const std::size_t at = text.find("\"name\": \"encoder.0.attention.masked_scores\"");
    return text.substr(text.find("\"data\": ", at), text.find('}', at) - text.find("\"data\": ", at));
  };
  CHECK(dumped(attn::JsonNonFinite::String) ==
        "\"data\": [[[[0.03535533905932738, \"-Infinity\"], [0.07778174593052023, 0.17677669529663687]]]]");
  CHECK(dumped(attn::JsonNonFinite::Null) ==
        "\"data\": [[[[0.03535533905932738, null], [0.07778174593052023, 0.17677669529663687]]]]");
  CHECK(dumped(attn::JsonNonFinite::Literal) ==
        "\"data\": [[[[0.03535533905932738, -Infinity], [0.07778174593052023, 0.17677669529663687]]]]");
  // the default is the string, which strict parsers read
  std::ostringstream out;
  attn::write_trace_json(out, trace, model.model, model.input);
  CHECK(attn::Json::parse(out.str())["tensors"][1]["data"][0][1] == "-Infinity");
  CHECK(attn::parse_json_non_finite("null") == attn::JsonNonFinite::Null);
  CHECK_FALSE(attn::parse_json_non_finite("Null").has_value());
}

TEST_CASE("an unwritable dump path is an input error and leaves no file", "[dump][errors]") {
  const attn::LoadedModel model = small_model(false);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  try {
    attn::write_trace_file("/nonexistent-dir/trace.json", trace, model.model, model.input);
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()).rfind("/nonexistent-dir/trace.json: cannot write the dump: ", 0) == 0);
  }
  const std::string path = "attn_dump_test.json";
  std::remove(path.c_str());
  attn::write_trace_file(path, trace, model.model, model.input);
  std::ifstream in(path);
  CHECK(attn::Json::parse(in)["tensors"].size() == trace.entries().size());
  std::remove(path.c_str());
}

TEST_CASE("check_dump_target refuses directories, missing folders and the input file", "[dump][errors]") {
  ScratchFolder scratch;
  const std::string model = scratch.path + "/model.json";
  write_file(model, "{}");
  CHECK(input_error_of([&] { attn::check_dump_target(scratch.path, {model}); }) ==
        scratch.path + ": cannot write the dump: it is a directory; give a file name, such as " + scratch.path +
            "/trace.json");
  CHECK(input_error_of([&] { attn::check_dump_target(model, {model}); }) ==
        model + ": cannot write the dump: it is the input model file " + model + "; choose another name for the dump");
  // the same file under another name: found by device and inode, not by name
  const std::string link = scratch.path + "/link.json";
  REQUIRE(::symlink(model.c_str(), link.c_str()) == 0);
  CHECK(input_error_of([&] { attn::check_dump_target(link, {model}); }) ==
        link + ": cannot write the dump: it is the input model file " + model + "; choose another name for the dump");
  const std::string dotted = scratch.path + "/./model.json";
  CHECK(input_error_of([&] { attn::check_dump_target(model, {dotted}); }) ==
        model + ": cannot write the dump: it is the input model file " + dotted + "; choose another name for the dump");
  CHECK(input_error_of([&] { attn::check_dump_target(scratch.path + "/no/trace.json", {model}); }) ==
        scratch.path + "/no/trace.json: cannot write the dump: the folder " + scratch.path + "/no does not exist");
  CHECK(input_error_of([&] { attn::check_dump_target(model + "/trace.json", {model}); }) ==
        model + "/trace.json: cannot write the dump: " + model + " is not a folder");
  // fine: a new file, an existing file that is not an input, stdout, no input file
  CHECK(input_error_of([&] { attn::check_dump_target(scratch.path + "/trace.json", {model}); }).empty());
  write_file(scratch.path + "/old_trace.json", "old");
  CHECK(input_error_of([&] { attn::check_dump_target(scratch.path + "/old_trace.json", {model}); }).empty());
  CHECK(input_error_of([&] { attn::check_dump_target("-", {model}); }).empty());
  CHECK(input_error_of([&] { attn::check_dump_target(model, {""}); }).empty());
}

TEST_CASE("a write error mid-dump leaves neither a partial dump nor a temporary file", "[dump][errors]") {
  const attn::LoadedModel model = small_model(false);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  ScratchFolder scratch;
  const std::string path = scratch.path + "/trace.json";
  // The dump asks OpenMP for its thread count, which starts OpenMP's runtime, and LLVM's
  // (libomp, in the sanitizer build) then writes a 1 KB registration file, which the limit
  // below would stop: one dump first, so that the runtime has started (the small steps use
  // no OpenMP).
  attn::write_trace_file(path, trace, model.model, model.input);
  REQUIRE(::unlink(path.c_str()) == 0);
  {
    // A file size limit of 100 bytes (ulimit -f) makes the write fail after the first 100
    // bytes of the dump, as a full disk would. The dump ignores SIGXFSZ while it writes,
    // so the process is not killed and write() reports EFBIG.
    struct rlimit saved {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
    struct rlimit small = saved;
    small.rlim_cur = 100;
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
    // The machine's limit, not the path's fault: an environment error (exit code 1).
    const std::string error =
        attn_test::environment_error_of([&] { attn::write_trace_file(path, trace, model.model, model.input); });
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &saved) == 0);
    CHECK(error == path + ": cannot write the dump: write failed: File too large");
  }
  CHECK(scratch.files().empty());

  // A directory as the target: the rename fails, the temporary file goes.
  const std::string folder = scratch.path + "/trace_dir";
  REQUIRE(::mkdir(folder.c_str(), 0755) == 0);
  CHECK(input_error_of([&] { attn::write_trace_file(folder, trace, model.model, model.input); }) ==
        folder + ": cannot write the dump: it is a directory; give a file name, such as " + folder + "/trace.json");
  CHECK(scratch.files() == std::vector<std::string>{"trace_dir"});
}

TEST_CASE("a write error while several threads format a large tensor leaves no file", "[dump][errors]") {
  const attn::LoadedModel model = small_model(false);
  const attn::Trace trace = large_trace();
  ScratchFolder scratch;
  const std::string path = scratch.path + "/trace.json";
  const int threads_before = omp_get_max_threads();
  omp_set_num_threads(3);
  attn::write_trace_file(path, trace, model.model, model.input);  // (OpenMP's runtime started: see above)
  REQUIRE(::unlink(path.c_str()) == 0);
  // The limit falls in the middle of the tensor's text (about 5 MB): some parts are
  // written, the next write fails while the threads are formatting others.
  struct rlimit saved {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  struct rlimit limit = saved;
  limit.rlim_cur = 1 << 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  const std::string error =
      attn_test::environment_error_of([&] { attn::write_trace_file(path, trace, model.model, model.input); });
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &saved) == 0);
  omp_set_num_threads(threads_before);
  CHECK(error == path + ": cannot write the dump: write failed: File too large");
  CHECK(scratch.files().empty());
}

TEST_CASE("a temporary dump file is removed when any ending signal stops the process", "[dump][errors]") {
  ScratchFolder scratch;
  const std::string target = scratch.path + "/trace.json";
  // Every signal whose default action ends the process, but SIGKILL and SIGSTOP.
  for (const int sig :
       {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGABRT, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF}) {
    INFO("signal " << sig);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child is stopped while its temporary file exists, as by Ctrl-C or kill.
      attn::TempFile temp(target);
      std::ofstream(temp.path()) << "{\"format\": \"attn-trace\", \"tens";
      ::raise(sig);
      std::_Exit(0);  // not reached: the handler re-raises with the default action
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(scratch.files().empty());
  }
  // A library that gives up by calling exit() (libgomp, when a thread cannot start) runs
  // no destructor: the file goes at exit.
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    attn::TempFile temp(target);
    std::exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(scratch.files().empty());
  // Committed: the temporary file becomes the target and nothing else is left.
  {
    attn::TempFile temp(target);
    std::ofstream(temp.path()) << "done";
    temp.commit();
  }
  CHECK(scratch.files() == std::vector<std::string>{"trace.json"});
}

TEST_CASE("a pipe or device is written into, never replaced, and a link keeps pointing at the dump", "[dump]") {
  const attn::LoadedModel model = small_model(false);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  ScratchFolder scratch;
  // A FIFO stands in for /dev/stdout or /dev/null (renaming over those, as root, would
  // replace the device for everyone; a test must not risk that).
  const std::string fifo = scratch.path + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  attn::write_trace_file(fifo, trace, model.model, model.input);
  reader.join();
  CHECK(attn::Json::parse(received)["tensors"].size() == trace.entries().size());
  struct stat info {};
  REQUIRE(::lstat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
  CHECK(scratch.files() == std::vector<std::string>{"pipe"});

  const std::string real = scratch.path + "/real.json", link = scratch.path + "/link.json";
  write_file(real, "old");
  REQUIRE(::symlink("real.json", link.c_str()) == 0);
  attn::write_trace_file(link, trace, model.model, model.input);
  REQUIRE(::lstat(link.c_str(), &info) == 0);
  CHECK(S_ISLNK(info.st_mode));
  std::ifstream in(real);
  CHECK(attn::Json::parse(in)["tensors"].size() == trace.entries().size());
}

TEST_CASE("a streamed dump is the same text as the dump of a kept trace", "[dump]") {
  const attn::LoadedModel model = small_model(true);
  attn::Trace kept;
  attn::run_model(model.model, model.input, kept);
  std::ostringstream expected;
  attn::write_trace_json(expected, kept, model.model, model.input);

  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Json, model.model, model.input);
  attn::Trace streamed;
  streamed.keep_entries(false);
  streamed.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
  attn::run_model(model.model, model.input, streamed);
  dump.finish(streamed);
  CHECK(streamed.entries().empty());
  CHECK(out.text == expected.str());
  // numbers as Python's json writes them: 0.1 stays "0.1", 1 is "1.0"
  CHECK(out.text.find("\"data\": [[[0.1, 0.2], [0.3, 0.4]]]") != std::string::npos);
}

TEST_CASE("a large tensor's text, formatted by several threads in parts, nests and round-trips exactly", "[dump]") {
  const attn::LoadedModel model = small_model(false);
  const attn::Trace trace = large_trace();
  const attn::Tensor& t = trace.entries()[0].tensor;
  const std::string text = json_with_threads(2, trace, model);
  const attn::Json doc = attn::Json::parse(text);
  const auto& data = doc["tensors"][0]["data"];
  REQUIRE(data.size() == 3);
  std::size_t mismatches = 0;
  for (std::size_t b = 0; b < 3; ++b) {
    REQUIRE(data[b].size() == 301);
    for (std::size_t s = 0; s < 301; ++s) {
      REQUIRE(data[b][s].size() == 307);
      for (std::size_t n = 0; n < 307; ++n) mismatches += data[b][s][n].get<double>() != t.at({b, s, n});
    }
  }
  CHECK(mismatches == 0);
  // The same bytes whatever the number of threads.
  CHECK(json_with_threads(1, trace, model) == text);
  CHECK(json_with_threads(3, trace, model) == text);
}

TEST_CASE("a dump's name says its format, and other extensions are refused", "[dump][errors]") {
  CHECK(attn::dump_format("run.npz") == attn::DumpFormat::Npz);
  CHECK(attn::dump_format("out/run.json") == attn::DumpFormat::Json);
  CHECK(attn::dump_format("-") == attn::DumpFormat::Json);
  CHECK(attn::dump_format("/dev/null") == attn::DumpFormat::Json);  // a device: written into
  const std::string expected =
      ": cannot write the dump: expected a name ending in .json (JSON) or .npz (NumPy), or - "
      "for JSON on standard output, found ";
  CHECK(input_error_of([] { attn::dump_format("trace.npy"); }) == "trace.npy" + expected + "\".npy\"");
  CHECK(input_error_of([] { attn::dump_format("trace.NPZ"); }) ==
        "trace.NPZ" + expected + "\".NPZ\" (did you mean \".npz\"?)");
  CHECK(input_error_of([] { attn::dump_format("v1.0/trace"); }) ==
        "v1.0/trace" + expected + "a name without an extension");
  CHECK(input_error_of([] { attn::dump_format(".json.bak"); }) == ".json.bak" + expected + "\".bak\"");
  // before the run, and before a temporary file exists
  ScratchFolder scratch;
  CHECK(input_error_of([&] { attn::check_dump_target(scratch.path + "/t.npy", {}); }) ==
        scratch.path + "/t.npy" + expected + "\".npy\"");
  const attn::LoadedModel model = small_model(false);
  CHECK(input_error_of([&] { attn::TraceDump dump(scratch.path + "/t.Json", model.model, model.input); }) ==
        scratch.path + "/t.Json" + expected + "\".Json\" (did you mean \".json\"?)");
  CHECK(scratch.files().empty());
}

TEST_CASE("a dump abandoned mid-run (an error) leaves no file behind", "[dump][errors]") {
  const attn::LoadedModel model = small_model(false);
  const std::string path = "attn_dump_abandoned.npz";
  std::remove(path.c_str());
  {
    attn::TraceDump dump(path, model.model, model.input);
    attn::Trace trace;
    trace.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
    attn::run_model(model.model, model.input, trace);
    // no finish(): the run failed
  }
  CHECK_FALSE(std::ifstream(path).good());
}

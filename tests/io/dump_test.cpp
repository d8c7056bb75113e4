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
attn::Model small_model(bool causal) {
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

}  // namespace

TEST_CASE("the dump holds every tensor, in order, nested like its shape, full precision", "[dump]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
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
  const attn::Model model = small_model(true);
  attn::Trace trace;
  attn::run_model(model, trace);
  const auto dumped = [&](attn::JsonNonFinite mode) {
    std::ostringstream out;
    attn::write_trace_json(out, trace, model, attn::DumpOptions{mode});
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
  attn::write_trace_json(out, trace, model);
  CHECK(attn::Json::parse(out.str())["tensors"][1]["data"][0][1] == "-Infinity");
  CHECK(attn::parse_json_non_finite("null") == attn::JsonNonFinite::Null);
  CHECK_FALSE(attn::parse_json_non_finite("Null").has_value());
}

TEST_CASE("an unwritable dump path is an input error and leaves no file", "[dump][errors]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  try {
    attn::write_trace_file("/nonexistent-dir/trace.json", trace, model);
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()).rfind("/nonexistent-dir/trace.json: cannot write the dump: ", 0) == 0);
  }
  const std::string path = "attn_dump_test.json";
  std::remove(path.c_str());
  attn::write_trace_file(path, trace, model);
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
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  ScratchFolder scratch;
  const std::string path = scratch.path + "/trace.json";
  // The dump's first OpenMP region starts OpenMP's runtime, and LLVM's (libomp, in the
  // sanitizer build) then writes a 1 KB registration file, which the limit below would
  // stop: one dump first, so that the runtime has started (the small steps use no OpenMP).
  attn::write_trace_file(path, trace, model);
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
    const std::string error = attn_test::environment_error_of([&] { attn::write_trace_file(path, trace, model); });
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &saved) == 0);
    CHECK(error == path + ": cannot write the dump: write failed: File too large");
  }
  CHECK(scratch.files().empty());

  // A directory as the target: the rename fails, the temporary file goes.
  const std::string folder = scratch.path + "/trace_dir";
  REQUIRE(::mkdir(folder.c_str(), 0755) == 0);
  CHECK(input_error_of([&] { attn::write_trace_file(folder, trace, model); }) ==
        folder + ": cannot write the dump: it is a directory; give a file name, such as " + folder + "/trace.json");
  CHECK(scratch.files() == std::vector<std::string>{"trace_dir"});
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
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
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
  attn::write_trace_file(fifo, trace, model);
  reader.join();
  CHECK(attn::Json::parse(received)["tensors"].size() == trace.entries().size());
  struct stat info {};
  REQUIRE(::lstat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
  CHECK(scratch.files() == std::vector<std::string>{"pipe"});

  const std::string real = scratch.path + "/real.json", link = scratch.path + "/link.json";
  write_file(real, "old");
  REQUIRE(::symlink("real.json", link.c_str()) == 0);
  attn::write_trace_file(link, trace, model);
  REQUIRE(::lstat(link.c_str(), &info) == 0);
  CHECK(S_ISLNK(info.st_mode));
  std::ifstream in(real);
  CHECK(attn::Json::parse(in)["tensors"].size() == trace.entries().size());
}

TEST_CASE("a streamed dump is the same text as the dump of a kept trace", "[dump]") {
  const attn::Model model = small_model(true);
  attn::Trace kept;
  attn::run_model(model, kept);
  std::ostringstream expected;
  attn::write_trace_json(expected, kept, model);

  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Json, model);
  attn::Trace streamed;
  streamed.keep_entries(false);
  streamed.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
  attn::run_model(model, streamed);
  dump.finish(streamed);
  CHECK(streamed.entries().empty());
  CHECK(out.text == expected.str());
  // numbers as Python's json writes them: 0.1 stays "0.1", 1 is "1.0"
  CHECK(out.text.find("\"data\": [[[0.1, 0.2], [0.3, 0.4]]]") != std::string::npos);
}

TEST_CASE("a large tensor's text, formatted by two threads in parts, nests and round-trips exactly", "[dump]") {
  // 3 x 301 x 307 = 277,221 numbers: several parts of 65,536, rows split between them
  attn::Tensor t({3, 301, 307}, {"B", "S", "N"});
  for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = std::sin(static_cast<double>(i)) * 1e3 / (1 + i % 7);
  const attn::Model model = small_model(false);
  attn::Trace trace;
  trace.record(attn::StepId{attn::StepKind::Input}, t);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  const attn::Json doc = attn::Json::parse(out.str());
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
}

TEST_CASE("a .npz dump holds one array per trace entry", "[dump][npz]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Npz, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  // every entry's file name appears in a local header, in order
  std::size_t at = 0;
  for (const auto& e : trace.entries()) {
    at = out.text.find(e.name + ".npy", at);
    REQUIRE(at != std::string::npos);
  }
  // then the metadata, last
  CHECK(out.text.find("__meta__.json", at) != std::string::npos);
}

TEST_CASE("the .npz holds token ids as int64, padding masks as bool, and the JSON's metadata", "[dump][npz]") {
  // Two sentences of different lengths: ids, a padding mask, an additive mask.
  const attn::Model model = attn::load_model_text(attn::find_example("padded_batch").json, "padded_batch");
  attn::Trace trace(!model.batched);
  attn::run_model(model, trace);
  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Npz, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  // tokens.ids: '<i8', its values as little-endian int64 after the 64-byte header
  // (where an array's .npy header starts, and where its data does)
  const auto array_at = [&](const std::string& name) {
    const std::size_t at = out.text.find(name + ".npy");
    REQUIRE(at != std::string::npos);
    const std::size_t header = out.text.find("\x93NUMPY", at);
    const auto length =
        static_cast<unsigned char>(out.text[header + 8]) + 256 * static_cast<unsigned char>(out.text[header + 9]);
    return std::pair{header, header + 10 + length};
  };
  const auto [ids, id_data] = array_at("tokens.ids");
  CHECK(out.text.substr(ids + 10, 59) == "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }");
  const auto& id_values = find_entry(trace, "tokens.ids")->tensor.data;
  for (std::size_t i = 0; i < 6; ++i) {
    std::int64_t id = -1;
    std::memcpy(&id, out.text.data() + id_data + 8 * i, 8);
    CHECK(static_cast<double>(id) == id_values[i]);
  }
  // tokens.padding_mask: '|b1', one byte each, 1 at the padded position
  const auto [mask, mask_data] = array_at("tokens.padding_mask");
  CHECK(out.text.substr(mask + 10, 59) == "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(out.text.substr(mask_data, 6) == std::string("\0\0\0\0\0\1", 6));
  // the metadata: the JSON dump's keys, each tensor's dtype
  const std::size_t meta = out.text.find("__meta__.json");
  const std::size_t meta_start = out.text.find("{\"format\"", meta);
  REQUIRE(meta_start != std::string::npos);
  const attn::Json doc =
      attn::Json::parse(out.text.substr(meta_start, out.text.find("}\n", meta_start) + 2 - meta_start));
  CHECK(doc["format"] == "attn-trace");
  CHECK(doc["model"]["vocab_size"] == 7);
  CHECK(doc["tokens"]["source"] == attn::Json::parse(R"([["I", "love", "AI"], ["you", "too", "<PAD>"]])"));
  REQUIRE(doc["tensors"].size() == trace.entries().size());
  CHECK(doc["tensors"][0] ==
        attn::Json::parse(R"({"name": "tokens.ids", "shape": [2, 3], "axes": ["B", "S"], "dtype": "int64"})"));
  std::size_t additive = 0;
  for (const auto& t : doc["tensors"])
    if (t["name"] == "encoder.mask") additive += t["dtype"] == "float64";  // 0 and -inf, added to the scores
  CHECK(additive == 1);
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
  const attn::Model model = small_model(false);
  CHECK(input_error_of([&] { attn::TraceDump dump(scratch.path + "/t.Json", model); }) ==
        scratch.path + "/t.Json" + expected + "\".Json\" (did you mean \".json\"?)");
  CHECK(scratch.files().empty());
}

TEST_CASE("a dump abandoned mid-run (an error) leaves no file behind", "[dump][errors]") {
  const attn::Model model = small_model(false);
  const std::string path = "attn_dump_abandoned.npz";
  std::remove(path.c_str());
  {
    attn::TraceDump dump(path, model);
    attn::Trace trace;
    trace.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
    attn::run_model(model, trace);
    // no finish(): the run failed
  }
  CHECK_FALSE(std::ifstream(path).good());
}

TEST_CASE("the dump holds every parameter under its model-file path", "[dump][parameters]") {
  // Seed 004's W_q, the built-in model's numbers: encoder.0.attention.W_q row 0 is [0.1, 0.2, 0.3, 0.4].
  const attn::Model model =
      attn::load_model_file(std::string(ATTN_SOURCE_DIR) + "/data/examples/seed004_i_love_ai.json");
  attn::Trace trace;
  attn::run_model(model, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  // The decoder's masked scores hold -Infinity, which Python reads and nlohmann does not.
  std::string text = out.str();
  for (std::size_t at; (at = text.find("-Infinity")) != std::string::npos;) text.replace(at, 9, "null");
  const attn::Json doc = attn::Json::parse(text);
  // The tensors are unchanged: the parameters come after them, in a list of their own.
  REQUIRE(doc["tensors"].size() == trace.entries().size());
  std::map<std::string, attn::Json> parameters;
  for (const auto& p : doc["parameters"]) parameters[p["name"].get<std::string>()] = p;
  CHECK(parameters["encoder.0.attention.W_q"]["data"][0] == attn::Json::array({0.1, 0.2, 0.3, 0.4}));
  CHECK(parameters["encoder.0.attention.W_q"]["axes"] == attn::Json::array({"N", "H*d"}));
  CHECK(parameters["encoder.0.ffn.W_1"]["shape"] == attn::Json::array({4, 8}));
  CHECK(parameters["encoder.0.norm1.gamma"]["data"] == attn::Json::array({1.0, 1.0, 1.0, 1.0}));
  CHECK(parameters["decoder.0.cross_attention.W_o"]["shape"] == attn::Json::array({4, 4}));
  CHECK(parameters["decoder.0.norm3.beta"]["shape"] == attn::Json::array({4}));
  CHECK(parameters["embedding"]["data"][3] == attn::Json::array({0.5, 0.1, 0.8, 0.2}));  // "love"
  // The count validate prints is the dump's numbers added up.
  std::size_t numbers = 0;
  for (const auto& [name, p] : parameters) {
    std::size_t n = 1;
    for (const auto& d : p["shape"]) n *= d.get<std::size_t>();
    numbers += n;
  }
  CHECK(numbers == attn::parameter_count(model));
  // In a .npz, one array each after the trace's.
  attn::StringOutput npz;
  attn::TraceDump dump(npz, attn::DumpFormat::Npz, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  CHECK(npz.text.find("encoder.0.ffn.W_1.npy") != std::string::npos);
  CHECK(npz.text.find("decoder.0.norm2.gamma.npy") != std::string::npos);
  // and listed in __meta__.json after the tensors, with their axes and type
  CHECK(npz.text.find(R"("parameters": [{"name":"embedding","shape":[)") != std::string::npos);
  CHECK(npz.text.find(R"({"name":"encoder.0.attention.W_q","shape":[4,4],"axes":["N","H*d"],"dtype":"float64"})") !=
        std::string::npos);
}

TEST_CASE("a variant model's dump names its variants and their tensors", "[dump][variants]") {
  const attn::Model model = attn::load_model_text(attn::find_example("llama_block").json, "llama_block");
  attn::Trace trace(!model.batched);
  attn::run_model(model, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  // The masks' -Infinity is Python's JSON, not nlohmann's: read as a large number here.
  std::string text = out.str();
  for (std::size_t at = text.find("-Infinity"); at != std::string::npos; at = text.find("-Infinity", at))
    text.replace(at, 9, "-1e308");
  const attn::Json doc = attn::Json::parse(text);
  CHECK(doc["model"]["norm"] == "rmsnorm");
  CHECK(doc["model"]["activation"] == "swiglu");
  CHECK(doc["model"]["positional_encoding"] == "rope");
  CHECK(doc["model"]["rope_theta"] == 10000.0);
  CHECK(doc["model"]["num_kv_heads"] == 1);
  CHECK(doc["model"]["sliding_window"] == 4);
  std::vector<std::string> names;
  for (const auto& t : doc["tensors"]) names.push_back(t["name"].get<std::string>());
  for (const char* name : {"decoder.0.self_attention.q_rope", "decoder.0.self_attention.k_rope",
                           "decoder.0.self_attention.k_repeat", "decoder.0.self_attention.v_repeat"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  std::size_t k_heads = 0;
  for (const auto& t : doc["tensors"])
    if (t["name"] == "decoder.0.self_attention.k_heads") {
      CHECK(t["axes"] == attn::Json::array({"G", "S", "d"}));
      ++k_heads;
    }
  CHECK(k_heads == 1);
  // The paper's models keep their keys: none of the variants' appears.
  const attn::Model plain = small_model(false);
  attn::Trace plain_trace;
  attn::run_model(plain, plain_trace);
  std::ostringstream plain_out;
  attn::write_trace_json(plain_out, plain_trace, plain);
  const attn::Json plain_doc = attn::Json::parse(plain_out.str());
  for (const char* key : {"norm", "rope_theta", "num_kv_heads", "sliding_window"})
    CHECK_FALSE(plain_doc["model"].contains(key));
}

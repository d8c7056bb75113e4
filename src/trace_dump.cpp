#include "attn/trace_dump.h"

#include <cerrno>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"

namespace attn {

namespace {

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v < 0 ? "-Infinity" : "Infinity";
  } else {
    // fmt's default for double is the shortest representation that round-trips.
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
}

void append_nested(std::string& out, const Tensor& t, std::size_t axis, std::size_t offset, std::size_t stride) {
  if (t.rank() == 0) {
    append_number(out, t.data.empty() ? 0.0 : t.data[0]);
    return;
  }
  const std::size_t inner = stride / t.shape[axis];
  out += '[';
  for (std::size_t i = 0; i < t.shape[axis]; ++i) {
    if (i) out += ", ";
    if (axis + 1 == t.rank())
      append_number(out, t.data[offset + i]);
    else
      append_nested(out, t, axis + 1, offset + i * inner, inner);
  }
  out += ']';
}

nlohmann::json model_summary(const Model& model) {
  const ModelConfig& c = model.config;
  nlohmann::json m = {{"d_model", c.d_model},
                      {"num_heads", c.num_heads},
                      {"d_head", c.d_head},
                      {"d_ff", c.d_ff},
                      {"causal", c.causal},
                      {"seed", c.seed},
                      {"activation", c.activation == Activation::GELU ? "gelu" : "relu"},
                      {"norm_first", c.norm_first},
                      {"layer_norm_eps", c.layer_norm_eps},
                      {"positional_encoding", c.positional_encoding == PositionalEncoding::Learned ? "learned"
                                              : c.positional_encoding == PositionalEncoding::None  ? "none"
                                                                                                   : "sinusoidal"},
                      {"scale_embeddings", c.scale_embeddings},
                      {"num_layers", model.encoder.size()},
                      {"num_decoder_layers", model.decoder.size()},
                      {"vocab_size", model.vocab.size()},
                      {"output", !model.output.present ? "none" : model.output.tied ? "tied" : "linear"},
                      {"input", model.has_tokens() ? (model.source_tokens.texts.empty() ? "tokens" : "text") : "X"},
                      {"batched", model.batched}};
  return m;
}

// Token strings of each sequence, (B,S) with "<PAD>" where padded, or absent.
nlohmann::json token_summary(const Trace& trace) {
  nlohmann::json tokens = nlohmann::json::object();
  for (const char* which : {"source", "target"})
    if (const auto* t = trace.tokens(which)) tokens[which] = trace.drops_batch_axis() && t->size() == 1 ? nlohmann::json((*t)[0]) : nlohmann::json(*t);
  return tokens;
}

// What the walkthrough prints as notes (unknown words, fully masked rows), for readers of the dump.
nlohmann::json warning_summary(const Trace& trace) {
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : trace.warnings()) warnings.push_back({{"name", w.name}, {"message", w.message}});
  return warnings;
}

}  // namespace

void write_trace_json(std::ostream& out, const Trace& trace, const Model& model) {
  out << "{\"format\": \"attn-trace\", \"version\": 1, \"model\": " << model_summary(model).dump()
      << ", \"tokens\": " << token_summary(trace).dump() << ", \"warnings\": " << warning_summary(trace).dump()
      << ", \"tensors\": [";
  std::string buffer;
  bool first = true;
  for (const auto& e : trace.entries()) {
    buffer.clear();
    buffer += first ? "\n" : ",\n";
    first = false;
    nlohmann::json shape = e.tensor.shape;
    nlohmann::json axes = e.tensor.axes;
    buffer += fmt::format("{{\"name\": {}, \"shape\": {}, \"axes\": {}, \"data\": ", nlohmann::json(e.name).dump(),
                          shape.dump(), axes.dump());
    append_nested(buffer, e.tensor, 0, 0, e.tensor.size());
    buffer += '}';
    out << buffer;
  }
  out << "\n]}\n";
}

namespace {

// The temporary file a signal handler must remove. A fixed buffer: a handler may only call
// async-signal-safe functions (unlink, sigaction, raise), not touch a std::string.
char g_temp_path[4096];
volatile std::sig_atomic_t g_temp_active = 0;
const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction g_previous[4];
// SIGXFSZ (a file size limit, `ulimit -f`) would kill the process mid-write and leave the
// temporary file; ignored, it makes the write fail with EFBIG, which is reported.
struct sigaction g_previous_xfsz;

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_temp_active) ::unlink(g_temp_path);
  g_temp_active = 0;
  // Die of the same signal, as the shell expects (exit status 128 + sig).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(sig, &default_action, nullptr);
  ::raise(sig);
}

std::string parent_folder(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw InputError(path, "", "cannot write the dump: " + why);
}

}  // namespace

TempFile::TempFile(const std::string& target) : target_(target) {
  std::vector<char> name(target.begin(), target.end());
  const char suffix[] = ".tmp-XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof suffix);  // with the '\0'
  const int fd = ::mkstemp(name.data());
  if (fd < 0) cannot_write(target, std::strerror(errno));
  path_ = name.data();
  // mkstemp makes the file private (0600); a dump is an ordinary output file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  // Remove the file if a signal stops the process, unless another TempFile already does
  // that or the name does not fit the handler's buffer.
  if (!g_temp_active && path_.size() < sizeof g_temp_path) {
    std::memcpy(g_temp_path, path_.c_str(), path_.size() + 1);
    g_temp_active = 1;
    owns_signals_ = true;
    struct sigaction action {};
    action.sa_handler = remove_temp_and_reraise;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < 4; ++i) {
      ::sigaction(kCleanupSignals[i], nullptr, &g_previous[i]);
      // A signal the user chose to ignore (nohup) stays ignored.
      if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &g_previous_xfsz);
  }
}

TempFile::~TempFile() {
  if (!committed_) std::remove(path_.c_str());
  if (owns_signals_) {
    g_temp_active = 0;
    for (std::size_t i = 0; i < 4; ++i)
      if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &g_previous[i], nullptr);
    ::sigaction(SIGXFSZ, &g_previous_xfsz, nullptr);
  }
}

void TempFile::commit() {
  if (std::rename(path_.c_str(), target_.c_str()) != 0) cannot_write(target_, std::strerror(errno));
  committed_ = true;
}

void check_dump_target(const std::string& dump_path, const std::vector<std::string>& input_paths) {
  if (dump_path == "-") return;
  struct stat target {};
  if (::stat(dump_path.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode))
      cannot_write(dump_path, "it is a directory; give a file name, such as " +
                                  (dump_path.back() == '/' ? dump_path : dump_path + "/") + "trace.json");
    for (const auto& input : input_paths) {
      struct stat in {};
      if (!input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino)
        cannot_write(dump_path, "it is the input model file " + input + "; choose another name for the dump");
    }
    return;
  }
  const std::string folder = parent_folder(dump_path);
  struct stat parent {};
  if (::stat(folder.c_str(), &parent) != 0) cannot_write(dump_path, "the folder " + folder + " does not exist");
  if (!S_ISDIR(parent.st_mode)) cannot_write(dump_path, folder + " is not a folder");
}

void write_trace_json_file(const std::string& path, const Trace& trace, const Model& model) {
  if (path == "-") {
    write_trace_json(std::cout, trace, model);
    std::cout.flush();
    return;
  }
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/null, a FIFO): nothing to replace whole, and a
    // rename would replace the device node itself (as root, /dev/stdout for everyone).
    // Write straight into it.
    std::ofstream out(path, std::ios::binary);
    if (!out) cannot_write(path, std::strerror(errno));
    errno = 0;
    write_trace_json(out, trace, model);
    out.close();
    if (!out) cannot_write(path, errno ? fmt::format("write failed: {}", std::strerror(errno)) : "write failed");
    return;
  }
  // Through a symbolic link, replace the file it points to and keep the link.
  std::string target = path;
  struct stat link {};
  if (exists && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      target = resolved;
      std::free(resolved);
    }
  }
  TempFile temp(target);
  {
    std::ofstream out(temp.path(), std::ios::binary | std::ios::trunc);
    if (!out) cannot_write(path, "cannot open a temporary file");
    errno = 0;
    write_trace_json(out, trace, model);
    // close() flushes: a full disk or a file size limit shows up here at the latest.
    out.close();
    if (!out) cannot_write(path, errno ? fmt::format("write failed: {}", std::strerror(errno)) : "write failed (disk full?)");
  }
  temp.commit();
}

}  // namespace attn

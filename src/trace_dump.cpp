#include "attn/trace_dump.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
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

void write_trace_json_file(const std::string& path, const Trace& trace, const Model& model) {
  if (path == "-") {
    write_trace_json(std::cout, trace, model);
    std::cout.flush();
    return;
  }
  // A temporary file beside the target, so the final rename stays on one file system.
  std::string temp = path + ".tmp-XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw InputError(path, "", fmt::format("cannot write the dump: {}", std::strerror(errno)));
  // mkstemp makes the file private (0600); a dump is an ordinary output file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  temp = name.data();
  try {
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      if (!out) throw InputError(path, "", "cannot write the dump: cannot open a temporary file");
      write_trace_json(out, trace, model);
      out.flush();
      if (!out) throw InputError(path, "", "cannot write the dump: write failed (disk full?)");
    }
    if (std::rename(temp.c_str(), path.c_str()) != 0)
      throw InputError(path, "", fmt::format("cannot write the dump: {}", std::strerror(errno)));
  } catch (...) {
    std::remove(temp.c_str());
    throw;
  }
}

}  // namespace attn

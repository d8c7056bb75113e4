#include "attn/dump.h"

#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "io/npz_writer.h"
#include "io/number_text.h"

namespace attn {

namespace {

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
                      {"output", !model.output.present ? "none"
                                 : model.output.tied   ? "tied"
                                                       : "linear"},
                      {"input", model.has_tokens() ? (model.source_tokens.texts.empty() ? "tokens" : "text") : "X"},
                      {"batched", model.batched}};
  return m;
}

// Token strings of each sequence, (B,S) with "<PAD>" where padded, or absent.
nlohmann::json token_summary(const Trace& trace) {
  nlohmann::json tokens = nlohmann::json::object();
  for (const auto& [sequence, key] : {std::pair{Sequence::Source, "source"}, std::pair{Sequence::Target, "target"}})
    if (const auto* t = trace.tokens(sequence))
      tokens[key] = trace.drops_batch_axis() && t->size() == 1 ? nlohmann::json((*t)[0]) : nlohmann::json(*t);
  return tokens;
}

// What the walkthrough prints as notes (unknown words, fully masked rows), for readers of the dump.
nlohmann::json warning_summary(const Trace& trace) {
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : trace.warnings()) warnings.push_back({{"name", w.name}, {"message", w.message}});
  return warnings;
}

// The nested-list text of a tensor, one last-axis row at a time. Row r of a (2,3,4)
// tensor is "[a, b, c, d]", preceded by "[[" for the first row, by "], [" or "]], [["
// when it starts a new block, and the last row is followed by "]]".
class NestedRows {
 public:
  NestedRows(const Shape& shape, const double* data) : shape_(shape), data_(data) {
    rank_ = shape.size();
    row_len_ = rank_ ? shape.back() : 1;
    rows_ = row_len_ ? element_count(shape) / row_len_ : 0;
  }
  std::size_t rows() const { return rows_; }
  std::size_t row_len() const { return row_len_; }
  // Room enough for rows [begin, end).
  std::size_t max_chars(std::size_t begin, std::size_t end) const {
    return (end - begin) * (row_len_ * (kMaxShortestChars + 2) + 4 * rank_ + 4) + kShortestScratch;
  }

  // Writes rows [begin, end) at `out`; returns the end.
  char* write(std::size_t begin, std::size_t end, char* out) const {
    for (std::size_t r = begin; r < end; ++r) {
      // How many leading axes start a new block at row r (all of them at row 0).
      std::size_t opened = rank_ > 0 ? rank_ - 1 : 0;
      if (r > 0) {
        opened = 0;
        for (std::size_t rest = r, axis = rank_ - 1; axis-- > 0 && rest % shape_[axis] == 0; rest /= shape_[axis])
          ++opened;
        std::fill_n(out, opened, ']');
        out += opened;
        *out++ = ',';
        *out++ = ' ';
      }
      std::fill_n(out, opened, '[');
      out += opened;
      const double* row = data_ + r * row_len_;
      if (rank_ > 0) *out++ = '[';
      for (std::size_t j = 0; j < row_len_; ++j) {
        if (j) {
          *out++ = ',';
          *out++ = ' ';
        }
        out = write_shortest(row[j], out);
      }
      if (rank_ > 0) *out++ = ']';
    }
    if (begin < end && end == rows_ && rank_ > 1) {
      std::fill_n(out, rank_ - 1, ']');
      out += rank_ - 1;
    }
    return out;
  }

 private:
  const Shape& shape_;
  const double* data_;
  std::size_t rank_, row_len_, rows_;
};

// Nested empty lists for a shape with a zero in it: (2, 0) -> [[], []].
void append_empty(std::string& out, const Shape& shape, std::size_t axis) {
  out += '[';
  if (axis + 1 < shape.size())
    for (std::size_t i = 0; i < shape[axis]; ++i) {
      if (i) out += ", ";
      append_empty(out, shape, axis + 1);
    }
  out += ']';
}

}  // namespace

// The JSON dump, streamed: the header when opened, one tensor per add(), the tokens, the
// warnings and the closing brackets in finish().
class TraceDump::Json {
 public:
  Json(ByteOutput& out, const Model& model) : out_(out) {
    out_.write(fmt::format("{{\"format\": \"attn-trace\", \"version\": 1, \"model\": {}, \"tensors\": [",
                           model_summary(model).dump()));
  }

  void add(const TraceRecord& r) { add_entry(r.name, r.shape, r.axes, r.data); }

  // The model's parameters, after the tensors: every number of the run can be checked.
  void finish(const Trace& trace, const Model& model) {
    out_.write("\n], \"parameters\": [");
    first_ = true;
    for (const auto& p : parameters(model))
      add_entry(parameter_name(p.id), p.tensor->shape, p.tensor->axes, p.tensor->data.data());
    out_.write(fmt::format("\n], \"tokens\": {}, \"warnings\": {}}}\n", token_summary(trace).dump(),
                           warning_summary(trace).dump()));
  }

 private:
  void add_entry(const std::string& name, const Shape& shape, const AxisNames& axes, const double* data) {
    out_.write(fmt::format("{}{{\"name\": {}, \"shape\": {}, \"axes\": {}, \"data\": ", first_ ? "\n" : ",\n",
                           nlohmann::json(name).dump(), nlohmann::json(shape).dump(), nlohmann::json(axes).dump()));
    first_ = false;
    write_data(shape, data);
    out_.write("}");
  }

  void write_data(const Shape& shape, const double* data) {
    const std::size_t n = element_count(shape);
    if (n == 0 && !shape.empty()) {
      std::string empty;
      append_empty(empty, shape, 0);
      out_.write(empty);
      return;
    }
    const NestedRows rows(shape, data);
    // Blocks of rows ("parts"), taken in turn by the two threads: each formats its part
    // into its own buffer (formatting dominates the dump, about 50 ns a number) and
    // writes it when the part before has been written, so one thread's writing overlaps
    // the other's formatting and nothing bigger than a part is ever held as text.
    const std::size_t rows_per_part =
        std::max<std::size_t>(1, kNumbersPerPart / std::max<std::size_t>(1, rows.row_len()));
    const std::size_t parts = (rows.rows() + rows_per_part - 1) / rows_per_part;
    const bool parallel = n >= kParallelMinNumbers && parts > 1;
    std::exception_ptr failure;  // an exception must not leave an OpenMP region
#pragma omp parallel num_threads(2) if (parallel)
    {
      std::vector<char> buffer;
#pragma omp for ordered schedule(static, 1)
      for (std::size_t part = 0; part < parts; ++part) {
        const std::size_t begin = part * rows_per_part, end = std::min(rows.rows(), begin + rows_per_part);
        buffer.resize(rows.max_chars(begin, end));
        const std::size_t length = static_cast<std::size_t>(rows.write(begin, end, buffer.data()) - buffer.data());
#pragma omp ordered
        {
          if (!failure) try {
              out_.write(buffer.data(), length);
            } catch (...) {
              failure = std::current_exception();
            }
        }
      }
    }
    if (failure) std::rethrow_exception(failure);
  }

  static constexpr std::size_t kNumbersPerPart = std::size_t{1} << 16;
  // Formatting takes about 50 ns a number, so 32K numbers are 1.6 ms of work: enough to
  // be worth the second thread (src/parallel.h says why cheaper loops stay on one).
  static constexpr std::size_t kParallelMinNumbers = std::size_t{1} << 15;
  ByteOutput& out_;
  bool first_ = true;
};

bool TraceDump::is_npz_path(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".npz") == 0;
}

TraceDump::TraceDump(const std::string& path, const Model& model)
    : file_(std::make_unique<OutputFile>(path)), out_(file_.get()), model_(&model) {
  if (is_npz_path(path))
    npz_ = std::make_unique<NpzWriter>(*out_);
  else
    json_ = std::make_unique<Json>(*out_, model);
}

TraceDump::TraceDump(ByteOutput& out, bool npz, const Model& model) : out_(&out), model_(&model) {
  if (npz)
    npz_ = std::make_unique<NpzWriter>(out);
  else
    json_ = std::make_unique<Json>(out, model);
}

TraceDump::~TraceDump() = default;

void TraceDump::add(const TraceRecord& record) {
  if (json_) json_->add(record);
  if (npz_) npz_->add(record.name, record.shape, record.data);
}

void TraceDump::finish(const Trace& trace) {
  if (json_) json_->finish(trace, *model_);
  if (npz_) {
    for (const auto& p : parameters(*model_)) npz_->add(parameter_name(p.id), p.tensor->shape, p.tensor->data.data());
    npz_->finish();
  }
  if (file_) file_->commit();
}

std::uint64_t TraceDump::bytes_written() const { return file_ ? file_->bytes_written() : 0; }

namespace {
class OstreamOutput : public ByteOutput {
 public:
  explicit OstreamOutput(std::ostream& out) : out_(out) {}
  void write(const char* data, std::size_t size) override { out_.write(data, static_cast<std::streamsize>(size)); }
  using ByteOutput::write;

 private:
  std::ostream& out_;
};
}  // namespace

void write_trace_json(std::ostream& out, const Trace& trace, const Model& model) {
  OstreamOutput output(out);
  TraceDump dump(output, false, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
}

namespace {

std::string parent_folder(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw InputError(path, "", "cannot write the dump: " + why);
}

}  // namespace

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

void write_trace_file(const std::string& path, const Trace& trace, const Model& model) {
  TraceDump dump(path, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
}

}  // namespace attn

#include "attn/dump.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <omp.h>
#include <nlohmann/json.hpp>

#include "forward/memory_holdings.h"
#include "io/dump_summary.h"
#include "io/npz_writer.h"
#include "io/number_text.h"
#include "io/output_file.h"
#include "io/part_pipeline.h"

namespace attn {

namespace {

// The nested-list text of a tensor, one last-axis row at a time. Row r of a (2,3,4)
// tensor is "[a, b, c, d]", preceded by "[[" for the first row, by "], [" or "]], [["
// when it starts a new block, and the last row is followed by "]]".
class NestedRows {
 public:
  NestedRows(const Shape& shape, const double* data, JsonNonFinite non_finite)
      : shape_(shape), data_(data), non_finite_(non_finite) {
    rank_ = shape.size();
    row_len_ = rank_ ? shape.back() : 1;
    rows_ = row_len_ ? element_count(shape) / row_len_ : 0;
  }
  std::size_t rows() const { return rows_; }
  std::size_t row_len() const { return row_len_; }
  // Room enough for rows [begin, end).
  std::size_t max_chars(std::size_t begin, std::size_t end) const {
    return (end - begin) * (row_len_ * (kMaxShortestChars + 4) + 4 * rank_ + 4) + kShortestScratch;
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
        out = write_number(row[j], out);
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
  // A finite number as Python's json writes it; -inf, inf and NaN as asked.
  char* write_number(double v, char* out) const {
    if (std::isfinite(v) || non_finite_ == JsonNonFinite::Literal) return write_shortest(v, out);
    if (non_finite_ == JsonNonFinite::Null) return std::copy_n("null", 4, out);
    *out++ = '"';
    out = write_shortest(v, out);
    *out++ = '"';
    return out;
  }

  const Shape& shape_;
  const double* data_;
  JsonNonFinite non_finite_;
  std::size_t rank_, row_len_, rows_;
};

// The .npz's list of what it wrote, held until its end: each tensor's zip entry (its file
// name and offsets) and its line in __meta__.json (name, shape, axes and dtype as a JSON
// object, then as text), in vectors and strings whose capacity doubles. A run's heap with
// the dump, less its heap without it and the file's buffer, was 380 to 1010 bytes a tensor
// on the examples (explain, grad, generate: 51 to 187 tensors); counted as 1536.
constexpr long double kNpzBytesPerTensor = 1536;

// A tensor's text is formatted in parts of whole rows, 8K numbers or one row: 8K numbers are
// about 160 KB of text, a quarter of a millisecond to format: small enough that the threads
// share even the (S, d) tensors of base (128 x 512, 8 parts) evenly, large enough that
// handing parts over costs nothing next to them. The parts are cut by the sizes alone, so
// the text is the same whatever the number of threads.
constexpr std::size_t kNumbersPerPart = std::size_t{1} << 13;
std::size_t rows_per_part_of(const NestedRows& rows) {
  return std::max<std::size_t>(1, kNumbersPerPart / std::max<std::size_t>(1, rows.row_len()));
}

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

// A parameter's numbers as float64: its own, or a weight kept as stored widened into
// `widened_copy` (the dump writes one parameter at a time, so one is alive at a time).
const double* parameter_numbers(const Tensor& parameter, Tensor& widened_copy) {
  if (!parameter.stored) return parameter.data.data();
  widened_copy = widened(parameter);
  return widened_copy.data.data();
}

}  // namespace

// The JSON dump, streamed: the header when opened, one tensor per add(), the tokens, the
// warnings and the closing brackets in finish().
class TraceDump::Json {
 public:
  Json(ByteOutput& out, const nlohmann::json& summary, JsonNonFinite non_finite) : out_(out), non_finite_(non_finite) {
    out_.write(
        fmt::format("{{\"format\": \"attn-trace\", \"version\": 1, \"model\": {}, \"tensors\": [", summary.dump()));
  }

  void add(const TraceRecord& r) { add_entry(r.name, r.shape, r.axes, r.data); }

  // The model's parameters, after the tensors: every number of the run can be checked.
  void finish(const Trace& trace, const Model& model, bool with_parameters) {
    out_.write("\n], \"parameters\": [");
    first_ = true;
    if (with_parameters)
      for (const auto& p : parameters(model)) {
        Tensor widened_copy;
        add_entry(parameter_name(p.id), p.tensor->shape, p.tensor->axes, parameter_numbers(*p.tensor, widened_copy));
      }
    out_.write(first_ ? "]" : "\n]");
    out_.write(fmt::format(", \"tokens\": {}, \"warnings\": {}}}\n", token_summary(trace).dump(),
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
    const NestedRows rows(shape, data, non_finite_);
    // Blocks of rows ("parts"), formatted by the threads (formatting is most of the dump)
    // and written in order as they are done, so nothing bigger than a few parts is ever
    // held as text.
    const std::size_t rows_per_part = rows_per_part_of(rows), parts = (rows.rows() + rows_per_part - 1) / rows_per_part;
    pipeline_.run(
        parts, rows.max_chars(0, std::min(rows.rows(), rows_per_part)), n >= kParallelMinNumbers,
        [&rows, rows_per_part](std::size_t part, PartBuffer& buffer) {
          const std::size_t begin = part * rows_per_part, end = std::min(rows.rows(), begin + rows_per_part);
          char* text = buffer.room(rows.max_chars(begin, end));
          return static_cast<std::size_t>(rows.write(begin, end, text) - text);
        },
        [this](const char* text, std::size_t length) { out_.write(text, length); });
  }

  // Formatting takes about 35 ns a number, so 32K numbers are 1.1 ms of work: enough to
  // be worth waking another thread (kernels/parallel.h says why cheaper loops stay on one).
  static constexpr std::size_t kParallelMinNumbers = std::size_t{1} << 15;
  PartPipeline pipeline_{omp_get_max_threads()};
  ByteOutput& out_;
  JsonNonFinite non_finite_;
  bool first_ = true;
};

// The .npz dump: each tensor as it comes, then "__meta__.json".
class TraceDump::Npz {
 public:
  Npz(ByteOutput& out, nlohmann::json summary) : writer_(out), model_(std::move(summary)) {}

  void add(const TraceRecord& r) {
    const NpyType type = npz_type(r.id.kind);
    writer_.add(r.name, r.shape, r.data, type);
    tensors_.push_back({{"name", r.name}, {"shape", r.shape}, {"axes", r.axes}, {"dtype", numpy_type_name(type)}});
  }

  // The model's parameters, after the tensors, as in the JSON dump.
  void finish(const Trace& trace, const Model& model, bool with_parameters) {
    nlohmann::ordered_json weights = nlohmann::ordered_json::array();
    for (const auto& p : with_parameters ? parameters(model) : std::vector<ConstParameter>{}) {
      const std::string name = parameter_name(p.id);
      Tensor widened_copy;
      writer_.add(name, p.tensor->shape, parameter_numbers(*p.tensor, widened_copy));
      weights.push_back({{"name", name}, {"shape", p.tensor->shape}, {"axes", p.tensor->axes}, {"dtype", "float64"}});
    }
    writer_.add_file("__meta__.json", npz_metadata(model_, trace, tensors_, weights));
    writer_.finish();
  }

 private:
  NpzWriter writer_;
  nlohmann::json model_;
  nlohmann::ordered_json tensors_ = nlohmann::ordered_json::array();
};

TraceDump::TraceDump(const std::string& path, const Model& model, const RunInput& input, const DumpOptions& options)
    : model_(&model) {
  const DumpFormat format = dump_format(path);  // before the temporary file exists
  file_ = std::make_unique<OutputFile>(path);
  out_ = file_.get();
  open(format, model, input, options);
}

TraceDump::TraceDump(ByteOutput& out, DumpFormat format, const Model& model, const RunInput& input,
                     const DumpOptions& options)
    : out_(&out), model_(&model) {
  open(format, model, input, options);
}

void TraceDump::open(DumpFormat format, const Model& model, const RunInput& input, const DumpOptions& options) {
  const nlohmann::json summary = model_summary(model, input);
  with_parameters_ = dump_includes_parameters(options.parameters, model);
  if (format == DumpFormat::Npz)
    npz_ = std::make_unique<Npz>(*out_, summary);
  else
    json_ = std::make_unique<Json>(*out_, summary, options.non_finite);
}

TraceDump::~TraceDump() = default;

void TraceDump::add(const TraceRecord& record) {
  if (json_) json_->add(record);
  if (npz_) npz_->add(record);
}

void TraceDump::finish(const Trace& trace) {
  if (json_) json_->finish(trace, *model_, with_parameters_);
  if (npz_) npz_->finish(trace, *model_, with_parameters_);
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

std::uint64_t dump_held_bytes(const std::string& path, const Model& model, const DumpOptions& options,
                              const std::vector<const Shape*>& shapes, long double tensors) {
  const bool with_parameters = dump_includes_parameters(options.parameters, model);
  const std::vector<ConstParameter> dumped_parameters =
      with_parameters ? parameters(model) : std::vector<ConstParameter>{};
  long double widened_copy = 0;
  for (const ConstParameter& p : dumped_parameters) {
    tensors += 1;
    if (p.tensor->stored) widened_copy = std::max(widened_copy, tensor_heap_bytes(p.tensor->shape, p.tensor->axes));
  }
  long double bytes = static_cast<long double>(OutputFile::kBufferHeapBytes) + widened_copy;
  if (dump_format(path) == DumpFormat::Npz)
    return static_cast<std::uint64_t>(std::min(bytes + kNpzBytesPerTensor * tensors, 1.8e19L));
  PartHolding parts(omp_get_max_threads());
  const auto add_parts = [&](const Shape& shape) {
    const NestedRows rows(shape, nullptr, options.non_finite);
    if (rows.rows() == 0) return;
    const std::size_t per_part = rows_per_part_of(rows), count = (rows.rows() + per_part - 1) / per_part;
    parts.add(count, rows.max_chars(0, std::min(rows.rows(), per_part)),
              rows.max_chars((count - 1) * per_part, rows.rows()));
  };
  for (const Shape* shape : shapes) add_parts(*shape);
  for (const ConstParameter& p : dumped_parameters) add_parts(p.tensor->shape);
  return static_cast<std::uint64_t>(bytes + static_cast<long double>(parts.bytes()));
}

void write_trace_json(std::ostream& out, const Trace& trace, const Model& model, const RunInput& input,
                      const DumpOptions& options) {
  OstreamOutput output(out);
  TraceDump dump(output, DumpFormat::Json, model, input, options);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
}

void write_trace_file(const std::string& path, const Trace& trace, const Model& model, const RunInput& input,
                      const DumpOptions& options) {
  TraceDump dump(path, model, input, options);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
}

}  // namespace attn

#include "model/hf_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

std::string WeightRead::source_text() const {
  switch (layout) {
    case StoredLayout::AsStored:
      return tensor;
    case StoredLayout::Transposed:
      return tensor + ".T";
    case StoredLayout::Columns:
      return fmt::format("{}[:, {}:{}]", tensor, begin, end);
    case StoredLayout::Range:
      return fmt::format("{}[{}:{}]", tensor, begin, end);
    case StoredLayout::Rows:
      return fmt::format("{}[{}:{}]", tensor, begin, end);
    case StoredLayout::HeadRows:
      return fmt::format("{}.view({}, {}, -1)[:, {}:{}].T", tensor, groups, stored_shape[0] / groups, begin, end);
    case StoredLayout::HeadRange:
      return fmt::format("{}.view({}, {})[:, {}:{}]", tensor, groups, stored_shape[0] / groups, begin, end);
  }
  return tensor;
}

void plan_check(std::vector<WeightRead>& plan, const CheckpointFiles& files, const std::string& architecture) {
  for (auto& w : plan) {
    w.entry = files.find(w.tensor);
    if (!w.entry.tensor)
      throw InputError(files.weights_path(), w.tensor,
                       fmt::format("missing: {} needs it for {} ({})", architecture, w.parameter, w.shape_words));
    const std::string& file = w.entry.file->path();
    require_float_dtype(*w.entry.tensor, file);
    const Shape& found = w.entry.tensor->shape;
    if (found == w.stored_shape) continue;
    const bool transposed = found.size() == 2 && w.stored_shape.size() == 2 && found[0] == w.stored_shape[1] &&
                            found[1] == w.stored_shape[0];
    throw InputError(
        file, w.tensor,
        fmt::format("expected shape {} ({}), found {}{}", shape_string(w.stored_shape), w.shape_words,
                    shape_string(found), transposed ? ": the transpose of what this architecture stores" : ""));
  }
}

bool matches_tensor_pattern(const std::string& pattern, const std::string& name, std::size_t* layer, bool prefix_only) {
  static const std::string kLayer = "{L}";
  std::size_t p = 0, n = 0;
  while (p < pattern.size()) {
    if (pattern.compare(p, kLayer.size(), kLayer) == 0) {
      std::size_t end = n;
      while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
      // one to nine digits, without a leading zero: "0", "12", not "012" nor ""
      if (end == n || end - n > 9 || (name[n] == '0' && end - n > 1)) return false;
      if (layer) *layer = std::stoul(name.substr(n, end - n));
      n = end;
      p += kLayer.size();
      continue;
    }
    if (n >= name.size() || name[n] != pattern[p]) return false;
    ++n;
    ++p;
  }
  return prefix_only || n == name.size();
}

void check_every_tensor_used(const std::vector<WeightRead>& plan, const CheckpointFiles& files,
                             const KnownTensors& known, const std::string& architecture) {
  std::set<const StoredTensor*> read;
  for (const auto& w : plan) read.insert(w.entry.tensor);
  for (const auto& [file, tensor] : files.every_tensor()) {
    if (read.count(tensor)) continue;
    const std::string& name = tensor->name;
    const auto known_unused = [&](const std::string& pattern) { return matches_tensor_pattern(pattern, name); };
    if (std::any_of(known.unused.begin(), known.unused.end(), known_unused)) continue;
    std::size_t layer = 0;
    if (matches_tensor_pattern(known.layer_prefix, name, &layer, /*prefix_only=*/true) && layer >= known.layers)
      throw InputError(
          file->path(), name,
          fmt::format("expected {} layer{} (config.json's {} = {}), found a tensor of layer {}: the "
                      "checkpoint holds more layers than its config says",
                      known.layers, known.layers == 1 ? "" : "s", known.layers_field, known.layers, layer));
    throw InputError(file->path(), name,
                     fmt::format("unexpected: {} does not use this tensor, and attn does not run a checkpoint part "
                                 "of which it would leave out (docs/real-models.md lists the tensors read)",
                                 architecture));
  }
}

namespace {

// out[k] = view[source(k)] for every k, each checked finite; the error names the stored
// element ([row, column]) as the checkpoint holds it.
template <typename Source>
void gather(const TensorView& view, const std::string& file, Tensor& out, Source source) {
  const Shape& shape = view.info().shape;
  for (std::size_t k = 0; k < out.data.size(); ++k) {
    const std::size_t i = source(k);
    const double v = view[i];
    if (!std::isfinite(v)) {
      const std::string where =
          shape.size() == 2 ? fmt::format("[{}, {}]", i / shape[1], i % shape[1]) : fmt::format("[{}]", i);
      throw InputError(file, view.info().name,
                       fmt::format("expected finite weights, found {} at {}",
                                   std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf"), where));
    }
    out.data[k] = v;
  }
}

void read_one(const WeightRead& w) {
  const WeightsFile& file = *w.entry.file;
  const TensorView view = file.view(*w.entry.tensor);
  const Shape& s = w.stored_shape;
  Tensor& out = *w.target;
  switch (w.layout) {
    case StoredLayout::AsStored:
      out = Tensor::uninitialized(s, w.axes);
      gather(view, file.path(), out, [](std::size_t k) { return k; });
      return;
    case StoredLayout::Transposed: {  // stored (out, in) -> (in, out)
      const std::size_t rows = s[0], cols = s[1];
      out = Tensor::uninitialized({cols, rows}, w.axes);
      gather(view, file.path(), out, [&](std::size_t k) { return (k % rows) * cols + k / rows; });
      return;
    }
    case StoredLayout::Columns: {  // stored (rows, cols) -> (rows, end - begin)
      const std::size_t cols = s[1], width = w.end - w.begin;
      out = Tensor::uninitialized({s[0], width}, w.axes);
      gather(view, file.path(), out, [&](std::size_t k) { return (k / width) * cols + w.begin + k % width; });
      return;
    }
    case StoredLayout::Range:
      out = Tensor::uninitialized({w.end - w.begin}, w.axes);
      gather(view, file.path(), out, [&](std::size_t k) { return w.begin + k; });
      return;
    case StoredLayout::Rows: {  // stored (rows, cols) -> (end - begin, cols)
      const std::size_t cols = s[1];
      out = Tensor::uninitialized({w.end - w.begin, cols}, w.axes);
      gather(view, file.path(), out, [&](std::size_t k) { return w.begin * cols + k; });
      return;
    }
    case StoredLayout::HeadRows: {  // stored (groups·run, cols) -> (cols, groups·width), transposed
      const std::size_t cols = s[1], run = s[0] / w.groups, width = w.end - w.begin, n = w.groups * width;
      out = Tensor::uninitialized({cols, n}, w.axes);
      // out[i][g·width + e] = stored[g·run + begin + e][i]
      gather(view, file.path(), out,
             [&](std::size_t k) { return ((k % n) / width * run + w.begin + (k % n) % width) * cols + k / n; });
      return;
    }
    case StoredLayout::HeadRange: {  // stored (groups·run,) -> (groups·width,)
      const std::size_t run = s[0] / w.groups, width = w.end - w.begin;
      out = Tensor::uninitialized({w.groups * width}, w.axes);
      gather(view, file.path(), out, [&](std::size_t k) { return k / width * run + w.begin + k % width; });
      return;
    }
  }
}

// Whether every number of the stored tensor is finite: its exponent bits not all ones,
// tested on the bits, in one pass without a branch per number, a big tensor's halves on
// the threads at once (most of the time is the first read of the mapped file's pages).
template <typename Bits>
bool all_finite(const std::uint8_t* bytes, std::size_t n, Bits exponent) {
  Bits seen = 0;  // the exponent bits of a non-finite number, once one has been seen
#pragma omp parallel for reduction(| : seen) schedule(static) if (n >= (std::size_t{1} << 20))
  for (std::size_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, bytes + sizeof(Bits) * i, sizeof(Bits));
    seen |= static_cast<Bits>((b & exponent) == exponent ? exponent : 0);
  }
  return seen == 0;
}

bool stored_finite(const TensorView& view) {
  const std::size_t n = view.size();
  switch (view.info().dtype) {
    case Dtype::F64:
      return all_finite<std::uint64_t>(view.bytes(), n, 0x7ff0000000000000ULL);
    case Dtype::F32:
      return all_finite<std::uint32_t>(view.bytes(), n, 0x7f800000U);
    case Dtype::F16:
      return all_finite<std::uint16_t>(view.bytes(), n, 0x7c00U);
    case Dtype::BF16:
      return all_finite<std::uint16_t>(view.bytes(), n, 0x7f80U);
    case Dtype::Other:
      break;
  }
  return false;
}

// Whether `w` stays as stored when the files are kept: a matrix, but not the learned
// positions' table (small, and read whole at every step).
bool stays_stored(const WeightRead& w) {
  return w.layout != StoredLayout::Range && w.layout != StoredLayout::Rows && w.layout != StoredLayout::HeadRows &&
         w.layout != StoredLayout::HeadRange && w.stored_shape.size() == 2 && w.parameter != "positions";
}

// `w` as a view of the mapped file. A non-finite number is found by the widening read
// (read_one), which names the element as it always has.
void keep_stored(const WeightRead& w, const std::shared_ptr<const void>& files) {
  const TensorView view = w.entry.file->view(*w.entry.tensor);
  if (!stored_finite(view)) {
    read_one(w);  // throws, naming the element; else the non-finite number lies outside w's columns
    w.target->data.clear();
    w.target->data.shrink_to_fit();
  }
  const Shape& s = w.stored_shape;
  auto m = std::make_shared<StoredMatrix>();
  m->type = stored_type_of(w.entry.tensor->dtype);
  m->bytes = view.bytes();
  m->stride = s[1];
  m->keep = files;
  Tensor& out = *w.target;
  out = Tensor();
  out.axes = w.axes;
  switch (w.layout) {
    case StoredLayout::Transposed:  // stored (out, in) read as (in, out)
      m->transposed = true;
      out.shape = {s[1], s[0]};
      break;
    case StoredLayout::Columns:  // columns [begin, end) of (rows, cols)
      m->bytes += stored_type_bytes(m->type) * w.begin;
      out.shape = {s[0], w.end - w.begin};
      break;
    case StoredLayout::AsStored:
    case StoredLayout::Range:
    case StoredLayout::Rows:  // (never kept: stays_stored)
    case StoredLayout::HeadRows:
    case StoredLayout::HeadRange:
      out.shape = s;
      break;
  }
  out.stored = std::move(m);
}

}  // namespace

StoredSize stored_size(const std::vector<WeightRead>& plan) {
  StoredSize size;
  std::vector<std::string> dtypes;
  // A tied weight in a pytorch_model.bin (one storage under two names) is two views of the
  // same bytes: their numbers are not widened, and their bytes are counted once.
  std::set<std::tuple<const WeightsFile*, std::uint64_t, std::size_t, std::size_t>> counted;
  for (const auto& w : plan) {
    if (!stays_stored(w)) continue;
    const std::uint64_t numbers =
        w.layout == StoredLayout::Columns ? w.stored_shape[0] * (w.end - w.begin) : element_count(w.stored_shape);
    size.numbers += numbers;
    if (counted.emplace(w.entry.file, w.entry.tensor->begin, w.begin, w.end).second)
      size.bytes += numbers * stored_type_bytes(stored_type_of(w.entry.tensor->dtype));
    if (std::find(dtypes.begin(), dtypes.end(), w.entry.tensor->dtype_name) == dtypes.end())
      dtypes.push_back(w.entry.tensor->dtype_name);
  }
  size.dtypes = fmt::format("{}", fmt::join(dtypes, ", "));
  return size;
}

void plan_read(const std::vector<WeightRead>& plan, std::map<std::string, std::string>& names,
               const std::shared_ptr<const void>& files) {
  for (const auto& w : plan) {
    if (files && stays_stored(w))
      keep_stored(w, files);
    else
      read_one(w);
    names[w.parameter] = w.source_text();
  }
}

}  // namespace attn

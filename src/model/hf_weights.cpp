#include "model/hf_weights.h"

#include <cmath>

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
  const SafetensorsFile& file = *w.entry.file;
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
  }
}

}  // namespace

void plan_read(const std::vector<WeightRead>& plan, std::map<std::string, std::string>& names) {
  for (const auto& w : plan) {
    read_one(w);
    names[w.parameter] = w.source_text();
  }
}

}  // namespace attn

#include "attn/model_loader.h"

#include <unistd.h>

#include <fmt/format.h>

#include "attn/numpy_random.h"

namespace attn {

namespace {

const std::vector<std::string> kTopLevelKeys = {"model", "input", "encoder"};
const std::vector<std::string> kModelKeys = {"d_model", "num_heads", "d_head", "causal", "seed"};
const std::vector<std::string> kInputKeys = {"X"};
const std::vector<std::string> kEncoderLayerKeys = {"attention"};
const std::vector<std::string> kAttentionKeys = {"W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "heads"};
const std::vector<std::string> kHeadKeys = {"W_q", "W_k", "W_v"};
const std::vector<std::string> kGenerators = {"randn", "zeros", "ones", "identity"};

// Larger than any model this tool is meant for, small enough that products never overflow.
constexpr std::size_t kMaxDimension = 1u << 24;

// What a tensor field must hold: its shape when the model implies one, and what the
// axes mean, for the message when the file disagrees.
struct TensorRequest {
  Shape shape;          // empty: not implied; the value must give it
  AxisNames axes;
  std::string meaning;  // "d_model x H*d_head"
};

class ModelLoader {
 public:
  ModelLoader(const std::string& source, const LoadOptions& options)
      : reader_(source), options_(options), rng_(0) {}

  Model load(const Json& document);

 private:
  ModelConfig read_config(const Json& value, const std::string& path);
  Tensor read_input(const Json& value, const std::string& path, Model& model, std::size_t layers);
  AttentionWeights read_attention(const Json& value, const std::string& path, const ModelConfig& config);
  Tensor read_tensor(const Json& value, const std::string& path, const TensorRequest& request);
  Shape read_generator_shape(const Json& value, const std::string& path);
  Shape nested_shape(const Json& value, const std::string& path);
  void fill_nested(const Json& value, const std::string& path, const Shape& shape, std::size_t axis,
                   std::vector<double>& out);
  Tensor generate(const std::string& kind, const Shape& shape, const AxisNames& axes);
  void check_memory(const ModelConfig& config, const Shape& input_shape, std::size_t layers);

  JsonReader reader_;
  LoadOptions options_;
  NumpyRandom rng_;
};

Model ModelLoader::load(const Json& document) {
  reader_.object(document, "", kTopLevelKeys);
  Model model;
  model.source = reader_.file();
  model.config = read_config(reader_.required(document, "", "model"), "model");
  rng_ = NumpyRandom(model.config.seed);

  const Json& encoder = reader_.array(reader_.required(document, "", "encoder"), "encoder");
  if (encoder.empty()) reader_.fail("encoder", "expected at least one layer, found an empty array");

  // The input comes first in the randn order; its shape is checked against the memory
  // limit before anything is drawn or allocated.
  model.input = read_input(reader_.required(document, "", "input"), "input", model, encoder.size());

  for (std::size_t i = 0; i < encoder.size(); ++i) {
    const std::string path = json_index("encoder", i);
    const Json& layer = reader_.object(encoder[i], path, kEncoderLayerKeys);
    EncoderLayerWeights weights;
    weights.attention = read_attention(reader_.required(layer, path, "attention"), json_child(path, "attention"),
                                       model.config);
    const bool last = i + 1 == encoder.size();
    const std::size_t out_width =
        weights.attention.has_output_projection() ? model.config.d_model : model.config.num_heads * model.config.d_head;
    if (!last && out_width != model.config.d_model)
      reader_.fail(json_child(path, "attention"),
                   fmt::format("expected W_o: without it this layer's output has width H*d_head = {}, but the next "
                               "layer needs d_model = {}",
                               out_width, model.config.d_model));
    model.encoder.push_back(std::move(weights));
  }
  return model;
}

ModelConfig ModelLoader::read_config(const Json& value, const std::string& path) {
  reader_.object(value, path, kModelKeys);
  ModelConfig config;
  config.d_model = reader_.positive_integer(reader_.required(value, path, "d_model"), json_child(path, "d_model"),
                                            kMaxDimension);
  config.num_heads = reader_.positive_integer(reader_.required(value, path, "num_heads"),
                                              json_child(path, "num_heads"), kMaxDimension);
  if (const Json* d_head = reader_.member(value, "d_head")) {
    config.d_head = reader_.positive_integer(*d_head, json_child(path, "d_head"), kMaxDimension);
  } else {
    if (config.d_model % config.num_heads != 0)
      reader_.fail(json_child(path, "num_heads"),
                   fmt::format("expected a divisor of d_model = {} (d_head defaults to d_model / num_heads), "
                               "found {}; set d_head or change num_heads",
                               config.d_model, config.num_heads));
    config.d_head = config.d_model / config.num_heads;
  }
  if (const Json* causal = reader_.member(value, "causal")) config.causal = reader_.boolean(*causal, json_child(path, "causal"));
  if (const Json* seed = reader_.member(value, "seed")) {
    const std::int64_t s = reader_.integer(*seed, json_child(path, "seed"));
    if (s < 0 || s > 0xFFFFFFFFLL)
      reader_.fail(json_child(path, "seed"), fmt::format("expected an integer from 0 to 4294967295 (as NumPy), found {}", s));
    config.seed = static_cast<std::uint32_t>(s);
  }
  return config;
}

Tensor ModelLoader::read_input(const Json& value, const std::string& path, Model& model, std::size_t layers) {
  reader_.object(value, path, kInputKeys);
  const std::string x_path = json_child(path, "X");
  const Json& x = reader_.required(value, path, "X");
  const std::size_t N = model.config.d_model;

  // The shape comes from the value itself: nested numbers or {"randn": [B, S, N]}.
  Shape shape;
  if (x.is_array()) {
    shape = nested_shape(x, x_path);
  } else if (x.is_object()) {
    shape = read_generator_shape(x, x_path);
  } else if (x.is_string()) {
    reader_.fail(x_path, fmt::format("the shape of X is not implied by the model; write {{\"{}\": [S, {}]}} or "
                                     "{{\"{}\": [B, S, {}]}}",
                                     x.get<std::string>(), N, x.get<std::string>(), N));
  } else {
    reader_.fail(x_path, "expected a (B, S, d_model) or (S, d_model) array of numbers, found " + describe_json(x));
  }
  if (shape.size() != 2 && shape.size() != 3)
    reader_.fail(x_path, fmt::format("expected shape (B, S, d_model) or (S, d_model), got {}", shape_string(shape)));
  if (shape.back() != N)
    reader_.fail(x_path, fmt::format("expected last axis of size d_model = {}, got shape {}", N, shape_string(shape)));
  model.batched = shape.size() == 3;
  const Shape batched = model.batched ? shape : Shape{1, shape[0], shape[1]};
  check_memory(model.config, batched, layers);

  Tensor input = read_tensor(x, x_path, TensorRequest{shape, {}, ""});
  input.shape = batched;
  input.axes = {"B", "S", "N"};
  return input;
}

AttentionWeights ModelLoader::read_attention(const Json& value, const std::string& path, const ModelConfig& config) {
  reader_.object(value, path, kAttentionKeys);
  const std::size_t N = config.d_model, H = config.num_heads, d = config.d_head, Hd = H * d;
  AttentionWeights w;

  const TensorRequest fused{{N, Hd}, {"N", "H*d"}, "d_model x H*d_head"};
  const Json* heads = reader_.member(value, "heads");
  if (heads) {
    for (const char* key : {"W_q", "W_k", "W_v"})
      if (reader_.member(value, key))
        reader_.fail(json_child(path, key), "expected either \"heads\" or fused W_q/W_k/W_v, found both");
    const std::string heads_path = json_child(path, "heads");
    reader_.array(*heads, heads_path);
    if (heads->size() != H)
      reader_.fail(heads_path, fmt::format("expected {} heads (num_heads), found {}", H, heads->size()));
    const TensorRequest per_head{{N, d}, {"N", "d"}, "d_model x d_head"};
    for (std::size_t h = 0; h < H; ++h) {
      const std::string hp = json_index(heads_path, h);
      const Json& head = reader_.object((*heads)[h], hp, kHeadKeys);
      HeadWeights hw;
      hw.W_q = read_tensor(reader_.required(head, hp, "W_q"), json_child(hp, "W_q"), per_head);
      hw.W_k = read_tensor(reader_.required(head, hp, "W_k"), json_child(hp, "W_k"), per_head);
      hw.W_v = read_tensor(reader_.required(head, hp, "W_v"), json_child(hp, "W_v"), per_head);
      w.heads.push_back(std::move(hw));
    }
    // The fused matrices hold the heads side by side: columns h*d .. h*d+d-1 are head h.
    for (Tensor* target : {&w.W_q, &w.W_k, &w.W_v}) *target = Tensor({N, Hd}, {"N", "H*d"});
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t r = 0; r < N; ++r)
        for (std::size_t c = 0; c < d; ++c) {
          w.W_q.data[r * Hd + h * d + c] = w.heads[h].W_q.data[r * d + c];
          w.W_k.data[r * Hd + h * d + c] = w.heads[h].W_k.data[r * d + c];
          w.W_v.data[r * Hd + h * d + c] = w.heads[h].W_v.data[r * d + c];
        }
  } else {
    w.W_q = read_tensor(reader_.required(value, path, "W_q"), json_child(path, "W_q"), fused);
    w.W_k = read_tensor(reader_.required(value, path, "W_k"), json_child(path, "W_k"), fused);
    w.W_v = read_tensor(reader_.required(value, path, "W_v"), json_child(path, "W_v"), fused);
  }
  if (const Json* W_o = reader_.member(value, "W_o"))
    w.W_o = read_tensor(*W_o, json_child(path, "W_o"), TensorRequest{{Hd, N}, {"H*d", "N"}, "H*d_head x d_model"});
  const TensorRequest bias{{Hd}, {"H*d"}, "H*d_head"};
  if (const Json* b = reader_.member(value, "b_q")) w.b_q = read_tensor(*b, json_child(path, "b_q"), bias);
  if (const Json* b = reader_.member(value, "b_k")) w.b_k = read_tensor(*b, json_child(path, "b_k"), bias);
  if (const Json* b = reader_.member(value, "b_v")) w.b_v = read_tensor(*b, json_child(path, "b_v"), bias);
  if (const Json* b = reader_.member(value, "b_o")) {
    if (!w.has_output_projection())
      reader_.fail(json_child(path, "b_o"), "expected W_o alongside b_o (the bias belongs to the output projection)");
    w.b_o = read_tensor(*b, json_child(path, "b_o"), TensorRequest{{N}, {"N"}, "d_model"});
  }
  return w;
}

Shape ModelLoader::read_generator_shape(const Json& value, const std::string& path) {
  if (value.size() != 1 || std::find(kGenerators.begin(), kGenerators.end(), value.begin().key()) == kGenerators.end())
    reader_.fail(path, fmt::format("expected an object with one key, \"randn\", \"zeros\", \"ones\" or \"identity\", "
                                   "whose value is the shape, found {}",
                                   describe_json(value)));
  const std::string kind = value.begin().key();
  const std::string shape_path = json_child(path, kind);
  const Json& dims = reader_.array(value.begin().value(), shape_path);
  if (dims.empty()) reader_.fail(shape_path, "expected a shape such as [4, 8], found an empty array");
  Shape shape;
  for (std::size_t i = 0; i < dims.size(); ++i)
    shape.push_back(reader_.positive_integer(dims[i], json_index(shape_path, i), kMaxDimension));
  return shape;
}

Shape ModelLoader::nested_shape(const Json& value, const std::string& path) {
  // The shape the first elements describe; fill_nested then checks every element agrees.
  Shape shape;
  const Json* cur = &value;
  std::string p = path;
  while (cur->is_array()) {
    if (cur->empty()) reader_.fail(p, "expected a non-empty array, found an empty array");
    shape.push_back(cur->size());
    cur = &(*cur)[0];
    p = json_index(p, 0);
    if (shape.size() > 8) reader_.fail(path, "expected at most 8 nested array levels");
  }
  return shape;
}

void ModelLoader::fill_nested(const Json& value, const std::string& path, const Shape& shape, std::size_t axis,
                              std::vector<double>& out) {
  if (axis == shape.size()) {
    out.push_back(reader_.finite_number(value, path));
    return;
  }
  if (!value.is_array())
    reader_.fail(path, fmt::format("expected an array of {} (ragged array), found {}", shape[axis], describe_json(value)));
  if (value.size() != shape[axis])
    reader_.fail(path, fmt::format("expected an array of {} like its neighbours (ragged array), found an array of {}",
                                   shape[axis], value.size()));
  for (std::size_t i = 0; i < value.size(); ++i) fill_nested(value[i], json_index(path, i), shape, axis + 1, out);
}

Tensor ModelLoader::generate(const std::string& kind, const Shape& shape, const AxisNames& axes) {
  if (kind == "randn") return rng_.randn(shape, axes);
  Tensor t(shape, axes);
  if (kind == "ones") {
    std::fill(t.data.begin(), t.data.end(), 1.0);
  } else if (kind == "identity") {
    // Ones on the main diagonal, also for rectangular shapes (np.eye(rows, cols)).
    const std::size_t cols = shape.back();
    const std::size_t rows = t.size() / cols;
    for (std::size_t i = 0; i < rows && i < cols; ++i) t.data[i * cols + i] = 1.0;
  }
  return t;
}

Tensor ModelLoader::read_tensor(const Json& value, const std::string& path, const TensorRequest& request) {
  const auto expected = [&](const Shape& got) {
    if (!request.shape.empty() && got != request.shape)
      reader_.fail(path, fmt::format("expected shape {}{}, got {}", shape_string(request.shape),
                                     request.meaning.empty() ? "" : " (" + request.meaning + ")", shape_string(got)));
  };
  if (value.is_string()) {
    const std::string kind = value.get<std::string>();
    if (std::find(kGenerators.begin(), kGenerators.end(), kind) == kGenerators.end()) {
      const std::string suggestion = did_you_mean(kind, kGenerators);
      reader_.fail(path, fmt::format("expected numbers or one of \"randn\", \"zeros\", \"ones\", \"identity\", found "
                                     "\"{}\"{}",
                                     kind, suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"));
    }
    if (request.shape.empty()) reader_.fail(path, fmt::format("the shape is not implied here; write {{\"{}\": [...]}}", kind));
    if (kind == "identity" && request.shape.size() != 2)
      reader_.fail(path, fmt::format("\"identity\" needs a matrix, but this tensor has shape {}", shape_string(request.shape)));
    return generate(kind, request.shape, request.axes);
  }
  if (value.is_object()) {
    const Shape shape = read_generator_shape(value, path);
    expected(shape);
    const std::string kind = value.begin().key();
    if (kind == "identity" && shape.size() != 2)
      reader_.fail(path, fmt::format("\"identity\" needs a matrix, found shape {}", shape_string(shape)));
    return generate(kind, shape, request.axes);
  }
  if (!value.is_array()) {
    reader_.fail(path, fmt::format("expected {}array of numbers or \"randn\", \"zeros\", \"ones\", \"identity\", found {}",
                                   request.shape.empty() ? "an " : "a " + shape_string(request.shape) + " ",
                                   describe_json(value)));
  }
  const Shape shape = nested_shape(value, path);
  if (!request.shape.empty() && shape.size() != request.shape.size()) expected(shape);
  std::vector<double> data;
  data.reserve(element_count(shape));
  fill_nested(value, path, shape, 0, data);
  expected(shape);
  Tensor t;
  t.shape = shape;
  t.axes = request.axes.empty() ? AxisNames(shape.size(), "") : request.axes;
  t.data = std::move(data);
  return t;
}

void ModelLoader::check_memory(const ModelConfig& config, const Shape& input_shape, std::size_t layers) {
  const std::uint64_t limit = options_.max_memory_bytes ? options_.max_memory_bytes : default_memory_limit();
  const std::uint64_t need = estimate_run_bytes(config, input_shape[0], input_shape[1], layers);
  if (need > limit)
    reader_.fail("input.X", fmt::format("this run would need about {:.1f} GiB (B={}, S={}, d_model={}, heads={}), more "
                                        "than the limit of {:.1f} GiB; use a smaller model or raise --max-memory",
                                        need / 1073741824.0, input_shape[0], input_shape[1], config.d_model,
                                        config.num_heads, limit / 1073741824.0));
}

}  // namespace

std::uint64_t estimate_run_bytes(const ModelConfig& config, std::size_t batch, std::size_t seq_len,
                                 std::size_t num_layers) {
  // Saturating arithmetic in long double: the inputs can be absurd (d_model 1e6, S 1e5).
  const long double B = batch, S = seq_len, N = config.d_model, H = config.num_heads, d = config.d_head;
  const long double weights = 4 * N * H * d + 2 * H * d;
  // q, k, v, their head views, k_t, context, concat (7 of B*S*H*d); scores, scaled,
  // masked, weights (4 of B*H*S*S); input and output (2 of B*S*N).
  const long double activations = 7 * B * S * H * d + 4 * B * H * S * S + 2 * B * S * N;
  const long double bytes = 8.0L * (num_layers * (weights + activations) + B * S * N);
  return bytes > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 4ULL << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
}

Model load_model_json(const Json& document, const std::string& source, const LoadOptions& options) {
  return ModelLoader(source, options).load(document);
}

Model load_model_text(const std::string& text, const std::string& source, const LoadOptions& options) {
  return load_model_json(parse_json(text, source), source, options);
}

Model load_model_file(const std::string& path, const LoadOptions& options) {
  return load_model_text(read_text_file(path), path, options);
}

}  // namespace attn

#include "attn/model_file.h"

#include <unistd.h>
#include <unordered_map>

#include <fmt/format.h>

#include "core/numpy_random.h"
#include "model/byte_size.h"
#include "model/json_reader.h"
#include "steps/tokenizer.h"

namespace attn {

namespace {

const std::vector<std::string> kTopLevelKeys = {"model",   "vocab",        "embedding", "positions",    "input",
                                                "encoder", "encoder_norm", "decoder",   "decoder_norm", "output"};
const std::vector<std::string> kModelKeys = {
    "d_model", "num_heads",  "d_head",     "d_ff",           "num_layers",          "num_decoder_layers", "causal",
    "seed",    "activation", "norm_first", "layer_norm_eps", "positional_encoding", "scale_embeddings",   "max_len"};
const std::vector<std::string> kInputKeys = {"X", "text", "tokens", "target_X", "target_text", "target_tokens"};
const std::vector<std::string> kEncoderLayerKeys = {"attention", "norm1", "ffn", "norm2"};
const std::vector<std::string> kDecoderLayerKeys = {"self_attention", "norm1", "cross_attention",
                                                    "norm2",          "ffn",   "norm3"};
const std::vector<std::string> kAttentionKeys = {"W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "heads"};
const std::vector<std::string> kHeadKeys = {"W_q", "W_k", "W_v"};
const std::vector<std::string> kNormKeys = {"gamma", "beta"};
const std::vector<std::string> kFeedForwardKeys = {"W_1", "b_1", "W_2", "b_2"};
const std::vector<std::string> kOutputKeys = {"W", "b"};
const std::vector<std::string> kGenerators = {"randn", "zeros", "ones", "identity"};

// Larger than any model this tool is meant for, small enough that products never overflow.
constexpr std::size_t kMaxDimension = 1u << 24;

// What a tensor field must hold: its shape when the model implies one, and what the
// axes mean, for the message when the file disagrees.
struct TensorRequest {
  Shape shape;  // empty: not implied; the value must give it
  AxisNames axes;
  std::string meaning;  // "d_model x H*d_head"
};

// The layer template "randn" stands for: every weight drawn, no biases, norms at their
// defaults (gamma 1, beta 0).
Json randn_attention() { return Json{{"W_q", "randn"}, {"W_k", "randn"}, {"W_v", "randn"}, {"W_o", "randn"}}; }
Json randn_encoder_layer(bool with_ffn) {
  Json layer = {{"attention", randn_attention()}};
  if (with_ffn) layer["ffn"] = Json{{"W_1", "randn"}, {"W_2", "randn"}};
  return layer;
}
Json randn_decoder_layer() {
  return Json{{"self_attention", randn_attention()},
              {"cross_attention", randn_attention()},
              {"ffn", Json{{"W_1", "randn"}, {"W_2", "randn"}}}};
}

}  // namespace

namespace {

// Without a target the decoder starts from <BOS> alone, as generation does, and predicts
// the first word. Returns false when the vocabulary has no <BOS>.
bool start_from_bos(Model& model) {
  if (model.vocab.empty() || !model.vocab.find("<BOS>")) return false;
  const std::size_t B = model.has_tokens()
                            ? std::max(model.source_tokens.texts.size(), model.source_tokens.tokens.size())
                            : model.input.shape[0];
  model.target_input = Tensor();
  model.target_tokens = TokenInput{{},
                                   std::vector<std::vector<std::string>>(B, {"<BOS>"}),
                                   model.batched,
                                   "input (no target given: the decoder starts from <BOS>)"};
  return true;
}

class ModelLoader {
 public:
  ModelLoader(const std::string& source, const LoadOptions& options) : reader_(source), options_(options), rng_(0) {
    if (options.collect_all_errors) reader_.collect_into(&errors_);
  }

  Model load(const Json& document);

 private:
  // Runs one independent part of the file. In collect mode its error is recorded and the
  // load goes on with the next part; otherwise the error propagates.
  template <class Read>
  void attempt(Read&& read) {
    if (!reader_.collecting()) return read();
    try {
      read();
    } catch (const InputError& e) {
      errors_.push_back(e);
    } catch (const AlreadyReported&) {
    }
  }
  // In collect mode, stop here if anything was found (what follows depends on it).
  void stop_if_errors() const {
    if (!errors_.empty()) throw InputErrors(errors_);
  }

  ModelConfig read_config(const Json& value, const std::string& path);
  void read_vocabulary(const Json& document, Model& model);
  void read_input(const Json& value, const std::string& path, Model& model);
  TokenInput read_text(const Json& value, const std::string& path);
  TokenInput read_tokens(const Json& value, const std::string& path);
  Tensor read_x(const Json& value, const std::string& path, const ModelConfig& config, bool& batched, const char* axis);
  std::vector<Json> layer_list(const Json& value, const std::string& path, std::size_t count, bool count_given,
                               const Json& randn_template, const char* count_field);
  EncoderLayerWeights read_encoder_layer(const Json& value, const std::string& path, const ModelConfig& config);
  DecoderLayerWeights read_decoder_layer(const Json& value, const std::string& path, const ModelConfig& config);
  AttentionWeights read_attention(const Json& value, const std::string& path, const ModelConfig& config);
  NormWeights read_norm(const Json* value, const std::string& path, const ModelConfig& config);
  FeedForwardWeights read_feed_forward(const Json& value, const std::string& path, const ModelConfig& config);
  OutputWeights read_output(const Json& value, const std::string& path, const Model& model);
  Tensor read_tensor(const Json& value, const std::string& path, const TensorRequest& request);
  Tensor read_tensor_value(const Json& value, const std::string& path, const TensorRequest& request);
  Shape read_generator_shape(const Json& value, const std::string& path);
  Shape nested_shape(const Json& value, const std::string& path);
  void fill_nested(const Json& value, const std::string& path, const Shape& shape, std::size_t axis, TensorData& out);
  Tensor generate(const std::string& kind, const Shape& shape, const AxisNames& axes);
  void check_memory(const Model& model, std::size_t batch, std::size_t seq_len, std::size_t target_len,
                    std::size_t encoder_layers, std::size_t decoder_layers, const std::string& path);

  JsonReader reader_;
  LoadOptions options_;
  NumpyRandom rng_;
  std::vector<InputError> errors_;
  // Set by load() for the memory estimate made while reading the input.
  const Model* model_ = nullptr;
  std::size_t encoder_count_ = 1, decoder_count_ = 0;
};

Model ModelLoader::load(const Json& document) {
  reader_.object(document, "", kTopLevelKeys);
  Model model;
  model.source = reader_.file();
  // Everything else depends on the hyper-parameters: without them, stop.
  attempt([&] { model.config = read_config(reader_.required(document, "", "model"), "model"); });
  if (model.config.d_model == 0 || model.config.num_heads == 0 || model.config.d_head == 0) {
    // Nothing can be checked against the sizes; still name the other missing parts.
    for (const char* key : {"input", "encoder"})
      if (!reader_.member(document, key)) errors_.emplace_back(reader_.file(), key, "missing (this field is required)");
    stop_if_errors();
    reader_.fail("model", "expected d_model and num_heads");
  }
  const ModelConfig& config = model.config;
  rng_ = NumpyRandom(config.seed);
  const std::size_t N = config.d_model;

  // The randn order (docs/model-file.md): embedding, positions, input, encoder layers,
  // encoder_norm, decoder layers, decoder_norm, output.
  attempt([&] { read_vocabulary(document, model); });
  attempt([&] {
    if (const Json* positions = reader_.member(document, "positions")) {
      if (config.positional_encoding != PositionalEncoding::Learned)
        reader_.fail("positions", "a position table is only used with model.positional_encoding = \"learned\"");
      model.positions =
          read_tensor(*positions, "positions", TensorRequest{{config.max_len, N}, {"S", "N"}, "max_len x d_model"});
    } else if (config.positional_encoding == PositionalEncoding::Learned) {
      reader_.fail("positions", "missing: model.positional_encoding = \"learned\" needs a (max_len, d_model) table");
    }
  });

  // Layer lists are resolved before the input so that the memory estimate knows them.
  const Json* encoder = reader_.member(document, "encoder");
  const Json* decoder = reader_.member(document, "decoder");
  std::vector<Json> encoder_layers, decoder_layers;
  attempt([&] {
    if (!encoder) reader_.fail("encoder", "missing (this field is required)");
    encoder_layers = layer_list(*encoder, "encoder", config.num_layers ? config.num_layers : 1, config.num_layers != 0,
                                randn_encoder_layer(config.d_ff > 0), "model.num_layers");
  });
  attempt([&] {
    if (!decoder) return;
    const std::size_t count =
        config.num_decoder_layers ? config.num_decoder_layers : (config.num_layers ? config.num_layers : 1);
    decoder_layers =
        layer_list(*decoder, "decoder", count, config.num_decoder_layers || config.num_layers, randn_decoder_layer(),
                   config.num_decoder_layers ? "model.num_decoder_layers" : "model.num_layers");
  });

  model_ = &model;
  encoder_count_ = std::max<std::size_t>(1, encoder_layers.size());
  decoder_count_ = decoder_layers.size();
  bool input_ok = false;
  attempt([&] {
    read_input(reader_.required(document, "", "input"), "input", model);
    input_ok = true;
  });
  if (input_ok)
    attempt([&] {
      // Sizes for the estimate: X gives them; tokens are bounded by the longest sentence.
      std::size_t B = 1, S = 1, T = 1;
      if (!model.input.data.empty()) {
        B = model.input.shape[0];
        S = model.input.shape[1];
      } else {
        const TokenInput& t = model.source_tokens;
        B = std::max(t.texts.size(), t.tokens.size());
        for (const auto& text : t.texts) S = std::max(S, text.size());  // at most one token per character
        for (const auto& tokens : t.tokens) S = std::max(S, tokens.size());
      }
      if (!model.target_input.data.empty()) T = model.target_input.shape[1];
      for (const auto& text : model.target_tokens.texts) T = std::max(T, text.size());
      for (const auto& tokens : model.target_tokens.tokens) T = std::max(T, tokens.size());
      check_memory(model, B, S, T, encoder_layers.size(), decoder_layers.size(), "input");
    });
  // Without a readable input the weights are still checked, if they alone fit in memory.
  if (!input_ok) attempt([&] { check_memory(model, 1, 1, 1, encoder_layers.size(), decoder_layers.size(), "model"); });
  // Drawing "randn" for a run that was refused could take forever: stop here.
  for (const auto& e : errors_)
    if (e.message().find("this run would need about") != std::string::npos ||
        e.message().find("this input alone would need") != std::string::npos)
      stop_if_errors();

  for (std::size_t i = 0; i < encoder_layers.size(); ++i) {
    const std::string path = encoder->is_array() ? json_index("encoder", i) : std::string("encoder");
    attempt([&] { model.encoder.push_back(read_encoder_layer(encoder_layers[i], path, config)); });
  }
  attempt([&] {
    for (std::size_t i = 0; i + 1 < model.encoder.size(); ++i) {
      const AttentionWeights& a = model.encoder[i].attention;
      if (!a.has_output_projection() && config.num_heads * config.d_head != N)
        reader_.fail(json_child(json_index("encoder", i), "attention"),
                     fmt::format("expected W_o: without it this layer's output has width H*d_head = {}, but the next "
                                 "layer needs d_model = {}",
                                 config.num_heads * config.d_head, N));
    }
  });
  attempt([&] {
    if (const Json* norm = reader_.member(document, "encoder_norm"))
      model.encoder_norm = read_norm(norm, "encoder_norm", config);
  });

  for (std::size_t i = 0; i < decoder_layers.size(); ++i) {
    const std::string path = decoder->is_array() ? json_index("decoder", i) : std::string("decoder");
    attempt([&] { model.decoder.push_back(read_decoder_layer(decoder_layers[i], path, config)); });
  }
  attempt([&] {
    if (const Json* norm = reader_.member(document, "decoder_norm")) {
      if (decoder_layers.empty()) reader_.fail("decoder_norm", "expected a decoder alongside decoder_norm");
      model.decoder_norm = read_norm(norm, "decoder_norm", config);
    }
  });
  const bool encoder_ends_narrow = !model.encoder.empty() && !model.encoder.back().full &&
                                   !model.encoder.back().attention.has_output_projection() &&
                                   config.num_heads * config.d_head != N;
  attempt([&] {
    if (!decoder_layers.empty() && encoder_ends_narrow)
      reader_.fail(json_child(json_index("encoder", model.encoder.size() - 1), "attention"),
                   "expected W_o: the decoder's cross-attention needs the encoder's output in d_model columns");
    if (input_ok && !decoder_layers.empty() && model.target_tokens.empty() && model.target_input.data.empty() &&
        !start_from_bos(model))
      reader_.fail("input",
                   "the model has a decoder, so the input needs a target: target_X, target_text or "
                   "target_tokens (or a \"<BOS>\" token in the vocab to start from)");
  });

  attempt([&] {
    if (const Json* output = reader_.member(document, "output")) {
      if (decoder_layers.empty() && encoder_ends_narrow)
        reader_.fail("output",
                     "expected the last layer to produce d_model columns (give the last attention block W_o)");
      model.output = read_output(*output, "output", model);
    }
  });
  stop_if_errors();
  return model;
}

ModelConfig ModelLoader::read_config(const Json& value, const std::string& path) {
  reader_.object(value, path, kModelKeys);
  ModelConfig config;
  const auto positive = [&](const char* key, std::size_t& target) {
    if (const Json* v = reader_.member(value, key))
      target = reader_.positive_integer(*v, json_child(path, key), kMaxDimension);
  };
  const Json& d_model = reader_.required(value, path, "d_model");
  const Json& num_heads = reader_.required(value, path, "num_heads");
  if (reader_.is_missing(d_model) || reader_.is_missing(num_heads))
    throw AlreadyReported{};  // collect mode: reported missing
  config.d_model = reader_.positive_integer(d_model, json_child(path, "d_model"), kMaxDimension);
  config.num_heads = reader_.positive_integer(num_heads, json_child(path, "num_heads"), kMaxDimension);
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
  positive("d_ff", config.d_ff);
  positive("num_layers", config.num_layers);
  positive("num_decoder_layers", config.num_decoder_layers);
  positive("max_len", config.max_len);
  if (const Json* causal = reader_.member(value, "causal"))
    config.causal = reader_.boolean(*causal, json_child(path, "causal"));
  if (const Json* seed = reader_.member(value, "seed")) {
    const std::int64_t s = reader_.integer(*seed, json_child(path, "seed"));
    if (s < 0 || s > 0xFFFFFFFFLL)
      reader_.fail(json_child(path, "seed"),
                   fmt::format("expected an integer from 0 to 4294967295 (as NumPy), found {}", s));
    config.seed = static_cast<std::uint32_t>(s);
  }
  if (const Json* v = reader_.member(value, "activation"))
    config.activation = reader_.choice(*v, json_child(path, "activation"), {"relu", "gelu"}) == "gelu"
                            ? Activation::GELU
                            : Activation::ReLU;
  if (const Json* v = reader_.member(value, "norm_first"))
    config.norm_first = reader_.boolean(*v, json_child(path, "norm_first"));
  if (const Json* v = reader_.member(value, "layer_norm_eps")) {
    config.layer_norm_eps = reader_.finite_number(*v, json_child(path, "layer_norm_eps"));
    if (config.layer_norm_eps < 0)
      reader_.fail(json_child(path, "layer_norm_eps"), fmt::format("expected a number >= 0, found {}", v->dump()));
  }
  if (const Json* v = reader_.member(value, "positional_encoding")) {
    const std::string kind =
        reader_.choice(*v, json_child(path, "positional_encoding"), {"sinusoidal", "learned", "none"});
    config.positional_encoding = kind == "learned" ? PositionalEncoding::Learned
                                 : kind == "none"  ? PositionalEncoding::None
                                                   : PositionalEncoding::Sinusoidal;
  }
  if (const Json* v = reader_.member(value, "scale_embeddings"))
    config.scale_embeddings = reader_.boolean(*v, json_child(path, "scale_embeddings"));
  if (config.positional_encoding == PositionalEncoding::Learned && config.max_len == 0)
    reader_.fail(json_child(path, "max_len"), "missing: a learned position table needs max_len (its number of rows)");
  return config;
}

void ModelLoader::read_vocabulary(const Json& document, Model& model) {
  const Json* vocab = reader_.member(document, "vocab");
  const Json* embedding = reader_.member(document, "embedding");
  if (!vocab) {
    if (embedding) reader_.fail("embedding", "expected a vocab alongside the embedding (one row per vocabulary token)");
    return;
  }
  reader_.array(*vocab, "vocab");
  if (vocab->empty()) reader_.fail("vocab", "expected at least one token, found an empty array");
  // A hash map of the tokens so far finds a duplicate in one look-up: 100,000 tokens load
  // in milliseconds, not the 15 s that comparing each with every earlier one took.
  std::vector<std::string> tokens;
  tokens.reserve(vocab->size());
  std::unordered_map<std::string, std::size_t> first_index;
  first_index.reserve(vocab->size());
  for (std::size_t i = 0; i < vocab->size(); ++i) {
    const std::string path = json_index("vocab", i);
    std::string token = reader_.string((*vocab)[i], path);
    if (token.empty()) reader_.fail(path, "expected a non-empty token, found \"\"");
    const auto [earlier, is_new] = first_index.emplace(token, i);
    if (!is_new) {
      const std::string message = fmt::format("duplicate token \"{}\" (already vocab[{}])", token, earlier->second);
      if (!reader_.collecting()) reader_.fail(path, message);
      errors_.emplace_back(reader_.file(), path, message);
      // Collect mode goes on with a stand-in so that the ids and the embedding's rows still
      // line up. The stand-in is a token too: a later token equal to it is a duplicate of
      // it, and the vocabulary's tokens stay distinct.
      token = fmt::format("{}\x01duplicate{}", token, i);
      while (!first_index.emplace(token, i).second) token += '\x01';
    }
    tokens.push_back(std::move(token));
  }
  model.vocab = Vocabulary(tokens);
  if (!embedding) reader_.fail("embedding", "missing: a vocab needs an embedding table (len(vocab) x d_model)");
  model.embedding =
      read_tensor(*embedding, "embedding",
                  TensorRequest{{tokens.size(), model.config.d_model}, {"V", "N"}, "len(vocab) x d_model"});
}

TokenInput ModelLoader::read_text(const Json& value, const std::string& path) {
  TokenInput input;
  input.json_path = path;
  if (value.is_string()) {
    input.texts.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    if (value.empty()) reader_.fail(path, "expected at least one sentence, found an empty array");
    input.batched = true;
    for (std::size_t i = 0; i < value.size(); ++i) input.texts.push_back(reader_.string(value[i], json_index(path, i)));
  } else {
    reader_.fail(path, "expected a sentence or a list of sentences, found " + describe_json(value));
  }
  return input;
}

TokenInput ModelLoader::read_tokens(const Json& value, const std::string& path) {
  TokenInput input;
  input.json_path = path;
  reader_.array(value, path);
  if (value.empty()) reader_.fail(path, "expected at least one token, found an empty array");
  const auto list = [&](const Json& v, const std::string& p) {
    reader_.array(v, p);
    if (v.empty()) reader_.fail(p, "expected at least one token, found an empty array");
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < v.size(); ++i) tokens.push_back(reader_.string(v[i], json_index(p, i)));
    return tokens;
  };
  if (value[0].is_array()) {
    input.batched = true;
    for (std::size_t i = 0; i < value.size(); ++i) input.tokens.push_back(list(value[i], json_index(path, i)));
  } else {
    input.tokens.push_back(list(value, path));
  }
  return input;
}

Tensor ModelLoader::read_x(const Json& x, const std::string& path, const ModelConfig& config, bool& batched,
                           const char* axis) {
  const std::size_t N = config.d_model;
  // The shape comes from the value itself: nested numbers or {"randn": [B, S, N]}.
  Shape shape;
  if (x.is_array()) {
    shape = nested_shape(x, path);
  } else if (x.is_object()) {
    shape = read_generator_shape(x, path);
  } else if (x.is_string()) {
    reader_.fail(path, fmt::format("the shape is not implied by the model; write {{\"{}\": [{}, {}]}} or "
                                   "{{\"{}\": [B, {}, {}]}}",
                                   x.get<std::string>(), axis, N, x.get<std::string>(), axis, N));
  } else {
    reader_.fail(path, fmt::format("expected a (B, {0}, d_model) or ({0}, d_model) array of numbers, found {1}", axis,
                                   describe_json(x)));
  }
  if (shape.size() != 2 && shape.size() != 3)
    reader_.fail(path,
                 fmt::format("expected shape (B, {0}, d_model) or ({0}, d_model), got {1}", axis, shape_string(shape)));
  if (shape.back() != N)
    reader_.fail(path, fmt::format("expected last axis of size d_model = {}, got shape {}", N, shape_string(shape)));
  batched = shape.size() == 3;
  const Shape full = batched ? shape : Shape{1, shape[0], shape[1]};
  const std::uint64_t limit = options_.max_memory_bytes ? options_.max_memory_bytes : default_memory_limit();
  if (static_cast<long double>(element_count(full)) * 8 > limit)
    reader_.fail(path, fmt::format("this input alone would need {}, more than the limit of {}",
                                   byte_size_text(static_cast<double>(element_count(full)) * 8, ByteStyle::Memory),
                                   byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
  // The whole run, before anything is drawn ("randn" of a huge X would take minutes).
  check_memory(*model_, full[0], full[1], full[1], encoder_count_, decoder_count_, path);
  Tensor t = read_tensor(x, path, TensorRequest{shape, {}, ""});
  t.shape = full;
  t.axes = {"B", axis, "N"};
  return t;
}

void ModelLoader::read_input(const Json& value, const std::string& path, Model& model) {
  reader_.object(value, path, kInputKeys);
  const auto exactly_one = [&](const char* a, const char* b, const char* c) {
    int n = 0;
    for (const char* k : {a, b, c}) n += reader_.member(value, k) ? 1 : 0;
    if (n > 1) reader_.fail(path, fmt::format("expected one of {}, {} or {}, found more than one", a, b, c));
    return n == 1;
  };
  if (!exactly_one("X", "text", "tokens"))
    reader_.fail(path, "expected one of X (numbers), text or tokens, found none");
  exactly_one("target_X", "target_text", "target_tokens");
  const auto needs_vocab = [&](const char* key) {
    if (model.vocab.empty())
      reader_.fail(json_child(path, key), "the model has no vocab, so it cannot read text or tokens; give X instead");
  };
  if (const Json* x = reader_.member(value, "X")) {
    model.input = read_x(*x, json_child(path, "X"), model.config, model.batched, "S");
  } else if (const Json* text = reader_.member(value, "text")) {
    needs_vocab("text");
    model.source_tokens = read_text(*text, json_child(path, "text"));
    model.batched = model.source_tokens.batched;
  } else if (const Json* tokens = reader_.member(value, "tokens")) {
    needs_vocab("tokens");
    model.source_tokens = read_tokens(*tokens, json_child(path, "tokens"));
    model.batched = model.source_tokens.batched;
  }
  if (const Json* x = reader_.member(value, "target_X")) {
    model.target_input = read_x(*x, json_child(path, "target_X"), model.config, model.target_input_batched, "T");
  } else if (const Json* text = reader_.member(value, "target_text")) {
    needs_vocab("target_text");
    model.target_tokens = read_text(*text, json_child(path, "target_text"));
  } else if (const Json* tokens = reader_.member(value, "target_tokens")) {
    needs_vocab("target_tokens");
    model.target_tokens = read_tokens(*tokens, json_child(path, "target_tokens"));
  }
  // The target must have the source's batch layout: one target per source sentence.
  const std::size_t source_b = model.has_tokens()
                                   ? std::max(model.source_tokens.texts.size(), model.source_tokens.tokens.size())
                                   : (model.input.rank() == 3 ? model.input.shape[0] : 0);
  if (!model.target_tokens.empty() || !model.target_input.data.empty()) {
    const bool target_batched = model.target_tokens.empty() ? model.target_input_batched : model.target_tokens.batched;
    const std::size_t target_b = model.target_tokens.empty()
                                     ? model.target_input.shape[0]
                                     : std::max(model.target_tokens.texts.size(), model.target_tokens.tokens.size());
    const std::string where =
        model.target_tokens.empty() ? json_child(path, "target_X") : model.target_tokens.json_path;
    if (target_batched != model.batched)
      reader_.fail(where,
                   model.batched
                       ? fmt::format("expected a batch of {} targets like the source, found a single one", source_b)
                       : "expected a single target like the source, found a batch (a list)");
    if (source_b != target_b)
      reader_.fail(where,
                   fmt::format("expected {} target sequences, one per source sentence, found {}", source_b, target_b));
  }
  if (model.has_tokens()) check_token_input(model, model.source_tokens);
  if (!model.target_tokens.empty()) check_token_input(model, model.target_tokens);
}

std::vector<Json> ModelLoader::layer_list(const Json& value, const std::string& path, std::size_t count,
                                          bool count_given, const Json& randn_template, const char* count_field) {
  // A list of layers; one object repeated count times (each with its own "randn" draws);
  // or "randn": every weight drawn.
  if (value.is_array()) {
    if (value.empty()) reader_.fail(path, "expected at least one layer, found an empty array");
    if (count_given && value.size() != count)
      reader_.fail(path, fmt::format("expected {} layers ({}), found {}", count, count_field, value.size()));
    return std::vector<Json>(value.begin(), value.end());
  }
  if (value.is_string()) {
    if (value.get<std::string>() != "randn")
      reader_.fail(path, fmt::format("expected a list of layers, one layer object or \"randn\", found {}",
                                     describe_json(value)));
    return std::vector<Json>(count, randn_template);
  }
  if (value.is_object()) return std::vector<Json>(count, value);
  reader_.fail(path, "expected a list of layers, one layer object or \"randn\", found " + describe_json(value));
}

EncoderLayerWeights ModelLoader::read_encoder_layer(const Json& value, const std::string& path,
                                                    const ModelConfig& config) {
  reader_.object(value, path, kEncoderLayerKeys);
  EncoderLayerWeights layer;
  layer.attention = read_attention(reader_.required(value, path, "attention"), json_child(path, "attention"), config);
  const Json* ffn = reader_.member(value, "ffn");
  if (!ffn) {
    for (const char* key : {"norm1", "norm2"})
      if (reader_.member(value, key))
        reader_.fail(json_child(path, key),
                     "expected an ffn alongside the norms (a full layer has attention, norm1, ffn, norm2)");
    return layer;
  }
  layer.full = true;
  if (!layer.attention.has_output_projection())
    reader_.fail(json_child(path, "attention"),
                 "expected W_o: a full layer adds the attention output back to its input "
                 "(the residual), which needs d_model columns");
  layer.norm1 = read_norm(reader_.member(value, "norm1"), json_child(path, "norm1"), config);
  layer.ffn = read_feed_forward(*ffn, json_child(path, "ffn"), config);
  layer.norm2 = read_norm(reader_.member(value, "norm2"), json_child(path, "norm2"), config);
  return layer;
}

DecoderLayerWeights ModelLoader::read_decoder_layer(const Json& value, const std::string& path,
                                                    const ModelConfig& config) {
  reader_.object(value, path, kDecoderLayerKeys);
  DecoderLayerWeights layer;
  const auto attention = [&](const char* key) {
    AttentionWeights a = read_attention(reader_.required(value, path, key), json_child(path, key), config);
    if (!a.has_output_projection())
      reader_.fail(json_child(path, key), "expected W_o: the residual around it needs d_model columns");
    return a;
  };
  layer.self_attention = attention("self_attention");
  layer.norm1 = read_norm(reader_.member(value, "norm1"), json_child(path, "norm1"), config);
  layer.cross_attention = attention("cross_attention");
  layer.norm2 = read_norm(reader_.member(value, "norm2"), json_child(path, "norm2"), config);
  layer.ffn = read_feed_forward(reader_.required(value, path, "ffn"), json_child(path, "ffn"), config);
  layer.norm3 = read_norm(reader_.member(value, "norm3"), json_child(path, "norm3"), config);
  return layer;
}

NormWeights ModelLoader::read_norm(const Json* value, const std::string& path, const ModelConfig& config) {
  // Absent, or either key absent: PyTorch's initial values, gamma = 1 and beta = 0.
  const std::size_t N = config.d_model;
  NormWeights norm{generate("ones", {N}, {"N"}), generate("zeros", {N}, {"N"})};
  if (!value) return norm;
  reader_.object(*value, path, kNormKeys);
  const TensorRequest request{{N}, {"N"}, "d_model"};
  if (const Json* g = reader_.member(*value, "gamma")) norm.gamma = read_tensor(*g, json_child(path, "gamma"), request);
  if (const Json* b = reader_.member(*value, "beta")) norm.beta = read_tensor(*b, json_child(path, "beta"), request);
  return norm;
}

FeedForwardWeights ModelLoader::read_feed_forward(const Json& value, const std::string& path,
                                                  const ModelConfig& config) {
  reader_.object(value, path, kFeedForwardKeys);
  if (config.d_ff == 0) reader_.fail("model.d_ff", fmt::format("missing: {} needs the feed-forward width d_ff", path));
  const std::size_t N = config.d_model, F = config.d_ff;
  FeedForwardWeights ffn;
  ffn.W_1 = read_tensor(reader_.required(value, path, "W_1"), json_child(path, "W_1"),
                        TensorRequest{{N, F}, {"N", "F"}, "d_model x d_ff"});
  if (const Json* b = reader_.member(value, "b_1"))
    ffn.b_1 = read_tensor(*b, json_child(path, "b_1"), TensorRequest{{F}, {"F"}, "d_ff"});
  ffn.W_2 = read_tensor(reader_.required(value, path, "W_2"), json_child(path, "W_2"),
                        TensorRequest{{F, N}, {"F", "N"}, "d_ff x d_model"});
  if (const Json* b = reader_.member(value, "b_2"))
    ffn.b_2 = read_tensor(*b, json_child(path, "b_2"), TensorRequest{{N}, {"N"}, "d_model"});
  return ffn;
}

OutputWeights ModelLoader::read_output(const Json& value, const std::string& path, const Model& model) {
  if (model.vocab.empty()) reader_.fail(path, "expected a vocab: the output head scores every vocabulary token");
  OutputWeights out;
  out.present = true;
  if (value.is_string()) {
    if (value.get<std::string>() != "tied")
      reader_.fail(path,
                   fmt::format("expected \"tied\" (logits = x @ embedding^T) or {{\"W\": ..., \"b\": ...}}, found {}",
                               describe_json(value)));
    out.tied = true;
    return out;
  }
  reader_.object(value, path, kOutputKeys);
  const std::size_t N = model.config.d_model, V = model.vocab.size();
  out.W = read_tensor(reader_.required(value, path, "W"), json_child(path, "W"),
                      TensorRequest{{N, V}, {"N", "V"}, "d_model x len(vocab)"});
  if (const Json* b = reader_.member(value, "b"))
    out.b = read_tensor(*b, json_child(path, "b"), TensorRequest{{V}, {"V"}, "len(vocab)"});
  return out;
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
  }
  // The reader's depth limit (64) bounds the walk above.
  if (shape.size() > 8)
    reader_.fail(path, fmt::format("expected at most 8 nested array levels, found {}", shape.size()));
  return shape;
}

void ModelLoader::fill_nested(const Json& value, const std::string& path, const Shape& shape, std::size_t axis,
                              TensorData& out) {
  if (axis == shape.size()) {
    out.push_back(reader_.finite_number(value, path));
    return;
  }
  if (!value.is_array())
    reader_.fail(path,
                 fmt::format("expected an array of {} (ragged array), found {}", shape[axis], describe_json(value)));
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
  if (!reader_.collecting()) return read_tensor_value(value, path, request);
  // Collect mode: a bad tensor is recorded and read as zeros of its implied shape, so the
  // rest of the file is still checked. A missing one (null) was reported already.
  const auto placeholder = [&] { return request.shape.empty() ? Tensor() : Tensor(request.shape, request.axes); };
  if (reader_.is_missing(value)) return placeholder();
  try {
    return read_tensor_value(value, path, request);
  } catch (const InputError& e) {
    errors_.push_back(e);
  } catch (const AlreadyReported&) {
  }
  return placeholder();
}

Tensor ModelLoader::read_tensor_value(const Json& value, const std::string& path, const TensorRequest& request) {
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
    if (request.shape.empty())
      reader_.fail(path, fmt::format("the shape is not implied here; write {{\"{}\": [...]}}", kind));
    if (kind == "identity" && request.shape.size() != 2)
      reader_.fail(
          path, fmt::format("\"identity\" needs a matrix, but this tensor has shape {}", shape_string(request.shape)));
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
    reader_.fail(
        path,
        fmt::format("expected {}array of numbers or \"randn\", \"zeros\", \"ones\", \"identity\", found {}",
                    request.shape.empty() ? "an " : "a " + shape_string(request.shape) + " ", describe_json(value)));
  }
  const Shape shape = nested_shape(value, path);
  if (!request.shape.empty() && shape.size() != request.shape.size()) expected(shape);
  TensorData data;
  data.reserve(element_count(shape));
  fill_nested(value, path, shape, 0, data);
  expected(shape);
  Tensor t;
  t.shape = shape;
  t.axes = request.axes.empty() ? AxisNames(shape.size(), "") : request.axes;
  t.data = std::move(data);
  return t;
}

void ModelLoader::check_memory(const Model& model, std::size_t batch, std::size_t seq_len, std::size_t target_len,
                               std::size_t encoder_layers, std::size_t decoder_layers, const std::string& path) {
  const std::uint64_t limit = options_.max_memory_bytes ? options_.max_memory_bytes : default_memory_limit();
  RunSize size;
  size.batch = batch;
  size.seq_len = seq_len;
  size.target_len = target_len;
  size.encoder_layers = encoder_layers;
  size.decoder_layers = decoder_layers;
  size.vocab = model.vocab.size();
  size.trace_kept = options_.trace_kept;
  const std::uint64_t need = estimate_run_bytes(model.config, size);
  if (need > limit)
    reader_.fail(path, fmt::format("this run would need about {} (B={}, S={}, d_model={}, heads={}, layers={}), "
                                   "more than the limit of {}; use a smaller model or raise --max-memory",
                                   byte_size_text(static_cast<double>(need), ByteStyle::Memory), batch, seq_len,
                                   model.config.d_model, model.config.num_heads, encoder_layers + decoder_layers,
                                   byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

}  // namespace

namespace {

// The token lists the run will look up: the texts split as the tokenize step splits them,
// or the tokens as given.
std::vector<std::vector<std::string>> token_lists(const TokenInput& input) {
  if (input.texts.empty()) return input.tokens;
  std::vector<std::vector<std::string>> lists;
  for (const auto& text : input.texts) lists.push_back(split_tokens(text));
  return lists;
}

// What lookup_token_ids needs of the vocabulary, at the input's path: every token found
// (or an <UNK> for it), and a <PAD> when sentences differ in length. Checked row by row,
// each row's tokens before its padding, so the first problem is the one the run would meet.
void check_lookup(const Model& model, const TokenInput& input, const std::vector<std::vector<std::string>>& lists) {
  std::size_t longest = 0;
  for (const auto& tokens : lists) longest = std::max(longest, tokens.size());
  const Vocabulary& vocab = model.vocab;
  for (const auto& tokens : lists) {
    if (!vocab.unknown_id())
      for (const auto& token : tokens)
        if (!vocab.find(token))
          throw InputError(model.source, input.json_path,
                           "unknown token \"" + token + "\" and the vocabulary has no \"<UNK>\"");
    if (tokens.size() < longest && !vocab.pad_id())
      throw InputError(model.source, input.json_path,
                       "sentences of different lengths need \"<PAD>\" in the vocabulary");
  }
}

}  // namespace

void check_token_input(const Model& model, const TokenInput& input) {
  const std::vector<std::vector<std::string>> lists = token_lists(input);
  for (std::size_t b = 0; b < lists.size(); ++b) {
    const std::string path = input.batched ? json_index(input.json_path, b) : input.json_path;
    if (lists[b].empty()) throw InputError(model.source, path, "expected at least one token, found none");
    if (model.config.positional_encoding == PositionalEncoding::Learned && lists[b].size() > model.config.max_len)
      throw InputError(model.source, path,
                       fmt::format("expected at most max_len = {} tokens (the learned position table's rows), found {}",
                                   model.config.max_len, lists[b].size()));
  }
  check_lookup(model, input, lists);
}

void replace_source_text(Model& model, const std::string& text, const std::string& origin) {
  if (model.vocab.empty())
    throw InputError(model.source, "vocab",
                     "this model has no vocabulary, so it cannot read text; give the input as input.X");
  model.input = Tensor();
  model.source_tokens = TokenInput{{text}, {}, false, origin};
  model.batched = false;
  check_token_input(model, model.source_tokens);
  if (model.has_decoder()) {
    model.target_tokens = TokenInput{};
    if (!start_from_bos(model))
      throw InputError(model.source, "vocab",
                       "the model has a decoder but no \"<BOS>\" to start it from; give --target TEXT");
  }
}

void replace_target_text(Model& model, const std::string& text, const std::string& origin) {
  if (!model.has_decoder())
    throw InputError(model.source, "decoder", "this model has no decoder, so a target sentence has nothing to feed");
  if (model.vocab.empty())
    throw InputError(model.source, "vocab", "this model has no vocabulary, so it cannot read a target sentence");
  if (model.batched)
    throw InputError(model.source, "input",
                     "the model's input is a batch; a single target sentence needs a single source sentence");
  model.target_input = Tensor();
  model.target_tokens = TokenInput{{text}, {}, false, origin};
  check_token_input(model, model.target_tokens);
}

std::uint64_t estimate_run_bytes(const ModelConfig& config, const RunSize& size) {
  // Long double, saturating: the inputs can be absurd (d_model 1e6, S 1e5).
  const long double B = size.batch, S = size.seq_len, T = size.target_len, N = config.d_model, H = config.num_heads,
                    d = config.d_head, F = config.d_ff, V = size.vocab;
  const long double Hd = H * d;
  // Weights: 4 projections per attention block, 2 FFN matrices, the embedding.
  const long double attention_weights = 3 * N * Hd + Hd * N + 4 * Hd;
  const long double ffn_weights = 2 * N * F + F + N;
  // Activations the trace keeps per attention block over (S queries, K keys): q, k, v, the
  // head views, k_t, context, concat (7 of B*S*Hd, counting keys as S); scores, scaled,
  // masked, weights (4 of B*H*S*K); output.
  const auto attention = [&](long double q_len, long double k_len) {
    return 7 * B * std::max(q_len, k_len) * Hd + 4 * B * H * q_len * k_len + B * q_len * N;
  };
  const auto ffn = [&](long double len) { return B * len * (F + N); };
  const long double norms = 6 * B * std::max(S, T) * N;  // residuals, norms, the layer output
  const long double encoder_activations = attention(S, S) + ffn(S) + norms;
  const long double decoder_activations = attention(T, T) + attention(T, S) + ffn(T) + 1.5L * norms;
  const long double encoder_weights = size.encoder_layers * (attention_weights + ffn_weights);
  const long double decoder_weights = size.decoder_layers * (2 * attention_weights + ffn_weights);
  // Streamed, a layer's intermediates are freed when the next layer starts.
  const long double activations =
      size.trace_kept ? size.encoder_layers * encoder_activations + size.decoder_layers * decoder_activations
                      : std::max(size.encoder_layers ? encoder_activations : 0.0L,
                                 size.decoder_layers ? decoder_activations : 0.0L);
  const long double io = V * N + 3 * B * (S + T) * N + 2 * B * T * V;
  const long double bytes = 8.0L * (encoder_weights + decoder_weights + activations + io);
  return bytes > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 4ULL << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
}

namespace {
Model load_model_json(const Json& document, const std::string& source, const LoadOptions& options) {
  return ModelLoader(source, options).load(document);
}
}  // namespace

Model load_model_text(const std::string& text, const std::string& source, const LoadOptions& options) {
  return load_model_json(parse_json(text, source), source, options);
}

Model load_model_file(const std::string& path, const LoadOptions& options) {
  return load_model_text(read_text_file(path), path, options);
}

}  // namespace attn

#include "model/layer_sections.h"

#include <fmt/format.h>

#include "model/attention_section.h"
#include "model/tensor_values.h"

namespace attn {

namespace {

const std::vector<std::string> kEncoderLayerKeys = {"attention", "norm1", "ffn", "norm2"};
const std::vector<std::string> kDecoderLayerKeys = {"self_attention", "norm1", "cross_attention",
                                                    "norm2",          "ffn",   "norm3"};
const std::vector<std::string> kDecoderOnlyLayerKeys = {"self_attention", "norm1", "ffn", "norm2"};
const std::vector<std::string> kNormKeys = {"gamma", "beta"};
const std::vector<std::string> kFeedForwardKeys = {"W_1", "b_1", "W_2", "b_2", "W_3"};
const std::vector<std::string> kOutputKeys = {"W", "b"};

// The layer "randn" stands for: every weight drawn, no biases, norms at their defaults
// (gamma 1, beta 0).
Json randn_attention() { return Json{{"W_q", "randn"}, {"W_k", "randn"}, {"W_v", "randn"}, {"W_o", "randn"}}; }
Json randn_feed_forward(const ModelConfig& config) {
  if (gated(config.activation)) return Json{{"W_1", "randn"}, {"W_2", "randn"}, {"W_3", "randn"}};
  return Json{{"W_1", "randn"}, {"W_2", "randn"}};
}
Json randn_encoder_layer(const ModelConfig& config) {
  Json layer = {{"attention", randn_attention()}};
  if (config.d_ff > 0) layer["ffn"] = randn_feed_forward(config);
  return layer;
}
Json randn_decoder_layer(const ModelConfig& config, bool decoder_only) {
  if (decoder_only) return Json{{"self_attention", randn_attention()}, {"ffn", randn_feed_forward(config)}};
  return Json{{"self_attention", randn_attention()},
              {"cross_attention", randn_attention()},
              {"ffn", randn_feed_forward(config)}};
}

// The layer `layer` stands for with every "randn" replaced by `kind`.
Json with_initializer(const Json& layer, const std::string& kind) {
  if (layer.is_string()) return layer.get<std::string>() == "randn" ? Json(kind) : layer;
  if (!layer.is_object()) return layer;
  Json out = layer;
  for (auto it = out.begin(); it != out.end(); ++it) it.value() = with_initializer(it.value(), kind);
  return out;
}

// A list of layers; one object repeated `count` times; or "randn", `randn_layer` repeated.
// `count_given`: the model section set the count (`count_field`), which a list must match.
LayerList layer_list(const JsonReader& reader, const Json& value, const std::string& key, std::size_t count,
                     bool count_given, const Json& randn_layer, const char* count_field) {
  LayerList list{key, value.is_array(), {}, nullptr, 0};
  if (value.is_array()) {
    if (value.empty()) reader.fail(key, "expected at least one layer, found an empty array");
    if (count_given && value.size() != count)
      reader.fail(key, fmt::format("expected {} layers ({}), found {}", count, count_field, value.size()));
    for (const Json& layer : value) list.listed_layers.push_back(&layer);
    list.count = value.size();
  } else if (value.is_string()) {
    const std::string kind = value.get<std::string>();
    if (kind != "randn" && kind != "xavier_uniform" && kind != "normal_0.02" && kind != "kaiming_uniform")
      reader.fail(key, fmt::format("expected a list of layers, one layer object, \"randn\", \"xavier_uniform\", "
                                   "\"normal_0.02\" or \"kaiming_uniform\", found {}",
                                   describe_json(value)));
    list.template_layer = std::make_shared<const Json>(with_initializer(randn_layer, kind));
    list.count = count;
  } else if (value.is_object()) {
    list.template_layer = std::shared_ptr<const Json>(&value, [](const Json*) {});  // the document owns it
    list.count = count;
  } else {
    reader.fail(key, "expected a list of layers, one layer object or \"randn\", found " + describe_json(value));
  }
  return list;
}

// Position-wise feed-forward: W_1 (N, F), b_1 (F,), W_2 (F, N), b_2 (N,); SwiGLU's W_3 (N, F).
FeedForwardWeights read_feed_forward(LoadContext& context, const Json& value, const std::string& path,
                                     const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  reader.object(value, path, kFeedForwardKeys);
  if (config.d_ff == 0) reader.fail("model.d_ff", fmt::format("missing: {} needs the feed-forward width d_ff", path));
  const std::size_t N = config.d_model, F = config.d_ff;
  FeedForwardWeights ffn;
  ffn.W_1 = read_tensor(context, reader.required(value, path, "W_1"), json_child(path, "W_1"),
                        TensorRequest{{N, F}, {"N", "F"}, "d_model x d_ff"});
  if (const Json* b = reader.member(value, "b_1"))
    ffn.b_1 = read_tensor(context, *b, json_child(path, "b_1"), TensorRequest{{F}, {"F"}, "d_ff"});
  ffn.W_2 = read_tensor(context, reader.required(value, path, "W_2"), json_child(path, "W_2"),
                        TensorRequest{{F, N}, {"F", "N"}, "d_ff x d_model"});
  if (const Json* b = reader.member(value, "b_2"))
    ffn.b_2 = read_tensor(context, *b, json_child(path, "b_2"), TensorRequest{{N}, {"N"}, "d_model"});
  const Json* W_3 = reader.member(value, "W_3");
  if (!gated(config.activation)) {
    if (W_3)
      reader.fail(json_child(path, "W_3"),
                  "expected no W_3: only model.activation \"swiglu\" has an up projection (W_3)");
    return ffn;
  }
  if (!W_3)
    reader.fail(
        json_child(path, "W_3"),
        "missing: model.activation \"swiglu\" needs the up projection W_3 (d_model x d_ff) beside the gate W_1");
  if (!ffn.b_1.data.empty())
    reader.fail(json_child(path, "b_1"),
                "expected no b_1 with model.activation \"swiglu\" (Llama's gate silu(x W_1) has no bias)");
  ffn.W_3 = read_tensor(context, *W_3, json_child(path, "W_3"), TensorRequest{{N, F}, {"N", "F"}, "d_model x d_ff"});
  return ffn;
}

}  // namespace

LayerList encoder_layer_list(const JsonReader& reader, const Json& value, const ModelConfig& config) {
  return layer_list(reader, value, "encoder", config.num_layers ? config.num_layers : 1, config.num_layers != 0,
                    randn_encoder_layer(config), "model.num_layers");
}

LayerList decoder_layer_list(const JsonReader& reader, const Json& value, const ModelConfig& config) {
  const std::size_t count =
      config.num_decoder_layers ? config.num_decoder_layers : (config.num_layers ? config.num_layers : 1);
  return layer_list(reader, value, "decoder", count, config.num_decoder_layers || config.num_layers,
                    randn_decoder_layer(config, config.architecture == Architecture::DecoderOnly),
                    config.num_decoder_layers ? "model.num_decoder_layers" : "model.num_layers");
}

EncoderLayerWeights read_encoder_layer(LoadContext& context, const Json& value, const std::string& path,
                                       const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  reader.object(value, path, kEncoderLayerKeys);
  EncoderLayerWeights layer;
  layer.attention =
      read_attention(context, reader.required(value, path, "attention"), json_child(path, "attention"), config);
  const Json* ffn = reader.member(value, "ffn");
  if (!ffn) {
    for (const char* key : {"norm1", "norm2"})
      if (reader.member(value, key))
        reader.fail(json_child(path, key),
                    "expected an ffn alongside the norms (a full layer has attention, norm1, ffn, norm2)");
    return layer;
  }
  layer.full = true;
  if (!layer.attention.has_output_projection())
    reader.fail(json_child(path, "attention"),
                "expected W_o: a full layer adds the attention output back to its input "
                "(the residual), which needs d_model columns");
  layer.norm1 = read_norm(context, reader.member(value, "norm1"), json_child(path, "norm1"), config);
  layer.ffn = read_feed_forward(context, *ffn, json_child(path, "ffn"), config);
  layer.norm2 = read_norm(context, reader.member(value, "norm2"), json_child(path, "norm2"), config);
  return layer;
}

DecoderLayerWeights read_decoder_layer(LoadContext& context, const Json& value, const std::string& path,
                                       const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  const bool decoder_only = config.architecture == Architecture::DecoderOnly;
  if (decoder_only && value.is_object())
    for (const char* key : {"cross_attention", "norm3"})
      if (reader.member(value, key))
        reader.fail(json_child(path, key),
                    "a decoder-only layer has no cross-attention (there is no encoder to attend to): its keys are "
                    "self_attention, norm1, ffn, norm2");
  reader.object(value, path, decoder_only ? kDecoderOnlyLayerKeys : kDecoderLayerKeys);
  // Both attention blocks are inside a residual, so both need W_o.
  const auto attention = [&](const char* key) {
    AttentionWeights a = read_attention(context, reader.required(value, path, key), json_child(path, key), config);
    if (!a.has_output_projection())
      reader.fail(json_child(path, key), "expected W_o: the residual around it needs d_model columns");
    return a;
  };
  const auto norm = [&](const char* key) {
    return read_norm(context, reader.member(value, key), json_child(path, key), config);
  };
  DecoderLayerWeights layer;
  layer.self_attention = attention("self_attention");
  layer.norm1 = norm("norm1");
  if (decoder_only) {  // causal self-attention, then the feed-forward network (as GPT-2's block)
    layer.ffn = read_feed_forward(context, reader.required(value, path, "ffn"), json_child(path, "ffn"), config);
    layer.norm2 = norm("norm2");
    return layer;
  }
  layer.cross_attention = attention("cross_attention");
  layer.norm2 = norm("norm2");
  layer.ffn = read_feed_forward(context, reader.required(value, path, "ffn"), json_child(path, "ffn"), config);
  layer.norm3 = norm("norm3");
  return layer;
}

NormWeights read_norm(LoadContext& context, const Json* value, const std::string& path, const ModelConfig& config) {
  // Absent, or either key absent: PyTorch's initial values. RMSNorm has no beta.
  const std::size_t N = config.d_model;
  const bool rms = root_mean_square(config.norm);
  NormWeights norm{generate(context.rng, "ones", {N}, {"N"}),
                   rms ? Tensor() : generate(context.rng, "zeros", {N}, {"N"})};
  if (!value) return norm;
  context.reader.object(*value, path, kNormKeys);
  if (rms && context.reader.member(*value, "beta"))
    context.reader.fail(json_child(path, "beta"),
                        "expected no beta: model.norm is \"rmsnorm\" (x / rms(x) · gamma, no shift); remove it or "
                        "set model.norm to \"layernorm\"");
  const TensorRequest request{{N}, {"N"}, "d_model"};
  if (const Json* g = context.reader.member(*value, "gamma"))
    norm.gamma = read_tensor(context, *g, json_child(path, "gamma"), request);
  if (const Json* b = context.reader.member(*value, "beta"))
    norm.beta = read_tensor(context, *b, json_child(path, "beta"), request);
  return norm;
}

OutputWeights read_output(LoadContext& context, const Json& value, const std::string& path, const Model& model) {
  const JsonReader& reader = context.reader;
  if (model.vocab.empty()) reader.fail(path, "expected a vocab: the output head scores every vocabulary token");
  OutputWeights out;
  out.present = true;
  if (value.is_string()) {
    if (value.get<std::string>() != "tied")
      reader.fail(path,
                  fmt::format("expected \"tied\" (logits = x @ embedding^T) or {{\"W\": ..., \"b\": ...}}, found {}",
                              describe_json(value)));
    out.tied = true;
    return out;
  }
  reader.object(value, path, kOutputKeys);
  // logits (B, S, V) = x (B, S, N) @ W (N, V) + b (V,)
  const std::size_t N = model.config.d_model, V = model.vocab.size();
  out.W = read_tensor(context, reader.required(value, path, "W"), json_child(path, "W"),
                      TensorRequest{{N, V}, {"N", "V"}, "d_model x len(vocab)"});
  if (const Json* b = reader.member(value, "b"))
    out.b = read_tensor(context, *b, json_child(path, "b"), TensorRequest{{V}, {"V"}, "len(vocab)"});
  return out;
}

}  // namespace attn

#include "attn/model_writer.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "io/number_text.h"
#include "model/token_input.h"

namespace attn {

namespace {

std::string quoted(const std::string& text) { return nlohmann::json(text).dump(); }

// Members of one JSON object, each written by a function given its indentation, so that
// nested objects indent as they nest.
class ObjectText {
 public:
  using Value = std::function<std::string(const std::string& indent)>;
  void add(const std::string& key, Value value) { members_.push_back({key, std::move(value)}); }
  void add_text(const std::string& key, std::string text) {
    add(key, [text = std::move(text)](const std::string&) { return text; });
  }
  bool empty() const { return members_.empty(); }

  std::string text(const std::string& indent) const {
    const std::string inner = indent + "  ";
    std::string out = "{\n";
    for (std::size_t i = 0; i < members_.size(); ++i)
      out += inner + quoted(members_[i].first) + ": " + members_[i].second(inner) +
             (i + 1 < members_.size() ? ",\n" : "\n");
    return out + indent + "}";
  }

 private:
  std::vector<std::pair<std::string, Value>> members_;
};

// The values of `shape` from `data`, nested; the innermost lists on one line each.
std::string nested_numbers(const double* data, const Shape& shape, std::size_t axis, const std::string& indent) {
  if (axis + 1 == shape.size()) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape[axis]; ++i) out += (i ? ", " : "") + shortest_text(data[i]);
    return out + "]";
  }
  std::size_t stride = 1;
  for (std::size_t a = axis + 1; a < shape.size(); ++a) stride *= shape[a];
  const std::string inner = indent + "  ";
  std::string out = "[\n";
  for (std::size_t i = 0; i < shape[axis]; ++i)
    out += inner + nested_numbers(data + i * stride, shape, axis + 1, inner) + (i + 1 < shape[axis] ? ",\n" : "\n");
  return out + indent + "]";
}

// A tensor as nested lists; without its first axis when `drop_batch` (an unbatched input).
ObjectText::Value numbers(const Tensor& t, bool drop_batch = false) {
  return [&t, drop_batch](const std::string& indent) {
    const Shape shape = drop_batch ? Shape(t.shape.begin() + 1, t.shape.end()) : t.shape;
    return nested_numbers(t.data.data(), shape, 0, indent);
  };
}

void add_if(ObjectText& object, const std::string& key, const Tensor& t) {
  if (!t.data.empty()) object.add(key, numbers(t));
}

std::string config_text(const Model& model) {
  const ModelConfig& c = model.config;
  const bool decoder_only = c.architecture == Architecture::DecoderOnly;
  std::string out = "{";
  if (decoder_only) out += "\"architecture\": \"decoder-only\", ";
  out += fmt::format("\"d_model\": {}, \"num_heads\": {}, \"d_head\": {}", c.d_model, c.num_heads, c.d_head);
  if (c.kv_heads() != c.num_heads) out += fmt::format(", \"num_kv_heads\": {}", c.kv_heads());
  if (c.d_ff) out += fmt::format(", \"d_ff\": {}", c.d_ff);
  out += fmt::format(", \"num_layers\": {}", decoder_only ? model.decoder.size() : model.encoder.size());
  if (model.has_decoder() && !decoder_only) out += fmt::format(", \"num_decoder_layers\": {}", model.decoder.size());
  out += fmt::format("{}, \"seed\": {}", decoder_only ? "" : fmt::format(", \"causal\": {}", c.causal), c.seed);
  if (c.sliding_window) out += fmt::format(", \"sliding_window\": {}", c.sliding_window);
  const char* activation = c.activation == Activation::GELU       ? "gelu"
                           : c.activation == Activation::GELUTanh ? "gelu_tanh"
                           : c.activation == Activation::SwiGLU   ? "swiglu"
                           : c.activation == Activation::SiLU     ? "silu"
                           : c.activation == Activation::ReLU     ? "relu"
                                                                  : nullptr;
  // (a checkpoint family's variants, which a model file cannot say, are never written: attn
  // writes the models it trains, which are its own files')
  if (!activation || c.norm == Norm::RMSNormPlusOne || c.rotary_dims || c.score_scale == ScoreScale::None ||
      !c.windowed_layers.empty())
    throw InternalError("model_writer: a checkpoint family's variant cannot be written as a model file");
  out += fmt::format(", \"activation\": \"{}\"", activation);
  out += fmt::format(", \"norm\": \"{}\"", c.norm == Norm::RMSNorm ? "rmsnorm" : "layernorm");
  out += fmt::format(", \"norm_first\": {}, \"layer_norm_eps\": {}", c.norm_first, shortest_text(c.layer_norm_eps));
  const char* positions = c.positional_encoding == PositionalEncoding::Learned ? "learned"
                          : c.positional_encoding == PositionalEncoding::None  ? "none"
                          : c.positional_encoding == PositionalEncoding::RoPE  ? "rope"
                                                                               : "sinusoidal";
  out += fmt::format(", \"positional_encoding\": \"{}\", \"scale_embeddings\": {}", positions, c.scale_embeddings);
  if (c.positional_encoding == PositionalEncoding::Learned) out += fmt::format(", \"max_len\": {}", c.max_len);
  if (c.positional_encoding == PositionalEncoding::RoPE) out += ", \"rope_theta\": " + shortest_text(c.rope_theta);
  const RopeScaling& s = c.rope_scaling;
  if (s.llama3)
    out += fmt::format(
        ", \"rope_scaling\": {{\"rope_type\": \"llama3\", \"factor\": {}, \"low_freq_factor\": {}, "
        "\"high_freq_factor\": {}, \"original_max_position_embeddings\": {}}}",
        shortest_text(s.factor), shortest_text(s.low_freq_factor), shortest_text(s.high_freq_factor),
        shortest_text(s.original_max_position_embeddings));
#define ATTN_BLOCK_FLAG(name, comment) \
  if (c.name) out += ", \"" #name "\": true";
#include "attn/block_weights.def"  // the block flags, each written when on
#undef ATTN_BLOCK_FLAG
  return out + "}";
}

std::string string_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

// The vocabulary, a dozen tokens a line.
ObjectText::Value vocabulary(const Vocabulary& vocab) {
  return [&vocab](const std::string& indent) {
    std::string out = "[";
    for (std::size_t i = 0; i < vocab.size(); ++i)
      out += (i % 12 == 0 ? "\n" + indent + "  " : " ") + quoted(vocab.token(i)) + (i + 1 < vocab.size() ? "," : "");
    return out + "\n" + indent + "]";
  };
}

ObjectText attention(const AttentionWeights& a) {
  ObjectText o;
  if (a.heads.empty()) {
    add_if(o, "W_q", a.W_q);
    add_if(o, "W_k", a.W_k);
    add_if(o, "W_v", a.W_v);
  } else {
    o.add("heads", [&a](const std::string& indent) {
      std::string out = "[\n";
      for (std::size_t h = 0; h < a.heads.size(); ++h) {
        ObjectText head;
        head.add("W_q", numbers(a.heads[h].W_q));
        head.add("W_k", numbers(a.heads[h].W_k));
        head.add("W_v", numbers(a.heads[h].W_v));
        out += indent + "  " + head.text(indent + "  ") + (h + 1 < a.heads.size() ? ",\n" : "\n");
      }
      return out + indent + "]";
    });
  }
  // the optional weights, in the order of attn/block_weights.def
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) add_if(o, #name, a.name);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  return o;
}

ObjectText norm(const NormWeights& n) {
  ObjectText o;
  add_if(o, "gamma", n.gamma);
  add_if(o, "beta", n.beta);
  return o;
}

ObjectText feed_forward(const FeedForwardWeights& f) {
  ObjectText o;
  add_if(o, "W_1", f.W_1);
  add_if(o, "b_1", f.b_1);
  add_if(o, "W_2", f.W_2);
  add_if(o, "b_2", f.b_2);
  add_if(o, "W_3", f.W_3);
  return o;
}

ObjectText::Value object(ObjectText o) {
  return [o = std::move(o)](const std::string& indent) { return o.text(indent); };
}

// A list of layers, each an object.
template <typename Layer>
ObjectText::Value layers(const std::vector<Layer>& list, std::function<ObjectText(const Layer&)> layer) {
  return [&list, layer](const std::string& indent) {
    std::string out = "[\n";
    for (std::size_t i = 0; i < list.size(); ++i)
      out += indent + "  " + layer(list[i]).text(indent + "  ") + (i + 1 < list.size() ? ",\n" : "\n");
    return out + indent + "]";
  };
}

ObjectText encoder_layer(const EncoderLayerWeights& l) {
  ObjectText o;
  o.add("attention", object(attention(l.attention)));
  if (!l.full) return o;
  o.add("norm1", object(norm(l.norm1)));
  o.add("ffn", object(feed_forward(l.ffn)));
  o.add("norm2", object(norm(l.norm2)));
  return o;
}

ObjectText decoder_layer(const DecoderLayerWeights& l) {
  ObjectText o;
  o.add("self_attention", object(attention(l.self_attention)));
  o.add("norm1", object(norm(l.norm1)));
  if (l.cross_attention.W_q.data.empty() && l.cross_attention.heads.empty()) {  // decoder-only (GPT-style)
    o.add("ffn", object(feed_forward(l.ffn)));
    o.add("norm2", object(norm(l.norm2)));
    return o;
  }
  o.add("cross_attention", object(attention(l.cross_attention)));
  o.add("norm2", object(norm(l.norm2)));
  o.add("ffn", object(feed_forward(l.ffn)));
  o.add("norm3", object(norm(l.norm3)));
  return o;
}

// Text or token lists as the file gives them: one sentence, or a list of them.
void add_tokens(ObjectText& o, const TokenInput& in, const char* text_key, const char* tokens_key) {
  if (!in.texts.empty()) {
    o.add_text(text_key, in.batched ? string_list(in.texts) : quoted(in.texts[0]));
    return;
  }
  std::vector<std::string> rows;
  for (const auto& list : in.tokens) rows.push_back(string_list(list));
  if (!in.batched) {
    o.add_text(tokens_key, rows[0]);
    return;
  }
  std::string out = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + rows[i];
  o.add_text(tokens_key, out + "]");
}

// input.labels: each sentence's labels as tokens, as many as the sentence has positions.
std::string labels_text(const Model& model, const RunInput& input) {
  const TokenInput& seq = model.has_target() ? input.target_tokens : input.source_tokens;
  const std::size_t B = input.labels.shape[0], T = input.labels.shape[1];
  std::vector<std::string> rows;
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t length = T;
    if (!seq.empty()) length = token_lists(seq)[b].size();
    std::vector<std::string> tokens;
    for (std::size_t t = 0; t < length; ++t)
      tokens.push_back(model.vocab.token(static_cast<std::size_t>(input.labels.data[b * T + t])));
    rows.push_back(string_list(tokens));
  }
  if (!input.batched) return rows[0];
  std::string out = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + rows[i];
  return out + "]";
}

ObjectText input_object(const Model& model, const RunInput& input) {
  ObjectText o;
  if (input.has_tokens())
    add_tokens(o, input.source_tokens, "text", "tokens");
  else
    o.add("X", numbers(input.X, !input.batched));
  if (!input.target_tokens.empty() && !input.target_tokens.from_bos)
    add_tokens(o, input.target_tokens, "target_text", "target_tokens");
  else if (!input.target_X.data.empty())
    o.add("target_X", numbers(input.target_X, !input.target_X_batched));
  if (!input.labels.data.empty()) o.add_text("labels", labels_text(model, input));
  if (!input.output_grad.data.empty()) o.add("output_grad", numbers(input.output_grad, !input.batched));
  return o;
}

}  // namespace

std::string model_file_json(const Model& model, const RunInput& input, const std::string& comment) {
  // A model file has no words for BERT's token types, embedding norm and head transform:
  // refused, rather than written without them.
  const char* unwritable = model.token_types.has_values()            ? "token_types"
                           : model.embedding_norm.gamma.has_values() ? "embedding_norm"
                           : model.output.has_transform()            ? "output.transform"
                                                                     : nullptr;
  if (unwritable)
    throw InputError(model.source, unwritable,
                     "a model file cannot hold this weight (a BERT checkpoint's): attn writes model files for the "
                     "paper's architecture and its decoder-only variants only");
  ObjectText file;
  file.add_text("comment", quoted(comment));
  file.add_text("model", config_text(model));
  if (!model.vocab.empty()) file.add("vocab", vocabulary(model.vocab));
  if (!model.prompt_template.empty()) file.add_text("prompt_template", quoted(model.prompt_template));
  add_if(file, "embedding", model.embedding);
  add_if(file, "positions", model.positions);
  file.add("input", object(input_object(model, input)));
  if (!model.encoder.empty()) file.add("encoder", layers<EncoderLayerWeights>(model.encoder, encoder_layer));
  if (!model.encoder_norm.gamma.data.empty()) file.add("encoder_norm", object(norm(model.encoder_norm)));
  if (model.has_decoder()) file.add("decoder", layers<DecoderLayerWeights>(model.decoder, decoder_layer));
  if (!model.decoder_norm.gamma.data.empty()) file.add("decoder_norm", object(norm(model.decoder_norm)));
  if (model.output.present) {
    if (model.output.tied) {
      file.add_text("output", "\"tied\"");
    } else {
      ObjectText out;
      add_if(out, "W", model.output.W);
      add_if(out, "b", model.output.b);
      file.add("output", object(std::move(out)));
    }
  }
  return file.text("") + "\n";
}

}  // namespace attn

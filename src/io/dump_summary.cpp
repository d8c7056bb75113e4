#include "io/dump_summary.h"

#include "attn/step_roles.h"

namespace attn {

nlohmann::json model_summary(const Model& model, const RunInput& input) {
  const ModelConfig& c = model.config;
  nlohmann::json m = {
      {"d_model", c.d_model},
      {"num_heads", c.num_heads},
      {"d_head", c.d_head},
      {"d_ff", c.d_ff},
      {"causal", c.causal},
      {"seed", c.seed},
      {"activation", c.activation == Activation::GELU        ? "gelu"
                     : c.activation == Activation::GELUTanh  ? "gelu_tanh"
                     : c.activation == Activation::SwiGLU    ? "swiglu"
                     : c.activation == Activation::GeGLUTanh ? "geglu_tanh"
                     : c.activation == Activation::SiLU      ? "silu"
                                                             : "relu"},
      {"norm_first", c.norm_first},
      {"layer_norm_eps", c.layer_norm_eps},
      {"positional_encoding", c.positional_encoding == PositionalEncoding::Learned           ? "learned"
                              : c.positional_encoding == PositionalEncoding::None            ? "none"
                              : c.positional_encoding == PositionalEncoding::RoPE            ? "rope"
                              : c.positional_encoding == PositionalEncoding::SinusoidalTable ? "sinusoidal_table"
                                                                                             : "sinusoidal"},
      {"scale_embeddings", c.scale_embeddings},
      {"num_layers", model.encoder.size()},
      {"num_decoder_layers", model.decoder.size()},
      {"vocab_size", model.vocab.size()},
      {"output", !model.output.present ? "none"
                 : model.output.tied   ? "tied"
                                       : "linear"},
      {"input", input.has_tokens() ? (input.source_tokens.texts.empty() ? "tokens" : "text") : "X"},
      {"batched", input.batched}};
  // The modern variants' keys only when the model uses them, so that the dumps of the
  // paper's models keep their keys.
  if (c.norm != Norm::LayerNorm) m["norm"] = c.norm == Norm::RMSNorm ? "rmsnorm" : "rmsnorm_plus_one";
  if (c.rotary_dims) m["rotary_dims"] = c.rotary_dims;
  if (c.score_scale == ScoreScale::None) m["score_scale"] = "none";
  if (!c.windowed_layers.empty()) m["windowed_layers"] = c.windowed_layers;
  if (c.positional_encoding == PositionalEncoding::RoPE) m["rope_theta"] = c.rope_theta;
  if (c.kv_heads() != c.num_heads) m["num_kv_heads"] = c.kv_heads();
  if (c.sliding_window) m["sliding_window"] = c.sliding_window;
  // A Hugging Face checkpoint's origin: where it was read from and which stored tensor
  // each parameter is ("decoder.0.self_attention.W_q": "h.0.attn.c_attn.weight[:, 0:768]").
  if (model.checkpoint.present())
    m["checkpoint"] = {{"folder", model.checkpoint.folder},
                       {"architecture", model.checkpoint.architecture},
                       {"tensor_names", model.checkpoint.tensor_names}};
  return m;
}

nlohmann::json token_summary(const Trace& trace) {
  nlohmann::json tokens = nlohmann::json::object();
  for (const auto& [sequence, key] : {std::pair{Sequence::Source, "source"}, std::pair{Sequence::Target, "target"}})
    if (const auto* t = trace.tokens(sequence))
      tokens[key] = trace.drops_batch_axis() && t->size() == 1 ? nlohmann::json((*t)[0]) : nlohmann::json(*t);
  return tokens;
}

nlohmann::json warning_summary(const Trace& trace) {
  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : trace.warnings()) warnings.push_back({{"name", w.name}, {"message", w.message}});
  return warnings;
}

NpyType npz_type(StepKind kind) {
  switch (entry_values(kind)) {
    case EntryValues::Integer:
      return NpyType::Int64;
    case EntryValues::Boolean:
      return NpyType::Bool;
    case EntryValues::Real:
      break;
  }
  return NpyType::Float64;
}

const char* numpy_type_name(NpyType type) {
  return type == NpyType::Int64 ? "int64" : type == NpyType::Bool ? "bool" : "float64";
}

std::string npz_metadata(const nlohmann::json& model, const Trace& trace, const nlohmann::ordered_json& tensors,
                         const nlohmann::ordered_json& parameters) {
  // The JSON dump's key order: written by hand, since nlohmann's objects sort their keys.
  return "{\"format\": \"attn-trace\", \"version\": 1, \"model\": " + model.dump() +
         ", \"tensors\": " + tensors.dump() + ", \"parameters\": " + parameters.dump() +
         ", \"tokens\": " + token_summary(trace).dump() + ", \"warnings\": " + warning_summary(trace).dump() + "}\n";
}

}  // namespace attn

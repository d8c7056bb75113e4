#include "model/attention_section.h"

#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/tensor_values.h"

namespace attn {

namespace {

const std::vector<std::string> kAttentionKeys = {"W_q", "W_k", "W_v",   "W_o",    "b_q",   "b_k",
                                                 "b_v", "b_o", "heads", "q_norm", "k_norm"};
const std::vector<std::string> kHeadKeys = {"W_q", "W_k", "W_v"};

// Each head's own W_q, W_k, W_v, (N, d) each, as seed 002 writes them.
std::vector<HeadWeights> read_heads(LoadContext& context, const Json& heads, const std::string& path,
                                    const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  const std::size_t H = config.num_heads;
  reader.array(heads, path);
  if (heads.size() != H) reader.fail(path, fmt::format("expected {} heads (num_heads), found {}", H, heads.size()));
  const TensorRequest per_head{{config.d_model, config.d_head}, {"N", "d"}, "d_model x d_head"};
  std::vector<HeadWeights> weights;
  for (std::size_t h = 0; h < H; ++h) {
    const std::string head_path = json_index(path, h);
    const Json& head = reader.object(heads[h], head_path, kHeadKeys);
    HeadWeights w;
    for (const auto& [key, target] : {std::pair{"W_q", &w.W_q}, {"W_k", &w.W_k}, {"W_v", &w.W_v}})
      *target = read_tensor(context, reader.required(head, head_path, key), json_child(head_path, key), per_head);
    weights.push_back(std::move(w));
  }
  return weights;
}

// H matrices (N, d) side by side -> (N, H*d): columns h*d .. h*d+d-1 are head h.
Tensor fuse_heads(const std::vector<HeadWeights>& heads, Tensor HeadWeights::*matrix, std::size_t N, std::size_t d) {
  const std::size_t Hd = heads.size() * d;
  Tensor fused({N, Hd}, {"N", "H*d"});
  for (std::size_t h = 0; h < heads.size(); ++h)
    for (std::size_t r = 0; r < N; ++r)
      for (std::size_t c = 0; c < d; ++c) fused.data[r * Hd + h * d + c] = (heads[h].*matrix).data[r * d + c];
  return fused;
}

// W_q, W_k and W_v: fused in the file, or per head.
void read_projections(LoadContext& context, const Json& value, const std::string& path, const ModelConfig& config,
                      AttentionWeights& w) {
  const JsonReader& reader = context.reader;
  const std::size_t N = config.d_model, d = config.d_head;
  if (const Json* heads = reader.member(value, "heads")) {
    if (config.kv_heads() != config.num_heads)
      reader.fail(json_child(path, "heads"),
                  fmt::format("expected fused W_q, W_k, W_v with model.num_kv_heads = {}: per-head matrices give "
                              "every head its own keys and values",
                              config.kv_heads()));
    for (const char* key : {"W_q", "W_k", "W_v"})
      if (reader.member(value, key))
        reader.fail(json_child(path, key), "expected either \"heads\" or fused W_q/W_k/W_v, found both");
    w.heads = read_heads(context, *heads, json_child(path, "heads"), config);
    fuse_attention_heads(w, config);
    return;
  }
  const TensorRequest fused{{N, config.num_heads * d}, {"N", "H*d"}, "d_model x H*d_head"};
  // Grouped-query attention: G key/value heads of d columns each.
  const bool grouped = config.kv_heads() != config.num_heads;
  const TensorRequest kv =
      grouped ? TensorRequest{{N, config.kv_heads() * d}, {"N", "G*d"}, "d_model x G*d_head"} : fused;
  for (const auto& [key, target, request] :
       {std::tuple{"W_q", &w.W_q, &fused}, {"W_k", &w.W_k, &kv}, {"W_v", &w.W_v, &kv}})
    *target = read_tensor(context, reader.required(value, path, key), json_child(path, key), *request);
}

// QK-norm's gammas, each (d,): given, or ones (as nn.RMSNorm starts) when model.qk_norm is
// true; refused without it.
void read_qk_norm(LoadContext& context, const Json& value, const std::string& path, const ModelConfig& config,
                  AttentionWeights& w) {
  const TensorRequest gamma{{config.d_head}, {"d"}, "d_head"};
  for (const auto& [key, target] : {std::pair{"q_norm", &w.q_norm}, {"k_norm", &w.k_norm}}) {
    const Json* given = context.reader.member(value, key);
    if (given && !config.qk_norm)
      context.reader.fail(json_child(path, key), "only used with model.qk_norm true; remove it or set qk_norm");
    if (given) {
      *target = read_tensor(context, *given, json_child(path, key), gamma);
    } else if (config.qk_norm) {
      *target = Tensor({config.d_head}, {"d"});
      for (double& g : target->data) g = 1.0;
    }
  }
}

}  // namespace

void fuse_attention_heads(AttentionWeights& w, const ModelConfig& config) {
  const std::size_t N = config.d_model, d = config.d_head;
  w.W_q = fuse_heads(w.heads, &HeadWeights::W_q, N, d);
  w.W_k = fuse_heads(w.heads, &HeadWeights::W_k, N, d);
  w.W_v = fuse_heads(w.heads, &HeadWeights::W_v, N, d);
}

AttentionWeights read_attention(LoadContext& context, const Json& value, const std::string& path,
                                const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  reader.object(value, path, kAttentionKeys);
  const std::size_t N = config.d_model, Hd = config.num_heads * config.d_head;
  AttentionWeights w;
  read_projections(context, value, path, config, w);
  if (const Json* W_o = reader.member(value, "W_o"))
    w.W_o =
        read_tensor(context, *W_o, json_child(path, "W_o"), TensorRequest{{Hd, N}, {"H*d", "N"}, "H*d_head x d_model"});
  const TensorRequest bias{{Hd}, {"H*d"}, "H*d_head"};
  const std::size_t Gd = config.kv_heads() * config.d_head;
  const TensorRequest kv_bias = config.kv_heads() != config.num_heads ? TensorRequest{{Gd}, {"G*d"}, "G*d_head"} : bias;
  for (const auto& [key, target, request] :
       {std::tuple{"b_q", &w.b_q, &bias}, {"b_k", &w.b_k, &kv_bias}, {"b_v", &w.b_v, &kv_bias}})
    if (const Json* b = reader.member(value, key)) *target = read_tensor(context, *b, json_child(path, key), *request);
  if (const Json* b = reader.member(value, "b_o")) {
    if (!w.has_output_projection())
      reader.fail(json_child(path, "b_o"), "expected W_o alongside b_o (the bias belongs to the output projection)");
    w.b_o = read_tensor(context, *b, json_child(path, "b_o"), TensorRequest{{N}, {"N"}, "d_model"});
  }
  read_qk_norm(context, value, path, config, w);
  return w;
}

}  // namespace attn

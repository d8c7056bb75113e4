#include "model/attention_section.h"

#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/tensor_values.h"

namespace attn {

namespace {

// What a row of attn/block_weights.def needs beside it: "" nothing, "W_o" the output
// projection, else a model flag's name.
bool is_flag(std::string_view needs) { return !needs.empty() && needs != "W_o"; }

// The value of the model flag `name` (a row of attn/block_weights.def).
bool flag_on(const ModelConfig& config, std::string_view name) {
#define ATTN_BLOCK_FLAG(flag, comment) \
  if (name == #flag) return config.flag;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_FLAG
  return false;
}

// A block's keys: W_q, W_k, W_v, the paper's optional weights (W_o and the biases), "heads",
// then the weights a model flag switches on (q_norm, k_norm): attn/block_weights.def's rows.
std::vector<std::string> attention_keys() {
  std::vector<std::string> keys = {"W_q", "W_k", "W_v"}, flagged;
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) (is_flag(needs) ? flagged : keys).push_back(#name);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  keys.push_back("heads");
  keys.insert(keys.end(), flagged.begin(), flagged.end());
  return keys;
}

const std::vector<std::string> kAttentionKeys = attention_keys();
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

// One optional weight, a row of attn/block_weights.def: read when given, checked against what
// it needs (W_o for b_o; a model flag for q_norm, k_norm, which are ones, as nn.RMSNorm
// starts, when the flag is on and the file does not give them).
void read_block_weight(LoadContext& context, const Json& value, const std::string& path, const ModelConfig& config,
                       const char* key, BlockWeightShape shape, std::string_view needs, const AttentionWeights& w,
                       Tensor& target) {
  const JsonReader& reader = context.reader;
  const Json* given = reader.member(value, key);
  const bool flag = is_flag(needs), on = flag && flag_on(config, needs);
  if (given && needs == "W_o" && !w.has_output_projection())
    reader.fail(json_child(path, key), "expected W_o alongside b_o (the bias belongs to the output projection)");
  if (given && flag && !on)
    reader.fail(json_child(path, key), fmt::format("only used with model.{0} true; remove it or set {0}", needs));
  const TensorRequest request = block_weight_request(shape, config);
  if (given) {
    target = read_tensor(context, *given, json_child(path, key), request);
  } else if (on) {
    target = Tensor(request.shape, request.axes);
    for (double& g : target.data) g = 1.0;
  }
}

}  // namespace

void fuse_attention_heads(AttentionWeights& w, const ModelConfig& config) {
  const std::size_t N = config.d_model, d = config.d_head;
  w.W_q = fuse_heads(w.heads, &HeadWeights::W_q, N, d);
  w.W_k = fuse_heads(w.heads, &HeadWeights::W_k, N, d);
  w.W_v = fuse_heads(w.heads, &HeadWeights::W_v, N, d);
}

TensorRequest block_weight_request(BlockWeightShape shape, const ModelConfig& config) {
  const std::size_t N = config.d_model, d = config.d_head, Hd = config.num_heads * d, Gd = config.kv_heads() * d;
  switch (shape) {
    case BlockWeightShape::HdN:
      return TensorRequest{{Hd, N}, {"H*d", "N"}, "H*d_head x d_model"};
    case BlockWeightShape::Hd:
      return TensorRequest{{Hd}, {"H*d"}, "H*d_head"};
    case BlockWeightShape::Gd:
      return Gd != Hd ? TensorRequest{{Gd}, {"G*d"}, "G*d_head"} : TensorRequest{{Hd}, {"H*d"}, "H*d_head"};
    case BlockWeightShape::N:
      return TensorRequest{{N}, {"N"}, "d_model"};
    case BlockWeightShape::d:
      break;
  }
  return TensorRequest{{d}, {"d"}, "d_head"};
}

AttentionWeights read_attention(LoadContext& context, const Json& value, const std::string& path,
                                const ModelConfig& config) {
  context.reader.object(value, path, kAttentionKeys);
  AttentionWeights w;
  read_projections(context, value, path, config, w);
  // W_o, the biases, the QK-norm gammas: each row of the table, in its order
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) \
  read_block_weight(context, value, path, config, #name, BlockWeightShape::shape, needs, w, w.name);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  return w;
}

}  // namespace attn

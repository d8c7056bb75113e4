#include "attn/parameters.h"

#include <cstddef>
#include <vector>

#include "model/attention_section.h"

namespace attn {

namespace {

// Calls add(id, tensor) for every non-empty weight, in the documented order. Model is
// Model or const Model, so that both lists come from this one walk.
template <typename M, typename Add>
void each_parameter(M& model, Add add) {
  const auto put = [&](ParameterId id, auto& tensor) {
    if (tensor.has_values()) add(id, tensor);
  };
  const auto attention = [&](auto& a, Stack stack, int layer, Block block) {
    const ParameterId at{WeightKind::W_q, stack, layer, block, 0, -1};
    const auto with = [&](WeightKind kind, int head = -1) {
      ParameterId id = at;
      id.kind = kind;
      id.head = head;
      return id;
    };
    if (a.heads.empty()) {
      put(with(WeightKind::W_q), a.W_q);
      put(with(WeightKind::W_k), a.W_k);
      put(with(WeightKind::W_v), a.W_v);
    }
    for (std::size_t h = 0; h < a.heads.size(); ++h) {
      put(with(WeightKind::W_q, static_cast<int>(h)), a.heads[h].W_q);
      put(with(WeightKind::W_k, static_cast<int>(h)), a.heads[h].W_k);
      put(with(WeightKind::W_v, static_cast<int>(h)), a.heads[h].W_v);
    }
    // W_o, the biases, the QK-norm gammas: the rows of the table, in its order
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) put(with(WeightKind::kind), a.name);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  };
  const auto norm = [&](auto& n, Stack stack, int layer, int number) {
    put(ParameterId{WeightKind::Gamma, stack, layer, Block::None, number, -1}, n.gamma);
    put(ParameterId{WeightKind::Beta, stack, layer, Block::None, number, -1}, n.beta);
  };
  const auto ffn = [&](auto& f, Stack stack, int layer) {
    put(ParameterId{WeightKind::W_1, stack, layer, Block::FeedForward, 0, -1}, f.W_1);
    put(ParameterId{WeightKind::b_1, stack, layer, Block::FeedForward, 0, -1}, f.b_1);
    put(ParameterId{WeightKind::W_2, stack, layer, Block::FeedForward, 0, -1}, f.W_2);
    put(ParameterId{WeightKind::b_2, stack, layer, Block::FeedForward, 0, -1}, f.b_2);
    put(ParameterId{WeightKind::W_3, stack, layer, Block::FeedForward, 0, -1}, f.W_3);
  };
  put(ParameterId{WeightKind::Embedding}, model.embedding);
  // Marian's sinusoid table is not learned (transformers keeps it with requires_grad False)
  if (model.config.positional_encoding != PositionalEncoding::SinusoidalTable)
    put(ParameterId{WeightKind::Positions}, model.positions);
  put(ParameterId{WeightKind::Positions, Stack::Decoder}, model.decoder_positions);  // BART's decoder's own
  put(ParameterId{WeightKind::TokenTypes}, model.token_types);
  norm(model.embedding_norm, Stack::None, -1, kEmbeddingNormNumber);
  norm(model.encoder_embedding_norm, Stack::Encoder, -1, kStackEmbeddingNormNumber);  // BART's layernorm_embedding
  norm(model.decoder_embedding_norm, Stack::Decoder, -1, kStackEmbeddingNormNumber);
  for (std::size_t i = 0; i < model.encoder.size(); ++i) {
    auto& l = model.encoder[i];
    const int layer = static_cast<int>(i);
    attention(l.attention, Stack::Encoder, layer, Block::SelfAttention);
    norm(l.norm1, Stack::Encoder, layer, 1);
    ffn(l.ffn, Stack::Encoder, layer);
    norm(l.norm2, Stack::Encoder, layer, 2);
  }
  norm(model.encoder_norm, Stack::Encoder, -1, 0);
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    auto& l = model.decoder[j];
    const int layer = static_cast<int>(j);
    attention(l.self_attention, Stack::Decoder, layer, Block::MaskedSelfAttention);
    norm(l.norm1, Stack::Decoder, layer, 1);
    if (model.decoder_only()) {  // no cross-attention: self-attention, norm1, ffn, norm2
      ffn(l.ffn, Stack::Decoder, layer);
      norm(l.norm2, Stack::Decoder, layer, 2);
      continue;
    }
    attention(l.cross_attention, Stack::Decoder, layer, Block::CrossAttention);
    norm(l.norm2, Stack::Decoder, layer, 2);
    ffn(l.ffn, Stack::Decoder, layer);
    norm(l.norm3, Stack::Decoder, layer, 3);
  }
  norm(model.decoder_norm, Stack::Decoder, -1, 0);
  put(ParameterId{WeightKind::TransformW}, model.output.transform_W);
  put(ParameterId{WeightKind::TransformB}, model.output.transform_b);
  norm(model.output.transform_norm, Stack::None, -1, kTransformNormNumber);
  put(ParameterId{WeightKind::OutputW}, model.output.W);
  put(ParameterId{WeightKind::OutputB}, model.output.b);
}

}  // namespace

std::vector<Parameter> parameters(Model& model) {
  std::vector<Parameter> list;
  each_parameter(model, [&](const ParameterId& id, Tensor& t) { list.push_back({id, &t}); });
  return list;
}

std::vector<ConstParameter> parameters(const Model& model) {
  std::vector<ConstParameter> list;
  each_parameter(model, [&](const ParameterId& id, const Tensor& t) { list.push_back({id, &t}); });
  return list;
}

void fuse_head_weights(Model& model) {
  const auto fuse = [&](AttentionWeights& a) {
    if (!a.heads.empty()) fuse_attention_heads(a, model.config);
  };
  for (auto& l : model.encoder) fuse(l.attention);
  for (auto& l : model.decoder) {
    fuse(l.self_attention);
    if (!model.decoder_only()) fuse(l.cross_attention);
  }
}

}  // namespace attn

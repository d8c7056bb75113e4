// Every learned tensor of a model, in one fixed order, each with where it sits: what the
// backward pass computes a gradient for, and what training updates. The order is the model
// file's (docs/model-file.md, "randn" and the draw order):
//   embedding, positions (learned ones: not Marian's fixed table), decoder_positions (BART),
//   token_types, embedding_norm gamma, beta (BERT's),
//   encoder_embedding_norm gamma, beta, decoder_embedding_norm gamma, beta (BART),
//   each encoder layer: attention W_q, W_k, W_v (or heads.0.W_q, heads.0.W_k, heads.0.W_v,
//     heads.1.W_q, ...), W_o, b_q, b_k, b_v, b_o; norm1 gamma, beta; ffn W_1, b_1, W_2, b_2, W_3;
//     norm2 gamma, beta,
//   encoder_norm gamma, beta,
//   each decoder layer: self_attention (as above), norm1, cross_attention, norm2, ffn, norm3,
//   decoder_norm gamma, beta,
//   output.transform W, b, output.transform_norm gamma, beta (BERT's MLM head),
//   output W, b.
// A tensor the model does not have (a bias not given, the norms of an attention-only layer,
// a tied output head's W) is not listed. A layer list written as one template or "randn"
// has one entry per layer, each its own tensor.
//
// Per-head weights (the file's "heads") are listed as heads.h.W_q ...: the forward pass reads
// the fused W_q made from them when the file was loaded, so a change to a head's matrix
// reaches the run through fuse_head_weights.
#ifndef ATTN_PARAMETERS_H_
#define ATTN_PARAMETERS_H_

#include <cstdint>
#include <vector>

#include "attn/model.h"
#include "attn/tensor.h"

namespace attn {

// The stack a layer belongs to.
enum class Stack : std::uint8_t { None, Encoder, Decoder };
// The part of a layer.
enum class Block : std::uint8_t { None, SelfAttention, MaskedSelfAttention, CrossAttention, FeedForward };

// Which weight of its place.
enum class WeightKind : std::uint8_t {
  Embedding,   // embedding (V, N)
  Positions,   // positions (max_len, N), learned positions only; the decoder's own (BART) at Stack::Decoder
  TokenTypes,  // token_types (types, N), BERT's segments
  W_q,
  W_k,
  W_v,
// a block's optional weights, one per row of attn/block_weights.def in its order: W_o,
// b_q, b_k, b_v, b_o, QNorm (QK-norm's gamma over each query head), KNorm
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) kind,
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  W_1,
  b_1,
  W_2,
  b_2,
  W_3,    // SwiGLU's up projection
  Gamma,  // a LayerNorm's scale
  Beta,   // a LayerNorm's shift
  OutputW,
  OutputB,
  TransformW,  // the output head's transform (N, N), BERT's MLM head
  TransformB,  // its bias (N,)
};

// The norms outside the stacks (Stack::None, layer -1) are told apart by their number: the
// embeddings' (embedding_norm) and the output head's transform's (output.transform_norm).
constexpr int kEmbeddingNormNumber = 1;
constexpr int kTransformNormNumber = 2;

// The number of a stack's embedding norm (Model::encoder_embedding_norm, BART's
// layernorm_embedding) among its norms, in its ParameterId and its entry's StepId (layer -1,
// as a stack's final norm, which is number 0): "encoder_embedding_norm.gamma".
constexpr int kStackEmbeddingNormNumber = -1;

// Where a weight sits: its kind, and (for the weights inside the stacks) the stack, the
// layer (-1 for a stack's final norm), the block (attention blocks and the feed-forward
// network; None for norms), the norm's number (norm1, norm2, norm3; 0 for a final norm)
// and the head (per-head W_q, W_k, W_v; -1 otherwise). Named as the model file's path
// ("encoder.0.attention.heads.1.W_q") by parameter_name (attn/trace.h).
struct ParameterId {
  WeightKind kind = WeightKind::Embedding;
  Stack stack = Stack::None;
  int layer = -1;
  Block block = Block::None;
  int number = 0;
  int head = -1;

  bool operator==(const ParameterId& o) const {
    return kind == o.kind && stack == o.stack && layer == o.layer && block == o.block && number == o.number &&
           head == o.head;
  }
  bool operator!=(const ParameterId& o) const { return !(*this == o); }
};

struct Parameter {
  ParameterId id;
  Tensor* tensor;
};
struct ConstParameter {
  ParameterId id;
  const Tensor* tensor;
};

// Every weight of `model` in the order above. The pointers stay valid while the model's
// layers are neither added nor removed.
std::vector<Parameter> parameters(Model& model);
std::vector<ConstParameter> parameters(const Model& model);

// Remakes the fused W_q, W_k, W_v of every attention block given per head from its heads'
// matrices (the loader does it once; training after every update).
void fuse_head_weights(Model& model);

}  // namespace attn

#endif  // ATTN_PARAMETERS_H_

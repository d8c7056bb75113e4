#include "attn/model.h"

namespace attn {

namespace {

std::size_t attention_parameters(const AttentionWeights& a) {
  return a.W_q.size() + a.W_k.size() + a.W_v.size() + a.W_o.size() + a.b_q.size() + a.b_k.size() + a.b_v.size() +
         a.b_o.size();
}
std::size_t norm_parameters(const NormWeights& n) { return n.gamma.size() + n.beta.size(); }
std::size_t ffn_parameters(const FeedForwardWeights& f) {
  return f.W_1.size() + f.b_1.size() + f.W_2.size() + f.b_2.size();
}

}  // namespace

std::size_t parameter_count(const Model& m) {
  std::size_t n = m.embedding.size() + m.positions.size() + m.output.W.size() + m.output.b.size();
  // An attention-only encoder layer has no norms or feed-forward to count.
  for (const auto& l : m.encoder)
    n += attention_parameters(l.attention) +
         (l.full ? norm_parameters(l.norm1) + norm_parameters(l.norm2) + ffn_parameters(l.ffn) : 0);
  for (const auto& l : m.decoder)
    n += attention_parameters(l.self_attention) + attention_parameters(l.cross_attention) + norm_parameters(l.norm1) +
         norm_parameters(l.norm2) + norm_parameters(l.norm3) + ffn_parameters(l.ffn);
  return n + norm_parameters(m.encoder_norm) + norm_parameters(m.decoder_norm);
}

}  // namespace attn

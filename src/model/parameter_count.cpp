// The model's learned tensors, named by their path in the model file, and their count.
#include <fmt/format.h>

#include "attn/model.h"

namespace attn {

namespace {

void add(std::vector<NamedParameter>& out, const std::string& name, const Tensor& t) {
  if (!t.data.empty()) out.push_back({name, &t});
}

void add_attention(std::vector<NamedParameter>& out, const std::string& path, const AttentionWeights& a) {
  for (const auto& [key, t] : {std::pair<const char*, const Tensor*>{"W_q", &a.W_q},
                               {"W_k", &a.W_k},
                               {"W_v", &a.W_v},
                               {"W_o", &a.W_o},
                               {"b_q", &a.b_q},
                               {"b_k", &a.b_k},
                               {"b_v", &a.b_v},
                               {"b_o", &a.b_o}})
    add(out, path + "." + key, *t);
}

void add_norm(std::vector<NamedParameter>& out, const std::string& path, const NormWeights& n) {
  add(out, path + ".gamma", n.gamma);
  add(out, path + ".beta", n.beta);
}

void add_ffn(std::vector<NamedParameter>& out, const std::string& path, const FeedForwardWeights& f) {
  add(out, path + ".W_1", f.W_1);
  add(out, path + ".b_1", f.b_1);
  add(out, path + ".W_2", f.W_2);
  add(out, path + ".b_2", f.b_2);
  add(out, path + ".W_3", f.W_3);
}

}  // namespace

std::vector<NamedParameter> model_parameters(const Model& m) {
  std::vector<NamedParameter> out;
  add(out, "embedding", m.embedding);
  add(out, "positions", m.positions);
  for (std::size_t i = 0; i < m.encoder.size(); ++i) {
    const auto& l = m.encoder[i];
    const std::string path = fmt::format("encoder.{}", i);
    add_attention(out, path + ".attention", l.attention);
    // An attention-only encoder layer has no norms or feed-forward.
    if (!l.full) continue;
    add_norm(out, path + ".norm1", l.norm1);
    add_ffn(out, path + ".ffn", l.ffn);
    add_norm(out, path + ".norm2", l.norm2);
  }
  add_norm(out, "encoder_norm", m.encoder_norm);
  for (std::size_t j = 0; j < m.decoder.size(); ++j) {
    const auto& l = m.decoder[j];
    const std::string path = fmt::format("decoder.{}", j);
    add_attention(out, path + ".self_attention", l.self_attention);
    add_norm(out, path + ".norm1", l.norm1);
    if (m.decoder_only()) {
      add_ffn(out, path + ".ffn", l.ffn);
      add_norm(out, path + ".norm2", l.norm2);
      continue;
    }
    add_attention(out, path + ".cross_attention", l.cross_attention);
    add_norm(out, path + ".norm2", l.norm2);
    add_ffn(out, path + ".ffn", l.ffn);
    add_norm(out, path + ".norm3", l.norm3);
  }
  add_norm(out, "decoder_norm", m.decoder_norm);
  add(out, "output.W", m.output.W);
  add(out, "output.b", m.output.b);
  return out;
}

std::size_t parameter_count(const Model& m) {
  std::size_t n = 0;
  for (const auto& p : model_parameters(m)) n += p.tensor->size();
  return n;
}

}  // namespace attn

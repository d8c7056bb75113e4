// BERT (transformers' models/bert/modeling_bert.py: BertModel, BertForMaskedLM and
// BertForPreTraining's masked-LM half): word + learned position + token-type embeddings and
// their LayerNorm (BertEmbeddings), post-norm encoder layers of bidirectional self-attention
// (no mask; a batch's padding only) and the feed-forward network with GELU in its exact erf
// form (BertLayer), then the masked-LM head (BertLMPredictionHead: dense, GELU, LayerNorm,
// the decoder tied to the word embeddings plus cls.predictions.bias). A BertModel file has
// no head: its run ends with the encoder's output.
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// Whether the class has the masked-LM head (cls.predictions); BertModel is the encoder alone.
bool has_mlm_head(const std::string& hf_class) { return hf_class != "BertModel"; }

// The fields of BertConfig that change what is computed, which attn does not compute.
void check_unsupported(const ConfigFields& f) {
  const std::string positions = f.string("position_embedding_type", "absolute");
  if (positions != "absolute")
    f.fail("position_embedding_type",
           fmt::format("\"{}\" is not supported (attn adds learned absolute positions: \"absolute\")", positions));
  if (f.boolean("is_decoder", false))
    f.fail("is_decoder", "true is not supported: attn reads BERT as a bidirectional encoder (no causal mask)");
  if (f.boolean("add_cross_attention", false))
    f.fail("add_cross_attention", "true is not supported: attn reads BERT as an encoder alone");
}

// BertConfig (configuration_bert.py), with its defaults: vocab_size 30522, hidden_size 768,
// num_hidden_layers 12, num_attention_heads 12, intermediate_size 3072, hidden_act "gelu"
// (the exact erf form), max_position_embeddings 512, type_vocab_size 2, layer_norm_eps
// 1e-12, tie_word_embeddings true. An encoder alone, post-norm, learned positions.
CheckpointConfig bert_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 30522, kMaxVocab);
  m.d_model = f.size("hidden_size", 768, kMaxWidth);
  c.num_layers = f.size("num_hidden_layers", 12);
  m.num_heads = f.size("num_attention_heads", 12, kMaxWidth);
  if (m.d_model % m.num_heads != 0)
    f.fail("num_attention_heads",
           fmt::format("expected a divisor of hidden_size = {}, found {}", m.d_model, m.num_heads));
  m.num_kv_heads = m.num_heads;
  m.d_head = m.d_model / m.num_heads;
  m.d_ff = f.size("intermediate_size", 3072, 64 * kMaxWidth);
  c.max_positions = f.size("max_position_embeddings", 512, kMaxVocab);
  (void)f.size("type_vocab_size", 2, kMaxVocab);  // read now: a bad one is refused before any weight
  m.layer_norm_eps = f.positive_number("layer_norm_eps", 1e-12);
  const std::string activation = f.string("hidden_act", "gelu");
  if (activation != "gelu" && activation != "relu" && activation != "gelu_new" && activation != "gelu_pytorch_tanh")
    f.fail("hidden_act", fmt::format("\"{}\" is not supported (attn computes gelu, relu, gelu_new and "
                                     "gelu_pytorch_tanh)",
                                     activation));
  m.activation = activation == "gelu"   ? Activation::GELU
                 : activation == "relu" ? Activation::ReLU
                                        : Activation::GELUTanh;
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
  check_unsupported(f);
  m.causal = false;  // bidirectional: every position sees every other
  m.norm_first = false;
  m.norm = Norm::LayerNorm;
  m.positional_encoding = PositionalEncoding::Learned;
  m.max_len = c.max_positions;
  m.num_layers = c.num_layers;
  m.num_decoder_layers = 0;
  m.architecture = Architecture::Encoder;
  m.architecture_given = true;
  return c;
}

// A LayerNorm's weights under its current names (.weight, .bias) or the old checkpoints'
// (.gamma, .beta), which transformers renames as it loads them.
void add_layer_norm(WeightPlanner& p, const CheckpointFiles& files, NormWeights& norm, const std::string& at,
                    const std::string& name, std::size_t N) {
  const bool legacy = !files.find(name + ".weight").tensor && files.find(name + ".gamma").tensor;
  p.add(norm.gamma, at + ".gamma", name + (legacy ? ".gamma" : ".weight"), {N}, "hidden_size", {"N"});
  p.add(norm.beta, at + ".beta", name + (legacy ? ".beta" : ".bias"), {N}, "hidden_size", {"N"});
}

// modeling_bert.py's weights: nn.Linear weights stored (out, in), read transposed. What a
// checkpoint may hold besides them is bert_known's.
void bert_weights(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const ModelConfig& m = c.model;
  const std::size_t N = m.d_model, F = m.d_ff, V = c.vocab_size;
  const std::size_t types = c.fields().size("type_vocab_size", 2, kMaxVocab);
  // BertForMaskedLM and BertForPreTraining nest the encoder under "bert."; BertModel does not
  const std::string b = files.find("bert.embeddings.word_embeddings.weight").tensor ? "bert." : "";
  const std::string e = b + "embeddings.";
  p.add(model.embedding, "embedding", e + "word_embeddings.weight", {V, N}, "vocab_size x hidden_size", {"V", "N"});
  p.add(model.positions, "positions", e + "position_embeddings.weight", {c.max_positions, N},
        "max_position_embeddings x hidden_size", {"S", "N"});
  p.add(model.token_types, "token_types", e + "token_type_embeddings.weight", {types, N},
        "type_vocab_size x hidden_size", {"types", "N"});
  add_layer_norm(p, files, model.embedding_norm, "embedding_norm", e + "LayerNorm", N);
  model.encoder.resize(c.num_layers);
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string s = fmt::format("{}encoder.layer.{}.", b, i), at = fmt::format("encoder.{}.", i);
    EncoderLayerWeights& l = model.encoder[i];
    l.full = true;
    AttentionWeights& a = l.attention;
    const auto linear = [&](Tensor& w, Tensor& bias, const std::string& name, const std::string& bias_name,
                            const std::string& stored, std::size_t out, std::size_t in, const char* words,
                            AxisNames axes) {
      p.add(w, at + name, s + stored + ".weight", {out, in}, words, axes, StoredLayout::Transposed);
      p.add(bias, at + bias_name, s + stored + ".bias", {out}, out == N ? "hidden_size" : "intermediate_size",
            {axes[1]});
    };
    linear(a.W_q, a.b_q, "attention.W_q", "attention.b_q", "attention.self.query", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_k, a.b_k, "attention.W_k", "attention.b_k", "attention.self.key", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_v, a.b_v, "attention.W_v", "attention.b_v", "attention.self.value", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_o, a.b_o, "attention.W_o", "attention.b_o", "attention.output.dense", N, N, "hidden_size x hidden_size",
           {"H*d", "N"});
    add_layer_norm(p, files, l.norm1, at + "norm1", s + "attention.output.LayerNorm", N);
    linear(l.ffn.W_1, l.ffn.b_1, "ffn.W_1", "ffn.b_1", "intermediate.dense", F, N, "intermediate_size x hidden_size",
           {"N", "F"});
    linear(l.ffn.W_2, l.ffn.b_2, "ffn.W_2", "ffn.b_2", "output.dense", N, F, "hidden_size x intermediate_size",
           {"F", "N"});
    add_layer_norm(p, files, l.norm2, at + "norm2", s + "output.LayerNorm", N);
  }
  if (!has_mlm_head(c.hf_class)) return;
  OutputWeights& o = model.output;
  o.present = true;
  o.fills_in = true;
  o.tied = c.tie_word_embeddings;
  const std::string h = "cls.predictions.";
  p.add(o.transform_W, "output.transform.W", h + "transform.dense.weight", {N, N}, "hidden_size x hidden_size",
        {"N", "N"}, StoredLayout::Transposed);
  p.add(o.transform_b, "output.transform.b", h + "transform.dense.bias", {N}, "hidden_size", {"N"});
  add_layer_norm(p, files, o.transform_norm, "output.transform_norm", h + "transform.LayerNorm", N);
  if (!o.tied)
    p.add(o.W, "output.W", h + "decoder.weight", {V, N}, "vocab_size x hidden_size", {"N", "V"},
          StoredLayout::Transposed);
  p.add(o.b, "output.b", h + "bias", {V}, "vocab_size", {"V"});
}

// What a BERT checkpoint may hold that attn does not use ("{L}": a layer's number): the
// pooler (the [CLS] row's sentence vector for classifiers), BertForPreTraining's
// next-sentence head, the int64 position_ids buffer (0, 1, 2, ...), and a head's decoder
// stored again when it is tied (the word embeddings) with its bias (cls.predictions.bias
// again). BertModel has no cls. tensors at all.
KnownTensors bert_known(const CheckpointConfig& c, const CheckpointFiles& files) {
  const std::string b = files.find("bert.embeddings.word_embeddings.weight").tensor ? "bert." : "";
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {b + "pooler.dense.weight", b + "pooler.dense.bias", b + "embeddings.position_ids"};
  known.layer_prefix = b + "encoder.layer.{L}.";
  known.layers_field = "num_hidden_layers";
  if (has_mlm_head(c.hf_class)) {
    known.unused.insert(known.unused.end(),
                        {"cls.seq_relationship.weight", "cls.seq_relationship.bias", "cls.predictions.decoder.bias"});
    if (c.tie_word_embeddings) known.unused.push_back("cls.predictions.decoder.weight");
  }
  return known;
}

// BertForMaskedLM.forward (BertModel.forward without the head): the prompt is one sentence
// (token type 0 everywhere), or a batch padded at the end.
Tensor bert_forward(const Model& model, Program& run) {
  // BertEmbeddings: LayerNorm(word_embeddings(ids) + token_type_embeddings(0) + position_embeddings)
  Traced x = run.embedding_norm(run.input(Sequence::Source));
  // no causal mask: bidirectional; a padded batch's keys hidden, as BERT's attention_mask does
  const std::optional<Traced> mask = run.self_mask(x, Stack::Encoder);
  for (std::size_t l = 0; l < model.encoder.size(); ++l) {
    // BertLayer: x = LayerNorm(x + attention(x)); x = LayerNorm(x + output(GELU(intermediate(x))))
    x = encoder_layer(x, model.encoder[l], mask ? &*mask : nullptr, model.config,
                      run.layer(Sequence::Source, Stack::Encoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Encoder);
  }
  // cls.predictions: LayerNorm(GELU(dense(x))) · word_embeddingsᵀ + bias; BertModel: the encoder's output
  return model.output.present ? run.head(x, Sequence::Source) : x.value;
}

}  // namespace

Family bert_family() {
  return {"bert",      {"BertForMaskedLM", "BertForPreTraining", "BertModel"}, bert_config, bert_weights, bert_known,
          bert_forward};
}

}  // namespace attn

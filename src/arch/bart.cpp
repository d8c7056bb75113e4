// BART (transformers' models/bart/modeling_bart.py, BartForConditionalGeneration): the
// paper's encoder-decoder with learned positions (each stack its own table, read from row 2:
// BartLearnedPositionalEmbedding's offset), a LayerNorm of each stack's input
// (layernorm_embedding), post-norm layers with GELU, the head tied to the shared embeddings
// plus final_logits_bias.
#include <optional>

#include <fmt/format.h>

#include "arch/bart_layers.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// BartLearnedPositionalEmbedding: num_embeddings + 2 rows; position p reads row p + 2.
constexpr std::size_t kPositionOffset = 2;

// BartConfig: vocab_size 50265, pad_token_id 1, decoder_start_token_id 2, the rest as
// read_seq2seq_config says; learned positions, the embedding norm.
CheckpointConfig bart_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c = read_seq2seq_config(f, {50265, 1, 2});
  c.model.positional_encoding = PositionalEncoding::Learned;
  return c;
}

// modeling_bart.py's weights: the shared table, each stack's positions past their first two
// rows and its layernorm_embedding, then the layers and the head (bart_layers.cpp).
void bart_weights(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const std::size_t N = c.model.d_model, V = c.vocab_size, P = c.max_positions;
  p.add(model.embedding, "embedding", shared_embedding_name(files), {V, N}, "vocab_size x d_model", {"V", "N"});
  const struct {
    Tensor* positions;
    NormWeights* norm;
    const char *name, *stack;
  } stacks[] = {{&model.positions, &model.encoder_embedding_norm, "positions", "encoder"},
                {&model.decoder_positions, &model.decoder_embedding_norm, "decoder_positions", "decoder"}};
  for (const auto& s : stacks) {
    const std::string prefix = fmt::format("model.{}.", s.stack);
    p.add(*s.positions, s.name, prefix + "embed_positions.weight", {P + kPositionOffset, N},
          "(max_position_embeddings + 2) x d_model", {"S", "N"}, StoredLayout::Rows, kPositionOffset,
          P + kPositionOffset);
    p.add(s.norm->gamma, fmt::format("{}_embedding_norm.gamma", s.stack), prefix + "layernorm_embedding.weight", {N},
          "d_model", {"N"});
    p.add(s.norm->beta, fmt::format("{}_embedding_norm.beta", s.stack), prefix + "layernorm_embedding.bias", {N},
          "d_model", {"N"});
  }
  map_seq2seq_layers(c, files, model, p);
}

// What a BART checkpoint may hold that attn does not read: seq2seq_known's.
KnownTensors bart_known(const CheckpointConfig& c, const CheckpointFiles&) { return seq2seq_known(c); }

// A stack's input, then its layernorm_embedding: hidden = LN(E[ids] (· √N) + P[pos + 2]).
Traced normed_input(const Model& model, Program& run, Sequence sequence) {
  const bool decoder = sequence == Sequence::Target;
  const Stack stack = decoder ? Stack::Decoder : Stack::Encoder;
  return layer_norm_step(run.input(sequence), decoder ? model.decoder_embedding_norm : model.encoder_embedding_norm,
                         StepKind::EmbeddingNorm, kStackEmbeddingNormNumber, model.config,
                         run.scope(sequence).layer(stack));
}

// BartForConditionalGeneration.forward, over the source and the target, or one cached new
// target token (the encoder's output then comes from the cache).
Tensor bart_forward(const Model& model, Program& run) {
  std::optional<Traced> memory;
  if (!run.step()) {
    // BartEncoder: layernorm_embedding(embed_tokens(ids) · embed_scale + embed_positions), then the layers
    Traced x = normed_input(model, run, Sequence::Source);
    const std::optional<Traced> mask = run.self_mask(x, Stack::Encoder);  // the source's padding, if any
    for (std::size_t i = 0; i < model.encoder.size(); ++i) {
      // BartEncoderLayer: x = LN(x + self_attn(x)); x = LN(x + fc2(gelu(fc1(x))))
      x = encoder_layer(x, model.encoder[i], mask ? &*mask : nullptr, model.config,
                        run.layer(Sequence::Source, Stack::Encoder, static_cast<int>(i)));
      run.layer_done(x, Stack::Encoder);
    }
    memory = x;
  }
  // BartDecoder: the same input steps over decoder_start_token_id and the target
  Traced y = normed_input(model, run, Sequence::Target);
  const std::optional<Traced> self_mask = run.self_mask(y, Stack::Decoder);  // causal
  const std::optional<Traced> cross_mask = memory ? run.cross_mask(y) : std::nullopt;
  const ModelConfig decoder = model.config.decoder_config();  // decoder_attention_heads
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    // BartDecoderLayer: masked self-attention, cross-attention to the encoder's output, the
    // feed-forward network, each followed by its residual's LayerNorm
    y = decoder_layer(y, memory ? &*memory : nullptr, model.decoder[j], self_mask ? &*self_mask : nullptr,
                      cross_mask ? &*cross_mask : nullptr, decoder,
                      run.layer(Sequence::Target, Stack::Decoder, static_cast<int>(j)));
    run.layer_done(y, Stack::Decoder);
  }
  return run.head(y, Sequence::Target);  // lm_head(y) + final_logits_bias
}

}  // namespace

Family bart_family() {
  return {"bart", {"BartForConditionalGeneration"}, bart_config, bart_weights, bart_known, bart_forward};
}

}  // namespace attn

// Marian (transformers' models/marian/modeling_marian.py, MarianMTModel: the Helsinki-NLP
// opus-mt translators): the paper's encoder-decoder. The shared embeddings times √d_model
// (scale_embedding), fixed sinusoidal positions from MarianSinusoidalPositionalEmbedding's
// table (sines in the first half of the dimensions, cosines in the second, float32),
// post-norm layers (swish, SiLU, in opus-mt), the head tied to the shared embeddings plus
// final_logits_bias. Its attention and layers are BART's (arch/bart_layers.h).
#include <optional>

#include <fmt/format.h>

#include "arch/bart_layers.h"
#include "forward/layers.h"
#include "forward/program.h"
#include "steps/positional_encoding.h"

namespace attn {

namespace {

// MarianConfig: vocab_size 58101, pad_token_id and decoder_start_token_id 58100, the rest as
// read_seq2seq_config says; the sinusoids' table.
CheckpointConfig marian_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c = read_seq2seq_config(f, {58101, 58100, 58100});
  c.model.positional_encoding = PositionalEncoding::SinusoidalTable;
  return c;
}

// modeling_marian.py's weights: the shared table; the sinusoids' table as the file stores it
// (model.encoder.embed_positions.weight, which save_pretrained leaves out but older files
// have; the decoder's is the same table) or as _init_weight builds it; then the layers and
// the head (bart_layers.cpp).
void marian_weights(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const std::size_t N = c.model.d_model, V = c.vocab_size, P = c.max_positions;
  p.add(model.embedding, "embedding", shared_embedding_name(files), {V, N}, "vocab_size x d_model", {"V", "N"});
  const char* stored = "model.encoder.embed_positions.weight";
  if (files.find(stored).tensor)
    p.add(model.positions, "positions", stored, {P, N}, "max_position_embeddings x d_model", {"S", "N"});
  else
    model.positions = sinusoidal_table(P, N);
  map_seq2seq_layers(c, files, model, p);
}

// What a Marian checkpoint may hold that attn does not read, besides BART's (seq2seq_known):
// the decoder's copy of the sinusoid table, the same numbers as the encoder's, which attn
// reads for both stacks.
KnownTensors marian_known(const CheckpointConfig& c, const CheckpointFiles&) {
  KnownTensors known = seq2seq_known(c);
  known.unused.push_back("model.decoder.embed_positions.weight");
  return known;
}

// MarianMTModel.forward, over the source and the target, or one cached new target token
// (the encoder's output then comes from the cache).
Tensor marian_forward(const Model& model, Program& run) {
  std::optional<Traced> memory;
  if (!run.step()) {
    // MarianEncoder: embed_tokens(ids) · embed_scale + embed_positions, then the layers
    Traced x = run.input(Sequence::Source);
    const std::optional<Traced> mask = run.self_mask(x, Stack::Encoder);  // the source's padding, if any
    for (std::size_t i = 0; i < model.encoder.size(); ++i) {
      // MarianEncoderLayer: x = LN(x + self_attn(x)); x = LN(x + fc2(act(fc1(x))))
      x = encoder_layer(x, model.encoder[i], mask ? &*mask : nullptr, model.config,
                        run.layer(Sequence::Source, Stack::Encoder, static_cast<int>(i)));
      run.layer_done(x, Stack::Encoder);
    }
    memory = x;
  }
  // MarianDecoder: the same input steps over decoder_start_token_id (the pad) and the target
  Traced y = run.input(Sequence::Target);
  const std::optional<Traced> self_mask = run.self_mask(y, Stack::Decoder);  // causal
  const std::optional<Traced> cross_mask = memory ? run.cross_mask(y) : std::nullopt;
  const ModelConfig decoder = model.config.decoder_config();  // decoder_attention_heads
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    // MarianDecoderLayer: masked self-attention, cross-attention to the encoder's output, the
    // feed-forward network, each followed by its residual's LayerNorm
    y = decoder_layer(y, memory ? &*memory : nullptr, model.decoder[j], self_mask ? &*self_mask : nullptr,
                      cross_mask ? &*cross_mask : nullptr, decoder,
                      run.layer(Sequence::Target, Stack::Decoder, static_cast<int>(j)));
    run.layer_done(y, Stack::Decoder);
  }
  return run.head(y, Sequence::Target);  // lm_head(y) + final_logits_bias
}

}  // namespace

Family marian_family() {
  return {"marian", {"MarianMTModel"}, marian_config, marian_weights, marian_known, marian_forward};
}

}  // namespace attn

// What BART's modeling file and Marian's share (transformers' modeling_marian.py copies its
// attention, encoder layer and decoder layer from modeling_bart.py): the configuration's
// sizes and switches, the layers' tensor names, the tied head with its final_logits_bias.
// Each family's own file (bart.cpp, marian.cpp) reads its positions, its embedding norms and
// lays out its forward program.
#ifndef ATTN_ARCH_BART_LAYERS_H_
#define ATTN_ARCH_BART_LAYERS_H_

#include <cstddef>
#include <string>

#include "arch/family.h"

namespace attn {

// The defaults of the configuration class (BartConfig, MarianConfig) where they differ.
struct Seq2SeqDefaults {
  std::size_t vocab_size;        // 50265, 58101
  std::size_t pad_token_id;      // 1, 58100
  std::size_t decoder_start_id;  // 2, 58100
};

// config.json's fields the two classes share (d_model, encoder_layers, decoder_layers,
// encoder_attention_heads, decoder_attention_heads, encoder_ffn_dim, decoder_ffn_dim,
// max_position_embeddings, activation_function, scale_embedding, tie_word_embeddings,
// decoder_start_token_id, bad_words_ids), with the class's defaults: an encoder-decoder,
// post-norm, LayerNorm eps 1e-5 (nn.LayerNorm's), the scores times head_dim^-0.5.
// InputError naming the field for what attn does not compute.
CheckpointConfig read_seq2seq_config(const ConfigFields& f, const Seq2SeqDefaults& defaults);

// The token table's name: model.shared.weight, or a tied copy when the file kept only that.
std::string shared_embedding_name(const CheckpointFiles& files);

// Every encoder and decoder layer's weights (model.encoder.layers.N.self_attn.q_proj, ...,
// fc1, fc2, the three LayerNorms), nn.Linear's (out, in) read transposed; then the head: tied
// to the shared embeddings unless tie_word_embeddings is false (lm_head.weight), plus
// final_logits_bias when the file has it (transformers takes a missing one as zeros).
void map_seq2seq_layers(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p);

// What both may hold that they do not read: the shared table's tied copies
// (model.encoder.embed_tokens.weight, model.decoder.embed_tokens.weight) and a tied head's
// lm_head.weight; the decoder's layers named model.decoder.layers.{L}.
KnownTensors seq2seq_known(const CheckpointConfig& c);

}  // namespace attn

#endif  // ATTN_ARCH_BART_LAYERS_H_

// The model a run uses: hyper-parameters and every weight, resolved from the JSON file
// ("randn" drawn, "identity" built, shapes checked). One run's input is apart from it
// (attn/run_input.h): the same Model runs any number of inputs, and nothing here is
// computed or changed by a run.
#ifndef ATTN_MODEL_H_
#define ATTN_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/step_variants.h"
#include "attn/tensor.h"
#include "attn/tokenizer.h"
#include "attn/vocabulary.h"

namespace attn {

// Which stacks a model has (model.architecture, docs/model-file.md). A file that does not
// say is an encoder-decoder when it has a "decoder", else an encoder.
enum class Architecture {
  EncoderDecoder,  // the paper's: the encoder reads the source, the decoder the target
  Encoder,         // an encoder stack alone (BERT-style; causal with an output head, GPT-like)
  DecoderOnly,     // GPT-style: decoder layers (causal self-attention, no cross-attention) over the input
};

struct ModelConfig {
  std::size_t d_model = 0;    // N
  std::size_t num_heads = 0;  // H
  std::size_t d_head = 0;     // d, default N / H
  std::size_t d_ff = 0;       // F, the feed-forward width (0: no feed-forward layers)
  bool causal = false;        // mask future positions in encoder self-attention
  std::uint32_t seed = 0;     // for "randn" values, as np.random.seed(seed)
  Activation activation = Activation::ReLU;
  bool norm_first = false;       // pre-norm (x + f(LN(x))) instead of the paper's post-norm LN(x + f(x))
  double layer_norm_eps = 1e-5;  // the eps of every norm, LayerNorm or RMSNorm
  Norm norm = Norm::LayerNorm;
  PositionalEncoding positional_encoding = PositionalEncoding::Sinusoidal;
  bool scale_embeddings = false;  // multiply looked-up embeddings by sqrt(d_model), as the paper does
  std::size_t max_len = 0;        // rows of a position table (learned, or Marian's sinusoids)
  // Scale the scores by multiplying with d^-0.5 (transformers' eager attention: BART,
  // Marian) instead of dividing by √d (the paper, NumPy's scores / np.sqrt(d)): the same
  // bits when √d is a power of two (d = 4, 16, 64, 256), one rounding apart otherwise.
  bool scores_times_inverse_root = false;
  double rope_theta = 10000.0;     // RoPE's base: pair i turns by position · theta^(-2i/d)
  RopeScaling rope_scaling;        // Llama 3.1's adjustment of those frequencies, or none
  std::size_t num_kv_heads = 0;    // G key/value heads (grouped-query attention); set to H when absent
  std::size_t sliding_window = 0;  // W: causal self-attention sees the last W positions only; 0: all
  // Which decoder layers the window applies to (GPT-Neo's "local" layers; the others see
  // every earlier position); empty: every layer
  std::vector<bool> windowed_layers;
  // RoPE turns the first rotary_dims numbers of each head and passes the rest (partial
  // rotary: GPT-NeoX's rotary_pct, Phi's partial_rotary_factor); 0: all d
  std::size_t rotary_dims = 0;
  ScoreScale score_scale = ScoreScale::InverseSqrtHead;  // scaled_scores: / sqrt(d), or as they are
  // Attention and the feed-forward network of a layer read the same input and the layer adds
  // their sum to it: x + (attn + ffn) (GPT-NeoX's use_parallel_residual, Phi). The layout
  // is the architecture's forward program's (src/arch/); the printers name its residuals.
  bool parallel_residual = false;
  // The model flags of attn/block_weights.def (qk_norm: every attention block RMS-normalizes
  // its query and key heads, Qwen3), each a bool, false unless the file says
#define ATTN_BLOCK_FLAG(name, comment) bool name = false;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_FLAG
  std::size_t num_layers = 0;                         // encoder layers when "encoder" is one template or "randn"
  std::size_t num_decoder_layers = 0;                 // decoder layers likewise (default num_layers)
  Architecture architecture = Architecture::Encoder;  // as the file says or implies
  bool architecture_given = false;                    // the file said (model.architecture)

  // The decoder's heads when they differ from the encoder's (Marian's and BART's
  // decoder_attention_heads); 0: the same H. Each then has d_model / heads features.
  std::size_t decoder_num_heads = 0;

  // G, the key/value heads: num_kv_heads, or H when it is not set.
  std::size_t kv_heads() const { return num_kv_heads ? num_kv_heads : num_heads; }
  // What a decoder layer's attention runs with: this configuration, with the decoder's own
  // heads and head size when it has them.
  ModelConfig decoder_config() const {
    ModelConfig c = *this;
    if (decoder_num_heads == 0 || decoder_num_heads == num_heads) return c;
    c.num_heads = c.num_kv_heads = decoder_num_heads;
    c.d_head = d_model / decoder_num_heads;
    c.decoder_num_heads = 0;
    return c;
  }
  // The configuration of a stack's blocks: the decoder's for the decoder.
  ModelConfig stack_config(bool decoder) const { return decoder ? decoder_config() : *this; }
  // The numbers of each head RoPE turns: rotary_dims, or all d.
  std::size_t rope_dims() const { return rotary_dims ? rotary_dims : d_head; }
  // The window of layer `layer`'s causal self-attention: W where it applies, else 0 (all).
  std::size_t window_of(int layer) const {
    if (!sliding_window || windowed_layers.empty()) return sliding_window;
    const bool windowed = layer >= 0 && static_cast<std::size_t>(layer) < windowed_layers.size() &&
                          windowed_layers[static_cast<std::size_t>(layer)];
    return windowed ? sliding_window : 0;
  }
};

// One head's own projections, as seed 002 writes them: each (N, d).
struct HeadWeights {
  Tensor W_q, W_k, W_v;
};

// Multi-head attention weights, used as X @ W (not PyTorch's x @ W.T).
struct AttentionWeights {
  Tensor W_q, W_k, W_v;  // (N, H*d): the heads' matrices side by side; W_k, W_v (N, G*d)
  // The optional weights, one Tensor per row of attn/block_weights.def, in its order, each
  // empty when the block does not have it: W_o (H*d, N), b_q (H*d,), b_k and b_v (G*d,),
  // b_o (N,), QK-norm's gammas q_norm and k_norm (d,)
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) Tensor name;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  std::vector<HeadWeights> heads;  // non-empty when the file gave per-head matrices

  bool has_output_projection() const { return W_o.has_values(); }
};

// LayerNorm's scale and shift, each (N,).
struct NormWeights {
  Tensor gamma, beta;
};

// Position-wise feed-forward: act(x @ W_1 + b_1) @ W_2 + b_2; with SwiGLU
// (silu(x @ W_1) ⊙ (x @ W_3)) @ W_2.
struct FeedForwardWeights {
  Tensor W_1;  // (N, F): SwiGLU's gate
  Tensor b_1;  // (F,), or empty
  Tensor W_2;  // (F, N)
  Tensor b_2;  // (N,), or empty
  Tensor W_3;  // (N, F): SwiGLU's up projection; empty for the other activations
};

// An encoder layer. With only "attention" in the file it is an attention block alone
// (issue 2's walkthrough); with "ffn" it is the paper's full layer.
struct EncoderLayerWeights {
  AttentionWeights attention;
  bool full = false;
  NormWeights norm1, norm2;
  FeedForwardWeights ffn;
};

// A decoder layer. In a decoder-only model it has no cross-attention (and no norm3): causal
// self-attention (norm1), then the feed-forward network (norm2).
struct DecoderLayerWeights {
  AttentionWeights self_attention;   // masked: position t sees targets 0..t
  AttentionWeights cross_attention;  // queries from the decoder, keys and values from the encoder
  NormWeights norm1, norm2, norm3;
  FeedForwardWeights ffn;
};

// The final projection to the vocabulary: logits = x @ W + b, or x @ E^T when tied.
struct OutputWeights {
  bool present = false;
  bool tied = false;
  Tensor W;  // (N, V) unless tied
  Tensor b;  // (V,), or empty (a tied head may have one too: BERT's cls.predictions.bias)
  // A transform of the hidden rows before the projection (BERT's MLM head):
  // LayerNorm(act(x @ transform_W + transform_b)), act the model's activation. Empty: none.
  Tensor transform_W;  // (N, N)
  Tensor transform_b;  // (N,)
  NormWeights transform_norm;
  // What each row's scores are for: false, the token after the row's position (a language
  // model's head); true, the token at the row's own position (a masked-LM head, BERT's: a
  // bidirectional encoder fills in a [MASK] from both sides).
  bool fills_in = false;

  bool has_transform() const { return transform_W.has_values(); }
};

// Where a model read from a Hugging Face checkpoint came from (model/hf_model.h); empty
// (no architecture) for attn's own model files.
struct CheckpointSource {
  std::string folder;        // where the files were found (a Hub name's snapshot folder)
  std::string architecture;  // config.json's, "GPT2LMHeadModel"
  // Which checkpoint tensor each weight is, by its parameter path (parameter_name,
  // attn/trace.h): "decoder.0.self_attention.W_q" -> "h.0.attn.c_attn.weight[:, 0:768]".
  std::map<std::string, std::string> tensor_names;
  std::vector<std::size_t> eos_token_ids;  // where generation stops (generation_config.json's, else config.json's)
  std::size_t max_positions = 0;           // the positions the model was made for
  std::size_t tokenizer_size = 0;          // the tokenizer's tokens; rows past them are "<row N>"
  // An encoder-decoder's first decoder token (config.json's decoder_start_token_id: Marian's
  // pad, BART's </s>), which the decoder reads before the target's pieces.
  std::optional<std::size_t> decoder_start_id;
  // Tokens generation never picks (config.json's bad_words_ids of one token: Marian's pad).
  std::vector<std::size_t> never_generated;
  // The heap the weights files' reading held at its most and let go (a pytorch_model.bin's
  // pickles): the load's share of the memory estimate (attn/run_memory.h).
  std::uint64_t reading_bytes = 0;

  bool present() const { return !architecture.empty(); }
};

struct Model;
class Program;  // one run of a forward program (src/forward/program.h)
// An architecture's forward program: lays out the model's steps on one run, a full run or a
// cached generation step alike (an architecture file of src/arch/ each; attn's own model
// files run the paper's, src/forward/transformer.cpp). Returns the run's last tensor.
using ForwardProgram = Tensor (*)(const Model& model, Program& run);

struct Model {
  std::string source;  // file name for messages ("model.json", "<default model>")
  ModelConfig config;
  // The forward program of the model's architecture; nullptr: the paper's (attn's own files).
  ForwardProgram program = nullptr;

  // Vocabulary and embedding (empty when the input is given as X).
  Vocabulary vocab;
  // What reads the input's text and tokens into ids (the forward pass asks it): the word
  // tokenizer over `vocab` for a model file; null without a vocabulary.
  std::shared_ptr<const Tokenizer> tokenizer;
  // How a decoder-only model frames text given on the command line ("prompt_template",
  // docs/model-file.md): "<BOS> {} =" reads "2 0 1" as "<BOS> 2 0 1 =". Empty: as typed.
  std::string prompt_template;
  Tensor embedding;  // (V, N)
  Tensor positions;  // (max_len, N) position table (learned, or Marian's sinusoids), or empty
  // The decoder's own learned table, (max_len, N), when each stack learned one (BART);
  // empty: the decoder reads `positions` too.
  Tensor decoder_positions;
  // BERT's token types (segments): a table of type_vocab_size rows, (types, N), whose row 0
  // is added to every position of a one-sentence input; empty for other models.
  Tensor token_types;
  // The LayerNorm of the summed embeddings, before the first layer (BERT); empty: none.
  NormWeights embedding_norm;
  // A LayerNorm of each stack's input, right after its embeddings and positions (BART's
  // layernorm_embedding); empty when the model has none.
  NormWeights encoder_embedding_norm, decoder_embedding_norm;

  std::vector<EncoderLayerWeights> encoder;
  NormWeights encoder_norm;  // optional final LayerNorm of the stack (nn.Transformer has one)
  std::vector<DecoderLayerWeights> decoder;
  NormWeights decoder_norm;
  OutputWeights output;
  CheckpointSource checkpoint;  // a Hugging Face checkpoint's origin, or empty

  // The position table a sequence reads: the decoder's own when it has one, else `positions`.
  const Tensor& position_table(bool decoder) const {
    return decoder && decoder_positions.has_values() ? decoder_positions : positions;
  }
  // Whether the model has decoder layers (an encoder-decoder's or a decoder-only model's).
  bool has_decoder() const { return !decoder.empty(); }
  // A decoder-only (GPT-style) model: its decoder layers read the input (the source
  // sequence: "tokens.ids", "input"); there is no encoder and no target.
  bool decoder_only() const { return config.architecture == Architecture::DecoderOnly; }
  // Whether a decoder reads a target sequence beside the source (an encoder-decoder).
  bool has_target() const { return has_decoder() && !decoder_only(); }
};

// A token as a learner reads it: a checkpoint's piece as its tokenizer shows it
// (display_piece: "Ġcat" and "▁cat" as "␣cat", a byte-fallback piece as "<0xE2>"); "<row N>"
// and every token of attn's own models as it is. Defined in src/model/readable_token.cpp.
std::string readable_token(const Model& model, const std::string& token);
// The vocabulary's token `id` so (its row name: "<row N>" past a checkpoint's tokenizer).
std::string readable_token(const Model& model, std::size_t id);

// How many learned numbers: the sizes of parameters() (attn/parameters.h, the one list of
// a model's weights) added up. Defined in src/model/parameter_count.cpp.
std::size_t parameter_count(const Model& model);

}  // namespace attn

#endif  // ATTN_MODEL_H_

#include "present/explanations.h"

namespace attn {

namespace {

struct Explanation {
  std::string_view kind;
  const char* text;
};

// Constant data only. Keep every line at most kExplanationWidth (88) columns; the test checks.
constexpr Explanation kExplanations[] = {
    {"tokenize",
     "The sentence is cut into tokens (words and punctuation marks) and each is looked up in\n"
     "the vocabulary: its id is its row number. A word the vocabulary lacks becomes <UNK>."},
    {"subword_tokenize",
     "The tokenizer cuts the text into pieces it learned from data: common words whole, rare\n"
     "ones in smaller pieces, down to single bytes, so no text is ever unknown. Each piece is\n"
     "looked up in the vocabulary: its id is its row number."},
    {"input",
     "The model never sees letters, only these rows of d_model numbers, one per position:\n"
     "everything after this works on them."},
    {"embedding",
     "The embedding table E has one learned row per vocabulary entry; looking a token up picks\n"
     "its row. Training moves the rows so that tokens used alike get alike rows."},
    {"positional_encoding",
     "Attention alone cannot tell \"I love AI\" from \"AI love I\". Adding a pattern of sines and\n"
     "cosines to each position stamps the order into the numbers, each pair of dimensions at\n"
     "its own speed."},
    {"learned_positions",
     "Attention alone cannot tell \"I love AI\" from \"AI love I\". The model learned one row\n"
     "per position during training; adding row p to the token at position p stamps the order\n"
     "into the numbers. Positions past the table's rows cannot be read."},
    {"projection_q",
     "Each row times the learned W_q gives its query: what this position is looking for in the\n"
     "others. One matrix product does it for every position at once."},
    {"projection_k",
     "W_k turns each row into a key: what this position offers a query. A query and a key\n"
     "pointing the same way give a large dot product, a high score."},
    {"projection_v",
     "W_v turns each row into a value: what this position hands over once a query attends to\n"
     "it. Keys decide who is listened to; values are what they say."},
    {"bias",
     "A bias is a learned row added to every position after the product: it moves all of\n"
     "Q (or K, or V) the same way, whatever the token. GPT-2 and Qwen2 have these biases;\n"
     "Llama's projections have none."},
    {"split_heads",
     "The H*d columns are cut into H blocks of d, one per head, and the head axis moves in\n"
     "front. Nothing is computed: the same numbers seen as H separate matrices."},
    {"multiple_heads",
     "Several smaller heads weigh the sentence in several ways at once (say grammar and\n"
     "meaning) for the cost of one: the d_model columns are shared out, not copied. Nothing is\n"
     "computed here."},
    {"qk_norm",
     "QK-norm divides each head's query and key rows by their root mean square and scales them\n"
     "by a learned gamma of d numbers, before RoPE: however large the projections grow, the\n"
     "scores stay in a range softmax handles (Qwen3, OLMo 2)."},
    {"rope",
     "RoPE marks positions by turning each head's queries and keys instead of adding a\n"
     "pattern: pair (i, i + d/2) of position p turns by p·θ_i. A query and a key then\n"
     "score by how far apart they are, not where they are (Llama and most recent models)."},
    {"rope_frequencies",
     "Llama 3.1 reads far longer texts than it was trained on by turning RoPE's slow pairs\n"
     "factor times slower: positions far apart then differ by angles it has seen. The fast\n"
     "pairs, which tell neighbours apart, keep their speed; those between are blended."},
    {"repeat_kv",
     "Grouped-query attention keeps fewer key and value heads (G) than query heads (H):\n"
     "each key/value head serves H/G query heads, repeated for them. Fewer keys and values\n"
     "to keep when generating; G = 1 is multi-query attention."},
    {"transpose_k",
     "To compare every query with every key in one matrix product, the keys must stand as\n"
     "columns: (queries, d) times (d, keys) gives one score per query and key."},
    {"scores",
     "Each score is a query's dot product with a key: multiply element by element and add up.\n"
     "The more the two point the same way, the larger the score."},
    {"scale",
     "A dot product of d terms grows like √d, and large scores make softmax give nearly all\n"
     "the weight to one key. Dividing by √d keeps softmax smooth, whatever the head size."},
    {"causal_mask",
     "When a model writes one token at a time, position i must not peek at later ones. The\n"
     "causal mask adds -inf above the diagonal: e^-inf is 0, so later positions get exactly\n"
     "zero weight."},
    {"sliding_window",
     "A sliding window lets each position see only the last W positions, itself included:\n"
     "the causal mask plus -inf for keys more than W-1 back. Information from further away\n"
     "still arrives, one window per layer (Mistral uses it)."},
    {"padding_mask",
     "A batch's shorter sentences are padded with <PAD>. The padding mask adds -inf to the\n"
     "scores of those keys, so they get zero weight and no real token takes anything from\n"
     "them."},
    {"softmax",
     "Softmax turns each row of scores into positive weights that add up to 1: e to each score\n"
     "over the row's total. The row's largest score is subtracted first: same weights, no\n"
     "power above e^0 = 1."},
    {"context",
     "Each position's output is the average of the value rows, weighted by its attention\n"
     "weights. This is where information moves from one position to another."},
    {"merge_heads",
     "The heads' outputs are put back side by side: positions in front again, each position's\n"
     "H blocks of d joined into one row of H*d. No arithmetic, only a new arrangement."},
    {"output_projection",
     "W_o mixes the joined head outputs into one row of d_model numbers per position, so that\n"
     "every output number can use what every head found."},
    {"residual",
     "The sub-layer's output is added to its input (the residual connection): the layer only\n"
     "learns a correction, and the signal gets through however deep the stack."},
    {"layer_norm",
     "LayerNorm rescales each row to mean 0 and variance 1, then applies a learned gain gamma\n"
     "and shift beta: the numbers stay in a steady range. (Pre-norm models apply it before the\n"
     "sub-layer.)"},
    {"rms_norm",
     "RMSNorm divides each row by its root mean square, then applies a learned gain gamma: no\n"
     "mean is subtracted and there is no shift beta. Cheaper than LayerNorm and as steady\n"
     "(Llama uses it)."},
    {"feed_forward",
     "A small two-layer network then works on each position alone: widen to d_ff numbers, bend\n"
     "them with ReLU (or GELU), narrow back to d_model, the same weights for every position."},
    {"swiglu",
     "Llama's feed-forward network is gated: two projections to d_ff numbers, a gate a and an\n"
     "up projection u; SiLU(a) = a·σ(a) decides how much of each u passes. A third matrix\n"
     "W_2 narrows back to d_model, the same weights for every position."},
    {"encoder_stack",
     "An encoder layer is attention, add & norm, feed-forward, add & norm. Stacked (six in the\n"
     "paper), each with its own weights, later layers build on earlier ones."},
    {"decoder_stack",
     "A decoder layer is masked self-attention over the target, add & norm, cross-attention to\n"
     "the encoder's output, add & norm, feed-forward, add & norm. Its output has one row per\n"
     "target position."},
    {"decoder_only_stack",
     "A decoder-only (GPT-style) layer is masked self-attention, add & norm, feed-forward, add\n"
     "& norm: a decoder without cross-attention, as there is no encoder. Each row predicts the\n"
     "token after it."},
    {"decoder_self_attention",
     "The decoder attends over the tokens so far: self-attention with the causal mask, so each\n"
     "position sees itself and the ones before it, as when generating one token at a time."},
    {"cross_attention",
     "Cross-attention takes its queries from the decoder, its keys and values from the\n"
     "encoder's output: each target position asks which source words matter for it now."},
    {"output_softmax",
     "A last linear layer gives every position one score (a logit) per vocabulary entry;\n"
     "softmax turns them into the probabilities of the next token. Greedy decoding takes the\n"
     "most probable one."},
    {"ablation",
     "Ablation asks whether a head matters: its context is replaced (by zeros, or with\n"
     "--ablate-mean by its mean over the positions) and everything after it is recomputed. A\n"
     "prediction that falls apart without the head needed it."},
    {"logit_lens",
     "The logit lens reads the model halfway: each layer's output goes through the stack's\n"
     "final norm and the output head, as if the model stopped there. Where the right token\n"
     "first comes out on top is where the model \"knows\" it."},
    {"loss",
     "Learning needs one number that says how wrong the output is: the loss L, here the mean\n"
     "of -log p(label), 0 when every right token gets probability 1. Training moves every\n"
     "weight a small step against dL/dW; the backward pass computes them all at once."},
    {"backward",
     "Going backward, each step gets dL/d(its result) and hands on dL/d(its input) by the\n"
     "chain rule, plus dL/d(its weights). A tensor used twice gets the sum of both gradients."},
};

}  // namespace

const char* explanation_for(std::string_view step_kind) {
  for (const auto& entry : kExplanations)
    if (entry.kind == step_kind) return entry.text;
  return nullptr;
}

std::vector<std::string_view> explained_step_kinds() {
  std::vector<std::string_view> kinds;
  for (const auto& entry : kExplanations) kinds.push_back(entry.kind);
  return kinds;
}

}  // namespace attn

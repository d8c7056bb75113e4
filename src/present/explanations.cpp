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
     "The sentence is cut into tokens (words and punctuation marks), and each token is looked\n"
     "up in the vocabulary to get its id, a row number. A word the vocabulary lacks becomes\n"
     "<UNK>, so the model only knows that something unknown was there."},
    {"input",
     "The input X holds one row of d_model numbers per position. Everything after this works\n"
     "on these rows: the model never sees letters, only the numbers that stand for them."},
    {"embedding",
     "The embedding matrix E has one learned row per vocabulary entry. Looking a token up is\n"
     "just picking its row, E[id]; that equals multiplying a one-hot vector by E, only faster.\n"
     "Training moves the rows so that tokens used in similar ways end up with similar rows."},
    {"positional_encoding",
     "Attention compares every position with every other at once, so on its own it cannot\n"
     "tell \"I love AI\" from \"AI love I\". Adding a different pattern of sines and cosines to\n"
     "each position stamps the word order into the numbers. Each pair of dimensions turns at\n"
     "its own speed, fast in the first pair and slower in each later one, like clock hands."},
    {"projection_q",
     "Each row is multiplied by the learned matrix W_q to make its query: what this position\n"
     "is looking for in the others. One matrix product does it for every position at once."},
    {"projection_k",
     "W_k turns each row into a key: what this position offers to a query that comes looking.\n"
     "A query and a key that point the same way give a large dot product, so a high score."},
    {"projection_v",
     "W_v turns each row into a value: the content this position hands over once a query\n"
     "attends to it. Keys decide who gets listened to; values are what they say."},
    {"split_heads",
     "The H*d columns of Q, K and V are cut into H blocks of d columns, one block per head,\n"
     "and the head axis is moved in front of the positions. Nothing is computed: the same\n"
     "numbers are viewed as H separate (S, d) matrices, so each head can attend on its own."},
    {"multiple_heads",
     "One head gives each query a single way of weighing the other positions. Several smaller\n"
     "heads let the model weigh the sentence in several ways at once, say one following\n"
     "grammar and another following meaning, for about the cost of one full-width head: the\n"
     "d_model columns are shared out between the heads, not copied."},
    {"transpose_k",
     "To compare every query with every key in one matrix product, the keys must stand as\n"
     "columns: K^T swaps the last two axes of K, so (S, d) @ (d, T) gives the (S, T) scores."},
    {"scores",
     "Each score is the dot product of one query with one key: multiply them element by\n"
     "element and add up. The more the two vectors point the same way, the larger the score.\n"
     "Row i of the table says how well position i's query matches every position's key."},
    {"scale",
     "A dot product adds up d products, so its typical size grows like √d. Large scores make\n"
     "softmax give nearly all the weight to one key and almost none to the rest, which also\n"
     "makes learning slow. Dividing by √d keeps the scores in a range where softmax stays\n"
     "smooth, whatever the head size."},
    {"causal_mask",
     "When a model writes text one token at a time, position i must not peek at the positions\n"
     "after it. The causal mask adds -inf above the diagonal: after softmax e^-inf is 0, so\n"
     "every later position gets exactly zero weight and the earlier ones share the whole 1."},
    {"padding_mask",
     "Sentences in a batch are padded with <PAD> to the same length. The padding mask adds\n"
     "-inf to the scores of those filler keys, so they get zero weight and no real token\n"
     "takes anything from them."},
    {"softmax",
     "Softmax turns each row of scores into weights that are positive and add up to 1: raise\n"
     "e to each score, then divide by the row's total, so higher scores get a larger share.\n"
     "The row's largest score is subtracted first. That leaves the weights unchanged (the\n"
     "common factor cancels in the division) but keeps every power at most e^0 = 1, so\n"
     "nothing overflows."},
    {"context",
     "Each position's output is an average of all the value rows, weighted by its attention\n"
     "weights: mostly the values it attends to most, a little of the rest. This is where\n"
     "information actually moves from one position to another."},
    {"merge_heads",
     "The heads' outputs are put back side by side: positions in front again, then each\n"
     "position's H blocks of d numbers joined into one row of H*d. Again no arithmetic, only\n"
     "a new arrangement of the same numbers."},
    {"output_projection",
     "W_o mixes the joined head outputs into one row of d_model numbers per position. Without\n"
     "it each head's result would stay in its own columns; with it, every output number can\n"
     "use what every head found."},
    {"add_norm",
     "The sub-layer's output is added to its input (the residual connection), so the layer\n"
     "only has to learn a correction and the original signal always gets through. LayerNorm\n"
     "then rescales each row to mean 0 and variance 1 and applies a learned gain γ and shift\n"
     "β, which keeps the numbers in a steady range from one layer to the next. (Pre-norm\n"
     "models apply LayerNorm to the sub-layer's input instead, before adding.)"},
    {"feed_forward",
     "After attention has mixed information between positions, a small two-layer network\n"
     "works on each position by itself: widen to d_ff numbers, bend them with ReLU (keep the\n"
     "positive part) or its smooth cousin GELU, and narrow back to d_model. Every position\n"
     "goes through the same weights."},
    {"encoder_stack",
     "An encoder layer is attention, add & norm, feed-forward, add & norm. Stacking several\n"
     "of them (six in the paper), each with its own weights, lets later layers build on what\n"
     "earlier ones worked out. A layer's output has the same shape as its input, one row per\n"
     "position."},
    {"decoder_self_attention",
     "The decoder attends over the tokens produced so far. Its self-attention is the same\n"
     "computation as the encoder's with the causal mask added, so each position sees only\n"
     "itself and earlier ones, exactly as when generating one token at a time."},
    {"cross_attention",
     "In cross-attention the queries come from the decoder, the keys and values from the\n"
     "encoder's output. Each target position asks which source words matter for it now; this\n"
     "is how a translation looks back at the sentence being translated. The score table is\n"
     "(target length) by (source length)."},
    {"output_softmax",
     "A final linear layer gives every position one score (a logit) per vocabulary entry, and\n"
     "softmax turns those scores into probabilities for the next token. Greedy decoding takes\n"
     "the most probable token; sampling draws one from the distribution instead."},
    {"loss",
     "Learning needs one number that says how wrong the output is: the loss L. With labels it\n"
     "is the cross-entropy, the mean of -log p(label): 0 when every right token gets\n"
     "probability 1, large when it gets little. Training moves every weight a small step\n"
     "against dL/dW; the backward pass below computes dL/dW for all of them at once."},
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

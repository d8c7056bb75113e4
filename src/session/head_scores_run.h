// attn heads' runs (docs/heads.md): the sequence to measure on when none is given (a random
// segment of the vocabulary, twice), the run that records every attention head's weights,
// each self-attention head's scores (analysis/head_scores.h), and with --ablate the next
// token at each position without and with the ablation. present/print_heads.h prints them.
#ifndef ATTN_SESSION_HEAD_SCORES_RUN_H_
#define ATTN_SESSION_HEAD_SCORES_RUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/head_scores.h"
#include "attn/run_input.h"
#include "attn/tensor.h"
#include "session/session.h"

namespace attn {

// One head's scores and where it sits.
struct ScoredHead {
  std::string block;  // "decoder.self_attention"
  int layer = 0;
  std::size_t head = 0;
  HeadScores scores;
};

// One position's next token without and with the ablation.
struct PositionChange {
  std::size_t position = 0;
  std::string after;             // the token at the position
  std::size_t unablated_id = 0;  // the unablated run's most probable next token
  double unablated_p = 0;
  double ablated_p = 0;        // that token's probability with the ablation
  std::size_t ablated_id = 0;  // the ablated run's most probable next token
  double ablated_pick_p = 0;
};

// What attn heads measured.
struct HeadsReport {
  std::vector<std::string> sequence;               // the tokens the (first) stack read
  std::optional<std::vector<std::string>> target;  // an encoder-decoder's: the decoder's
  std::vector<ScoredHead> heads;                   // every self-attention head, in the run's order
  Ablation ablation;                               // the run's (--ablate), empty without
  std::vector<PositionChange> changes;             // with an ablation: each position's next token
  // No causal mask anywhere (BERT's encoder): the heads may look ahead, so next_token and
  // last_token ([SEP]) are among their roles.
  bool bidirectional = false;
};

// Without TEXT, the session's input becomes the random repeated sequence of np.random.seed
// `seed`: <BOS> (when the vocabulary has it), then L distinct ordinary tokens, then the same
// L again, L = min(10, their number); a checkpoint's begins with its tokenizer's begin token
// (as TransformerLens's induction test) and fits in its positions. InputError when the model
// reads numbers or is given a batch.
void use_repeated_sequence(Session& session, std::uint32_t seed);
// InputError unless the session's input is one sequence.
void check_one_sequence(const Session& session);

// Runs the session's input keeping only the attention weights and the token ids, and scores
// every self-attention head; with an ablation in the input, compares each position's next
// token with `unablated` (unablated_probabilities, made before the ablation was applied).
HeadsReport measure_heads(const Session& session, const Tensor& unablated);

}  // namespace attn

#endif  // ATTN_SESSION_HEAD_SCORES_RUN_H_

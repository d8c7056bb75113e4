// The roles of attention heads, measured (docs/heads.md): each score is a mean of one
// head's attention weights w (S,S), rows the queries and columns the keys, over the
// positions where the role is defined, computed from w and the sequence's token ids alone.
#ifndef ATTN_ANALYSIS_HEAD_SCORES_H_
#define ATTN_ANALYSIS_HEAD_SCORES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// A score is a mean over positions; empty when no position qualifies (a sequence of one
// token has no previous token; one with no repeated token has no induction positions).
using HeadScore = std::optional<double>;

// previous_token = mean over p >= 1 of w[p, p-1]. w: (S,S).
HeadScore previous_token_score(const Tensor& w);
// first_token = mean over p >= 1 of w[p, 0] (the attention sink).
HeadScore first_token_score(const Tensor& w);
// self = mean over p >= 1 of w[p, p].
HeadScore self_score(const Tensor& w);
// A bidirectional encoder's (BERT's) heads also look ahead (Clark et al. 2019):
// next_token = mean over p < S-1 of w[p, p+1]; last_token = mean over p < S-1 of w[p, S-1]
// (BERT's input ends with [SEP]). Under a causal mask both are 0.
HeadScore next_token_score(const Tensor& w);
HeadScore last_token_score(const Tensor& w);
// duplicate_token = mean, over the positions p whose token occurred before, of the weight
// on every earlier position q < p with tokens[q] == tokens[p].
HeadScore duplicate_token_score(const Tensor& w, const std::vector<std::size_t>& tokens);
// induction (offset 1) = mean, over the positions p whose token occurred before (q the
// latest earlier position with tokens[q] == tokens[p]), of w[p, q+1]: the token after the
// earlier occurrence, the one to copy. offset 2: w[p, q+2], over the p with q+2 <= p.
HeadScore induction_score(const Tensor& w, const std::vector<std::size_t>& tokens, std::size_t offset = 1);

// Every score of one head, in the order docs/heads.md defines them.
struct HeadScores {
  HeadScore previous_token, first_token, induction, induction_2, duplicate_token, self;
  HeadScore next_token, last_token;  // meaningful without a causal mask
};
HeadScores score_head(const Tensor& w, const std::vector<std::size_t>& tokens);

// The names of the scores, as --json writes them, in HeadScores' order, and each score by
// name: a causal model's six; a bidirectional model's (`bidirectional`) eight, with
// next_token and last_token.
const std::vector<std::string>& head_score_names(bool bidirectional = false);
HeadScore score_named(const HeadScores& scores, const std::string& name);

// The head's strongest role among the scores `head_score_names(bidirectional)` names: the
// name of its largest score when that is at least 0.5 (most of the head's weight goes
// there), else "mixed".
std::string strongest_role(const HeadScores& scores, bool bidirectional = false);

// Where a sequence lets a model copy (the induction lesson, docs/heads.md): each position p
// that has a next position (p + 1 < S) and whose token occurred before, q the latest earlier
// position with tokens[q] == tokens[p], and the token to copy there, tokens[q + 1]: the one
// that followed the current token last time. In "<BOS> x1..xL x1..xL", the second copy's
// x1..x(L-1), whose tokens to copy are x2..xL.
struct CopyTarget {
  std::size_t position = 0;
  std::size_t token = 0;
};
std::vector<CopyTarget> copy_targets(const std::vector<std::size_t>& tokens);

// How a run does at `targets`: `probabilities` (S,V), each row the next-token distribution
// of a position. right: the positions whose most probable token, the `never` ids left out
// (Vocabulary::never_written_ids), is the one to copy; mean_p: the mean probability of the
// token to copy (np.mean of them; 0 when there is no target).
struct CopyScore {
  std::size_t right = 0;
  std::size_t positions = 0;
  double mean_p = 0;
};
CopyScore score_copies(const Tensor& probabilities, const std::vector<CopyTarget>& targets,
                       const std::vector<std::size_t>& never);

}  // namespace attn

#endif  // ATTN_ANALYSIS_HEAD_SCORES_H_

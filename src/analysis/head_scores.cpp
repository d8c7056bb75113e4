#include "analysis/head_scores.h"

#include <algorithm>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {

// w must be a square (S,S) matrix of a head's weights over one sequence of `tokens`.
std::size_t checked_length(const Tensor& w, const std::vector<std::size_t>* tokens) {
  if (w.rank() != 2 || w.dim(0) != w.dim(1))
    throw InternalError(
        fmt::format("head scores: expected a head's (S,S) attention weights, found {}", shape_with_axes(w)));
  if (tokens && tokens->size() != w.dim(0))
    throw InternalError(
        fmt::format("head scores: expected {} token ids, one per position, found {}", w.dim(0), tokens->size()));
  return w.dim(0);
}

// The mean of the gathered values as np.mean computes it (pairwise summation), so that the
// NumPy recomputation in tests/reference/ gives the same bits.
HeadScore mean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return pairwise_sum(values.data(), values.size()) / static_cast<double>(values.size());
}

double weight(const Tensor& w, std::size_t query, std::size_t key) { return w.data[query * w.dim(1) + key]; }

// The latest earlier position holding the same token as position p, if any.
std::optional<std::size_t> latest_earlier(const std::vector<std::size_t>& tokens, std::size_t p) {
  for (std::size_t q = p; q-- > 0;)
    if (tokens[q] == tokens[p]) return q;
  return std::nullopt;
}

}  // namespace

HeadScore previous_token_score(const Tensor& w) {
  const std::size_t S = checked_length(w, nullptr);
  std::vector<double> values;
  for (std::size_t p = 1; p < S; ++p) values.push_back(weight(w, p, p - 1));
  return mean_of(values);
}

HeadScore first_token_score(const Tensor& w) {
  const std::size_t S = checked_length(w, nullptr);
  std::vector<double> values;
  for (std::size_t p = 1; p < S; ++p) values.push_back(weight(w, p, 0));
  return mean_of(values);
}

HeadScore self_score(const Tensor& w) {
  const std::size_t S = checked_length(w, nullptr);
  std::vector<double> values;
  for (std::size_t p = 1; p < S; ++p) values.push_back(weight(w, p, p));
  return mean_of(values);
}

HeadScore next_token_score(const Tensor& w) {
  const std::size_t S = checked_length(w, nullptr);
  std::vector<double> values;
  for (std::size_t p = 0; p + 1 < S; ++p) values.push_back(weight(w, p, p + 1));
  return mean_of(values);
}

HeadScore last_token_score(const Tensor& w) {
  const std::size_t S = checked_length(w, nullptr);
  std::vector<double> values;
  for (std::size_t p = 0; p + 1 < S; ++p) values.push_back(weight(w, p, S - 1));
  return mean_of(values);
}

HeadScore duplicate_token_score(const Tensor& w, const std::vector<std::size_t>& tokens) {
  const std::size_t S = checked_length(w, &tokens);
  std::vector<double> values;
  for (std::size_t p = 1; p < S; ++p) {
    std::vector<double> on_duplicates;
    for (std::size_t q = 0; q < p; ++q)
      if (tokens[q] == tokens[p]) on_duplicates.push_back(weight(w, p, q));
    if (!on_duplicates.empty()) values.push_back(pairwise_sum(on_duplicates.data(), on_duplicates.size()));
  }
  return mean_of(values);
}

HeadScore induction_score(const Tensor& w, const std::vector<std::size_t>& tokens, std::size_t offset) {
  const std::size_t S = checked_length(w, &tokens);
  std::vector<double> values;
  for (std::size_t p = 1; p < S; ++p) {
    const std::optional<std::size_t> q = latest_earlier(tokens, p);
    if (q && *q + offset <= p) values.push_back(weight(w, p, *q + offset));
  }
  return mean_of(values);
}

HeadScores score_head(const Tensor& w, const std::vector<std::size_t>& tokens) {
  return {previous_token_score(w),
          first_token_score(w),
          induction_score(w, tokens, 1),
          induction_score(w, tokens, 2),
          duplicate_token_score(w, tokens),
          self_score(w),
          next_token_score(w),
          last_token_score(w)};
}

const std::vector<std::string>& head_score_names(bool bidirectional) {
  static const std::vector<std::string> causal = {"previous_token", "first_token",     "induction",
                                                  "induction_2",    "duplicate_token", "self"};
  static const std::vector<std::string> both = {"previous_token",  "first_token", "induction",  "induction_2",
                                                "duplicate_token", "self",        "next_token", "last_token"};
  return bidirectional ? both : causal;
}

HeadScore score_named(const HeadScores& s, const std::string& name) {
  const HeadScore* in_order[] = {&s.previous_token,  &s.first_token, &s.induction,  &s.induction_2,
                                 &s.duplicate_token, &s.self,        &s.next_token, &s.last_token};
  const std::vector<std::string>& names = head_score_names(true);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return *in_order[i];
  throw InternalError(fmt::format("head scores: no score named \"{}\"", name));
}

std::string strongest_role(const HeadScores& scores, bool bidirectional) {
  std::string best = "mixed";
  double best_value = 0.5;
  for (const std::string& name : head_score_names(bidirectional)) {
    const HeadScore s = score_named(scores, name);
    if (s && *s >= best_value) {
      best = name;
      best_value = *s;
    }
  }
  return best;
}

std::vector<CopyTarget> copy_targets(const std::vector<std::size_t>& tokens) {
  std::vector<CopyTarget> targets;
  for (std::size_t p = 1; p + 1 < tokens.size(); ++p)
    if (const std::optional<std::size_t> q = latest_earlier(tokens, p)) targets.push_back({p, tokens[*q + 1]});
  return targets;
}

CopyScore score_copies(const Tensor& probabilities, const std::vector<CopyTarget>& targets,
                       const std::vector<std::size_t>& never) {
  if (probabilities.rank() != 2)
    throw InternalError(
        fmt::format("copy score: expected (S,V) probabilities, found {}", shape_with_axes(probabilities)));
  const std::size_t S = probabilities.dim(0), V = probabilities.dim(1);
  CopyScore score;
  std::vector<double> p_right;
  for (const CopyTarget& t : targets) {
    if (t.position >= S || t.token >= V)
      throw InternalError(
          fmt::format("copy score: position {} or token {} outside (S={},V={})", t.position, t.token, S, V));
    const double* row = probabilities.data.data() + t.position * V;
    std::size_t best = V;
    for (std::size_t v = 0; v < V; ++v)
      if (std::find(never.begin(), never.end(), v) == never.end() && (best == V || row[v] > row[best])) best = v;
    score.right += best == t.token;
    p_right.push_back(row[t.token]);
  }
  score.positions = targets.size();
  score.mean_p = mean_of(p_right).value_or(0.0);
  return score;
}

}  // namespace attn

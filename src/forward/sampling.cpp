// The next-token choice: greedy, or a seeded draw after temperature, top-k and top-p
// (attn/generate.h; docs/generation.md writes the same procedure in NumPy).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "attn/error.h"
#include "attn/generate.h"
#include "core/numpy_random.h"

namespace attn {

namespace {

// softmax of z over the entries that are not -inf; 0 elsewhere.
std::vector<double> softmax(const std::vector<double>& z) {
  const double top = *std::max_element(z.begin(), z.end());
  std::vector<double> p(z.size(), 0.0);
  double sum = 0;
  for (std::size_t i = 0; i < z.size(); ++i)
    if (std::isfinite(z[i])) sum += p[i] = std::exp(z[i] - top);
  for (double& v : p) v /= sum;
  return p;
}

}  // namespace

SamplingResult choose_next_token(const double* logits, std::size_t V, const SamplingOptions& options,
                                 const std::vector<std::size_t>& never, NumpyRandom* rng) {
  // logits is (V,) -> one token id
  constexpr double kRemoved = -std::numeric_limits<double>::infinity();
  std::vector<double> z(logits, logits + V);
  for (std::size_t id : never)
    if (id < V) z[id] = kRemoved;
  if (std::none_of(z.begin(), z.end(), [](double v) { return std::isfinite(v); }))
    throw InternalError("choose_next_token: every token is one the model never writes");
  SamplingResult r;
  r.probabilities = softmax(z);
  if (options.temperature == 0) {  // greedy: the first largest
    r.id = static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());
    r.distribution = r.probabilities;
    r.kept_after_top_k = r.kept = V - never.size();
    return r;
  }
  // 1. temperature: logits / T (T < 1 sharpens, T > 1 flattens). A T so small that a
  // logit / T overflows (1e-320) is the greedy limit: measured from the largest logit,
  // (z - max) / T is 0 for the largest and -inf or far below for the others, never NaN.
  const double largest = *std::max_element(z.begin(), z.end());
  bool overflowed = false;
  for (double& v : z) {
    const bool finite_before = std::isfinite(v);
    v /= options.temperature;
    overflowed = overflowed || (finite_before && !std::isfinite(v));
  }
  if (overflowed)
    for (std::size_t i = 0; i < V; ++i) z[i] = (logits[i] - largest) / options.temperature;
  for (std::size_t id : never)
    if (id < V) z[id] = kRemoved;
  // 2. top-k: remove the logits below the K-th largest (ties with it stay)
  std::size_t finite = 0;
  for (double v : z) finite += std::isfinite(v) ? 1 : 0;
  if (options.top_k > 0 && options.top_k < finite) {
    std::vector<double> sorted(z);
    std::sort(sorted.begin(), sorted.end(), std::greater<double>());
    const double kth = sorted[options.top_k - 1];
    for (double& v : z)
      if (v < kth) v = kRemoved;
  }
  for (double v : z) r.kept_after_top_k += std::isfinite(v) ? 1 : 0;
  // 3. softmax, then top-p: the most probable first (lower id on ties), kept while the
  // probability before them is below P
  std::vector<double> p = softmax(z);
  if (options.top_p < 1) {
    std::vector<std::size_t> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
    double before = 0;
    for (std::size_t i = 0; i < V; ++i) {
      const std::size_t id = order[i];
      if (i > 0 && !(before < options.top_p)) z[id] = kRemoved;
      before += p[id];
    }
    p = softmax(z);
  }
  for (double v : z) r.kept += std::isfinite(v) ? 1 : 0;
  r.distribution = p;
  // 4. the draw: u uniform in [0, 1); the first id whose cumulative probability exceeds u
  const double u = rng->random_sample();
  r.draw = u;
  double cumulative = 0;
  std::size_t last_kept = 0;
  for (std::size_t id = 0; id < V; ++id) {
    if (p[id] == 0) continue;
    last_kept = id;
    r.cumulative_before = cumulative;
    cumulative += p[id];
    r.cumulative_after = cumulative;
    if (cumulative > u) {
      r.id = id;
      return r;
    }
  }
  r.id = last_kept;  // u above the rounded total: the last token kept
  return r;
}

}  // namespace attn

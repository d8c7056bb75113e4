// Generating text one token at a time (attn generate): the next-token choice (greedy, or a
// seeded draw after temperature, top-k and top-p) and the KV cache that lets each new
// token be computed from its own row alone. docs/generation.md describes both, the draw
// precisely enough for a NumPy notebook to repeat it.
#ifndef ATTN_GENERATE_H_
#define ATTN_GENERATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"

namespace attn {

class NumpyRandom;

// How the next token is chosen from the logits (Hugging Face's semantics).
struct SamplingOptions {
  double temperature = 0;  // 0: greedy (the most probable token; no random draw)
  std::size_t top_k = 0;   // keep the K largest logits (ties with the K-th kept); 0: all
  double top_p = 1;        // keep the most probable tokens until their probability reaches P; 1: all
};

// One choice, with what the walkthrough shows of it.
struct SamplingResult {
  std::vector<double> probabilities;  // softmax(logits), the never-written tokens at 0
  std::vector<double> distribution;   // what was drawn from: after temperature, top-k, top-p (0 where removed)
  std::size_t kept_after_top_k = 0;   // tokens left by top-k (all when off)
  std::size_t kept = 0;               // tokens left after top-p
  std::optional<double> draw;         // the uniform number u in [0, 1), none when greedy
  double cumulative_before = 0;       // the chosen token's interval [before, after) of the cumulative
  double cumulative_after = 0;
  std::size_t id = 0;  // the token chosen
};

// Chooses the next token from one row of V logits. Tokens in `never` (<PAD>, <UNK>, <BOS>)
// are never chosen. Greedy (temperature 0): the largest logit, the lower id on ties; `rng`
// is not used. Otherwise: logits / T; top-k; softmax; top-p (tokens by probability, largest
// first, lower id first on ties, kept while the probability before them is below P; at
// least one); renormalized; u = rng->random_sample() (one draw per token); the token is the
// first id whose cumulative probability exceeds u (np.searchsorted(np.cumsum(p), u, "right")).
SamplingResult choose_next_token(const double* logits, std::size_t V, const SamplingOptions& options,
                                 const std::vector<std::size_t>& never, NumpyRandom* rng);

// Multiply-adds of one step: with the cache (the new row alone) and without it (a full
// pass over the whole prefix, as attn explain runs it).
struct StepCost {
  std::uint64_t with_cache = 0;
  std::uint64_t without_cache = 0;
};

// One decoder layer's cached keys or values: G heads, t positions, d numbers each, read as
// (G,t,d) (axes "H" or "G", "t", "d"). Held with room for more positions, so that a step
// writes its row in place rather than copying the cache: values as (G,room,d); keys as
// (G,d,room), the transposed layout the scores read (k_t), so that a step copies each out
// once. On shapes alone (core/shape_only.h) it keeps the shape and no numbers.
class CachedHeads {
 public:
  // Positions of room added at a time (the memory estimate counts them: reserved_bytes).
  static constexpr std::size_t kRoomStep = 64;
  explicit CachedHeads(bool keys = false) : keys_(keys) {}

  bool empty() const { return t_ == 0; }
  std::size_t length() const { return t_; }
  Shape shape() const { return {G_, t_, d_}; }  // (G,t,d)
  AxisNames axes() const { return {head_axis_, "t", "d"}; }
  // The bytes held: every position of room; or when it holds `positions`.
  std::size_t reserved_bytes() const { return reserved_bytes(t_); }
  std::size_t reserved_bytes(std::size_t positions) const { return G_ * room_for(positions) * d_ * sizeof(double); }

  // A full run's keys or values, (1,G,T,d), as the cache's whole content.
  void assign(const Tensor& heads);
  // A step's row, (1,G,1,d), after the cached positions.
  void append(const Tensor& row);
  // Positions from..t-1, (1,G,t-from,d) (axes B, G or H, T, d): what the context reads.
  Tensor heads(std::size_t from) const;
  // Positions from..t-1 transposed, (1,G,d,t-from) (axes B, G or H, d, T): what the scores read.
  Tensor transposed_heads(std::size_t from) const;
  // Every position, (G,t,d): the dump's copy.
  Tensor as_tensor() const;
  // On shapes alone: the cache at `t` positions (the memory estimate's last step).
  void set_length_of_shapes(std::size_t t) { t_ = t; }

 private:
  static std::size_t room_for(std::size_t t) { return (t + kRoomStep - 1) / kRoomStep * kRoomStep; }
  // (G,t,d) index (g, s, j) in the held layout
  std::size_t at(std::size_t g, std::size_t s, std::size_t j) const {
    return keys_ ? (g * d_ + j) * room_ + s : (g * room_ + s) * d_ + j;
  }
  void make_room(std::size_t t);

  bool keys_;
  std::size_t G_ = 0, t_ = 0, d_ = 0, room_ = 0;
  std::string head_axis_ = "H";
  TensorData numbers_;  // G * room * d, as `at` lays them out
};

// The keys and values of one decoder layer's self-attention, every position so far, (H,t,d)
// each ((G,t,d) with G key/value heads; the keys after RoPE when the model uses it); for an
// encoder-decoder also its cross-attention's over the source, (H,S,d), computed once.
struct LayerCache {
  CachedHeads k{true}, v;
  CachedHeads cross_k{true}, cross_v;
};

// The decoder of a decoder-only or encoder-decoder model, run one new token at a time with
// a KV cache. The prompt (the decoder-only input, or the encoder-decoder's source and <BOS>)
// runs once through prefill(), which keeps the keys and values as they are computed. Then
// each step() computes the new token's row alone.
class KvCacheDecoder {
 public:
  // InputError when the model cannot generate (no output head; an encoder alone). Each step
  // zeroes the context of the `ablation`'s heads (--ablate), as the prompt's run did; an
  // ablation by the mean over positions cannot be cached (every new position changes the
  // mean of all), and is refused (InputError("--ablate-mean")).
  explicit KvCacheDecoder(const Model& model, Ablation ablation = {});

  // Runs the prompt (run_model) into `trace`: as each decoder layer's attention computes
  // its keys and values (self-attention's after RoPE; cross-attention's of the source), the
  // cache keeps them, and the last position's logits. Returns the run's output.
  Tensor prefill(const RunInput& input, Trace& trace);
  // The logits (V,) of the last position of the observed run, or of the last step.
  const std::vector<double>& logits() const { return logits_; }
  // How many positions the cache holds.
  std::size_t length() const;
  const std::vector<LayerCache>& caches() const { return caches_; }

  // Feeds token `id` at position length(): its embedding, then each layer with the cache
  // (its keys and values appended), the final norm and the output head, every step recorded
  // into `trace` (one row: Q (1,H*d), scores (H,1,t+1), ...). Returns the logits.
  const std::vector<double>& step(std::size_t id, Trace& trace);
  // The multiply-adds of the last step with and without the cache.
  StepCost last_cost() const { return cost_; }
  // The cost of a step that feeds position `position`, by formula.
  StepCost cost_at(std::size_t position) const;

 private:
  const Model& model_;
  Ablation ablation_;
  std::vector<LayerCache> caches_;
  std::vector<double> logits_;
  std::size_t source_len_ = 0;
  StepCost cost_;
};

}  // namespace attn

#endif  // ATTN_GENERATE_H_

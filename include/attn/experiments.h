// Experiments on a model (docs/experiments.md): activation patching (attn patch), direct
// logit attribution (attn attribute) and the answer the logit lens gives at every layer
// (attn explain --lens --answer). Each is runs of the model's own forward program
// (run_model's): a patch is a hook replacing one activation with another run's value, and
// the runs after it see the consequence. Nothing here branches on a model's family: the
// sites are found in the tape of the model's own run (which block reads what).
#ifndef ATTN_EXPERIMENTS_H_
#define ATTN_EXPERIMENTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"

namespace attn {

// The token a command-line option names: `text` must be exactly one token of the model's
// vocabulary (" Paris", "d"); InputError at `option` naming what it is otherwise.
std::size_t single_token(const Model& model, const std::string& text, const std::string& option);

// What an experiment measures at the last position: logit(answer) - logit(wrong), or
// logit(answer) alone without a wrong token.
struct Metric {
  std::size_t answer = 0;
  std::optional<std::size_t> wrong;
  std::string answer_text, wrong_text;  // as given
  // "logit_diff" or "logit" (the JSON's "metric")
  const char* name() const { return wrong ? "logit_diff" : "logit"; }
  // The vocabulary ids a run's head computes: the answer, then the wrong token.
  std::vector<std::size_t> ids() const;
};

// Where a patch replaces an activation (docs/experiments.md):
//   ResidPre: the input of layer l at position p (the residual stream before its first block);
//   AttnOut, MlpOut: the self-attention's output (after W_o and its bias) and the
//     feed-forward's output at (l, p), before the residual add;
//   Head: head h's context vectors of layer l's self-attention at every position.
enum class SiteKind : std::uint8_t { ResidPre, AttnOut, MlpOut, Head };
const std::vector<SiteKind>& site_kinds();  // in that order
const char* site_kind_name(SiteKind kind);  // "resid_pre", "attn_out", "mlp_out", "head"
std::optional<SiteKind> site_kind_named(const std::string& name);

struct Site {
  SiteKind kind = SiteKind::ResidPre;
  Stack stack = Stack::Decoder;
  int layer = 0;
  std::size_t index = 0;  // the position, or the head for SiteKind::Head
  bool operator==(const Site& o) const {
    return kind == o.kind && stack == o.stack && layer == o.layer && index == o.index;
  }
};

// A site and the metric with it patched.
struct SiteValue {
  Site site;
  double value = 0;
};

// One site's patch worked out (--site): the numbers replaced, and the patched run's metric
// from its last hidden row.
struct SiteDetail {
  Site site;
  std::string address;     // the trace name of the entry patched ("decoder.2.output")
  Tensor corrupt, clean;   // the site's numbers in each run: (N,) at a position, (S,d) for a head
  Tensor hidden;           // the patched run's last row as the head reads it (N,)
  Tensor answer_column;    // the head's column of the answer (N,), and of the wrong token
  Tensor wrong_column;     // (empty without one)
  double answer_bias = 0;  // the head's biases of them (0 without)
  double wrong_bias = 0;
  double answer_logit = 0;  // the patched run's logits
  double wrong_logit = 0;
  double value = 0;  // the metric
};

// The layers, positions and heads a model's sites span, per stack, as its run showed them.
struct SiteStack {
  Stack stack = Stack::Decoder;
  int layers = 0;
  std::size_t positions = 0, heads = 0;
  std::vector<std::string> tokens;          // the clean run's tokens at the positions
  std::vector<std::string> corrupt_tokens;  // the corrupted run's
};

// Clean and corrupted runs of one model, then runs of the corrupted one with sites patched
// from the clean one. The two runs are made when it is constructed.
class PatchExperiment {
 public:
  struct Options {
    std::uint64_t max_memory_bytes = 0;  // 0: half the machine's memory
    // Each patched run starts at its site's layer from the corrupted run's layer outputs
    // (RunContext::resume); off, it runs every layer from the embeddings (bench/patch).
    bool resume = true;
    std::size_t max_batch = 64;  // sites run together as one batch of at most this many
  };
  // InputError when the two inputs are not one sequence each of as many tokens.
  PatchExperiment(const Model& model, const RunInput& clean, const RunInput& corrupt, const Metric& metric,
                  const Options& options);
  ~PatchExperiment();
  PatchExperiment(const PatchExperiment&) = delete;
  PatchExperiment& operator=(const PatchExperiment&) = delete;

  double clean() const;
  double corrupt() const;
  const std::vector<SiteStack>& stacks() const;
  // The sites of these kinds, stack by stack, layer by layer, at positions first..last
  // (inclusive, clipped to the sequence; every head whatever the positions).
  std::vector<Site> sites(const std::vector<SiteKind>& kinds, std::size_t first = 0, std::size_t last = SIZE_MAX) const;
  // InputError at `option` when the model has no such site.
  void check_site(const Site& site, const std::string& option) const;
  // Each site patched alone: the metric of each, in order. `progress(done, total)` is
  // called after each batch of runs.
  std::vector<double> each(const std::vector<Site>& sites,
                           const std::function<void(std::size_t, std::size_t)>& progress = {}) const;
  // The sites patched together, in one run.
  double together(const std::vector<Site>& sites) const;
  SiteDetail detail(const Site& site) const;
  // The memory the runs take, estimated before they are made (bytes).
  std::uint64_t estimated_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// What attn patch shows: the two runs' metrics and every site's.
struct PatchResult {
  Metric metric;
  double clean = 0, corrupt = 0;
  std::vector<SiteStack> stacks;
  std::vector<SiteValue> sites;
  std::optional<SiteDetail> detail;  // --site
};

// The normalised effect of a patch: (v - m_corrupt) / (m_clean - m_corrupt); 0 when the two
// runs agree (nothing to restore).
double normalised_effect(double value, double clean, double corrupt);

// Direct logit attribution (attn attribute): the final residual at the last position as the
// sum of what each component wrote to it, each through the final norm with its scale frozen
// at its value on the whole residual, projected on u = W_U[answer] - W_U[wrong].
struct AttributionComponent {
  std::string name;  // "embed", "L0H1", "L0.attn_bias", "L0.mlp", "final_norm_bias", "output_bias"
  double value = 0;
};
struct Attribution {
  std::vector<AttributionComponent> components;
  double total = 0;                 // the model's own metric, from its logits
  double scale = 0;                 // the frozen scale: 1/sigma (LayerNorm) or 1/rms (RMSNorm) of the whole residual
  bool rms = false;                 // the final norm is RMSNorm
  std::vector<std::string> tokens;  // the run's tokens
};
// InputError (at "attn attribute") for a model whose stack does not end in a final norm
// after pre-norm blocks, saying why.
Attribution attribute(const Model& model, const RunInput& input, const Metric& metric);

// The answer after every layer (attn explain --lens --answer): from the logit lens's entries
// of a kept trace, at the last position of batch item `batch`.
struct LayerAnswer {
  int layer = 0;
  std::size_t rank = 0;  // 1: the most probable token
  double logit = 0, probability = 0;
};
std::vector<LayerAnswer> answer_by_layer(const Trace& trace, std::size_t answer, std::size_t batch = 0);

}  // namespace attn

#endif  // ATTN_EXPERIMENTS_H_

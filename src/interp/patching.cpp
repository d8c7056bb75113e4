// Activation patching: the clean and the corrupted run, then runs of the corrupted input with
// sites replaced by the clean run's numbers (hooks on the entries, attn/trace.h), through the
// model's own forward program. Sites at one layer run together as the items of one batch,
// each item patching its own site; with `resume`, the run starts at that layer from the
// corrupted run's layer outputs (RunContext::resume) and its head computes the metric's logits
// alone (RunContext::head_ids).
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "attn/step_roles.h"
#include "forward/program.h"
#include "interp/patch_sites.h"
#include "model/byte_size.h"

namespace attn {

namespace {

// `input` B times: the items of one batch.
RunInput replicated(const RunInput& input, std::size_t B) {
  RunInput out = input;
  const auto repeat = [B](TokenInput& t) {
    if (!t.texts.empty()) t.texts.assign(B, t.texts.front());
    if (!t.tokens.empty()) t.tokens.assign(B, t.tokens.front());
    t.batched = B > 1;
  };
  repeat(out.source_tokens);
  repeat(out.target_tokens);
  out.batched = B > 1;
  out.lens = false;
  out.ablation = Ablation{};
  return out;
}

// A site of one batch item: where its clean numbers go.
struct ItemPatch {
  std::size_t item = 0;
  SiteKind kind = SiteKind::ResidPre;
  std::size_t index = 0;
};
// The patches of one entry, and the clean run's numbers of it (with B = 1).
struct EntryPatches {
  StepId id;
  const Tensor* clean = nullptr;
  std::vector<ItemPatch> items;
};

// value (B,S,X) at a position, (B,H,S,d) for a head; clean the same with B = 1.
void apply(Tensor& value, const Tensor& clean, const ItemPatch& p) {
  const bool head = p.kind == SiteKind::Head;
  if (value.rank() != (head ? 4u : 3u) || clean.size() * value.shape[0] != value.size())
    throw InternalError("attn patch: a site's entry is " + shape_with_axes(value) + ", the clean run's " +
                        shape_with_axes(clean));
  const std::size_t rows = value.shape[1], width = value.size() / (value.shape[0] * rows);
  if (p.index >= rows) throw InternalError("attn patch: a site past its entry's rows");
  std::copy_n(clean.data.begin() + static_cast<std::ptrdiff_t>(p.index * width), width,
              value.data.begin() + static_cast<std::ptrdiff_t>((p.item * rows + p.index) * width));
}

// What one run gives back.
struct RunOutcome {
  std::vector<double> logits;  // (B, k): the metric's logits of each item
  std::vector<TapeEntry> tape;
  std::vector<std::vector<std::string>> tokens[2];  // per sequence, the first item's
  Tensor hidden;                                    // the last row the head read (capture_hidden)
};

struct RunRequest {
  const RunInput* input = nullptr;
  const ResumeAt* resume = nullptr;
  const std::vector<EntryPatches>* patches = nullptr;
  KeptActivations* keep = nullptr;
  bool capture_hidden = false;
};

RunOutcome run(const Model& model, const std::vector<std::size_t>& ids, const RunRequest& request) {
  RunOutcome out;
  Trace trace(false);
  trace.keep_entries(false);
  Tensor last;  // the record before the logits: the hidden rows the head reads
  trace.set_sink([&](const TraceRecord& r) {
    if (is_output_logits(r.id.kind) && !r.id.gradient) {
      out.logits.assign(r.data, r.data + element_count(r.shape));
      if (request.capture_hidden) out.hidden = last;
      return;
    }
    if (request.keep && KeptActivations::wanted(r.id, r.shape.size())) request.keep->keep(r);
    if (request.capture_hidden && r.shape.size() == 3) {
      last = Tensor::uninitialized(r.shape, r.axes);
      std::copy(r.data, r.data + last.size(), last.data.begin());
    }
  });
  if (request.patches)
    for (const EntryPatches& e : *request.patches)
      trace.add_hook(e.id, [&e](const StepId&, Tensor& value) {
        for (const ItemPatch& p : e.items) apply(value, *e.clean, p);
      });
  RunContext context;
  context.resume = request.resume;
  context.head_ids = &ids;
  run_program(model, *request.input, trace, context);
  out.tape = trace.tape();
  for (const Sequence s : {Sequence::Source, Sequence::Target})
    if (const auto* tokens = trace.tokens(s)) out.tokens[s == Sequence::Target ? 1 : 0] = *tokens;
  return out;
}

double metric_of(const std::vector<double>& logits, std::size_t item, std::size_t k) {
  return k == 2 ? logits.at(item * 2) - logits.at(item * 2 + 1) : logits.at(item);
}

std::string stack_word(Stack stack) { return stack == Stack::Encoder ? "encoder" : "decoder"; }

// Row `index` of a (1,S,X) entry as (X,), or head `index` of a (1,H,S,d) one as (S,d); the
// last row of (1,T,N) with index SIZE_MAX.
Tensor part_of(const Tensor& t, std::size_t index) {
  const std::size_t rows = t.shape.at(1), width = t.size() / rows;
  if (index == SIZE_MAX) index = rows - 1;
  Shape shape(t.shape.begin() + 2, t.shape.end());
  AxisNames axes(t.axes.begin() + 2, t.axes.end());
  Tensor out = Tensor::uninitialized(shape, axes);
  std::copy_n(t.data.begin() + static_cast<std::ptrdiff_t>(index * width), width, out.data.begin());
  return out;
}

// The output head's column of vocabulary entry `id`, (N,), and its bias.
Tensor head_column(const Model& model, std::size_t id, double* bias) {
  const std::size_t N = model.embedding.shape.at(1);
  Tensor out({N}, {"N"});
  for (std::size_t n = 0; n < N; ++n)
    out.data[n] = model.output.tied ? model.embedding.at({id, n}) : model.output.W.at({n, id});
  *bias = model.output.b.has_values() ? model.output.b.at({id}) : 0.0;  // tied or not (BERT's is tied)
  return out;
}

}  // namespace

struct PatchExperiment::State {
  State(const Model& m, const RunInput& c, const RunInput& x, const Metric& metric, const Options& o)
      : model(m), clean_input(c), corrupt_input(x), metric(metric), ids(metric.ids()), options(o) {}

  const Model& model;
  RunInput clean_input, corrupt_input;
  Metric metric;
  std::vector<std::size_t> ids;
  Options options;
  KeptActivations clean, corrupt;
  double m_clean = 0, m_corrupt = 0;
  std::vector<LayerSites> layers;
  std::vector<SiteStack> stacks;
  std::size_t batch = 1;  // the most items a run may hold in the memory limit
  std::uint64_t estimate = 0;

  std::uint64_t bytes_for(std::size_t B) const;
  void choose_batch();
  void make_stacks(const RunOutcome& clean_run, const RunOutcome& corrupt_run);
  // Runs `sites` (all at one layer when resuming) as one batch: item i patches sites[i], or
  // every site in item 0 when `together`.
  std::vector<double> patched(const std::vector<Site>& sites, bool together, RunOutcome* detail = nullptr) const;
};

std::uint64_t PatchExperiment::State::bytes_for(std::size_t B) const {
  // one patched run of B items as the model's own program holds it, run on shapes alone
  // (attn/run_memory.h), with the model, its vocabulary and the program itself; its head
  // computes the metric's k logits at one row (RunContext::head_ids), its trace keeps
  // nothing (the hooks read each entry as it is recorded)
  RunPlan plan;
  plan.head_ids = &ids;
  const long double run = static_cast<long double>(estimate_run_memory(model, replicated(corrupt_input, B), plan));
  const RunSize size = run_size_of(model, corrupt_input);
  const long double S = static_cast<long double>(size.seq_len), T = static_cast<long double>(size.target_len),
                    N = static_cast<long double>(model.config.d_model);
  // kept of each of the two runs, per layer: its output, attention and feed-forward
  // outputs and the heads' context (4 of S*N, the longer sequence), and the inputs
  const long double layers = static_cast<long double>(model.encoder.size() + model.decoder.size());
  const long double kept = 2.0L * 8.0L * (layers * 4.0L * std::max(S, T) * N + 6.0L * (S + T) * N);
  // each batch item's resumed layer outputs (B,S,N), one at a time
  const long double resumed = 8.0L * B * std::max(S, T) * N;
  const long double total = run + kept + resumed;
  return total > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

void PatchExperiment::State::choose_batch() {
  const std::uint64_t limit = options.max_memory_bytes ? options.max_memory_bytes : default_memory_limit();
  batch = std::max<std::size_t>(1, options.max_batch);
  while (batch > 1 && bytes_for(batch) > limit) batch /= 2;
  estimate = bytes_for(batch);
  if (estimate > limit)
    throw InputError("attn patch", "",
                     fmt::format("the runs would need about {} (S={}, d_model={}, layers={}), more than the limit "
                                 "of {}; use shorter texts or raise --max-memory",
                                 byte_size_text(static_cast<double>(estimate), ByteStyle::Memory),
                                 run_size_of(model, corrupt_input).seq_len, model.config.d_model,
                                 model.encoder.size() + model.decoder.size(),
                                 byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

void PatchExperiment::State::make_stacks(const RunOutcome& clean_run, const RunOutcome& corrupt_run) {
  for (const LayerSites& l : layers) {
    auto it = std::find_if(stacks.begin(), stacks.end(), [&](const SiteStack& s) { return s.stack == l.stack; });
    if (it == stacks.end()) {
      SiteStack s;
      s.stack = l.stack;
      const Tensor& input = clean.at(l.resid_pre);
      s.positions = input.shape.at(1);
      s.heads = l.context ? clean.at(*l.context).shape.at(1) : 0;
      const std::size_t sequence = l.resid_pre.sequence == Sequence::Target ? 1 : 0;
      if (!clean_run.tokens[sequence].empty()) s.tokens = clean_run.tokens[sequence].front();
      if (!corrupt_run.tokens[sequence].empty()) s.corrupt_tokens = corrupt_run.tokens[sequence].front();
      stacks.push_back(std::move(s));
      it = stacks.end() - 1;
    }
    it->layers = std::max(it->layers, l.layer + 1);
  }
}

PatchExperiment::PatchExperiment(const Model& model, const RunInput& clean, const RunInput& corrupt,
                                 const Metric& metric, const Options& options)
    : state_(std::make_unique<State>(model, clean, corrupt, metric, options)) {
  State& s = *state_;
  if (!model.output.present)
    throw InputError("attn patch", "", "this model has no output head, so it has no logits for the metric");
  if (clean.batched || corrupt.batched)
    throw InputError("attn patch", "", "expected one sequence in each run, found a batch");
  const RunSize a = run_size_of(model, clean), b = run_size_of(model, corrupt);
  if (a.seq_len != b.seq_len || a.target_len != b.target_len)
    throw InputError("--corrupt", "",
                     fmt::format("expected as many tokens as the clean text's {}, found {}: the runs are compared "
                                 "position by position",
                                 a.seq_len != b.seq_len ? a.seq_len : a.target_len,
                                 a.seq_len != b.seq_len ? b.seq_len : b.target_len));
  s.choose_batch();
  RunRequest request;
  request.input = &s.clean_input;
  request.keep = &s.clean;
  const RunOutcome clean_run = run(model, s.ids, request);
  request.input = &s.corrupt_input;
  request.keep = &s.corrupt;
  const RunOutcome corrupt_run = run(model, s.ids, request);
  s.m_clean = metric_of(clean_run.logits, 0, s.ids.size());
  s.m_corrupt = metric_of(corrupt_run.logits, 0, s.ids.size());
  s.layers = layer_sites(clean_run.tape);
  s.make_stacks(clean_run, corrupt_run);
}

PatchExperiment::~PatchExperiment() = default;

double PatchExperiment::clean() const { return state_->m_clean; }
double PatchExperiment::corrupt() const { return state_->m_corrupt; }
const std::vector<SiteStack>& PatchExperiment::stacks() const { return state_->stacks; }
std::uint64_t PatchExperiment::estimated_bytes() const { return state_->estimate; }

std::vector<Site> PatchExperiment::sites(const std::vector<SiteKind>& kinds, std::size_t first,
                                         std::size_t last) const {
  std::vector<Site> out;
  for (const LayerSites& l : state_->layers) {
    const SiteStack& stack = *std::find_if(state_->stacks.begin(), state_->stacks.end(),
                                           [&](const SiteStack& s) { return s.stack == l.stack; });
    for (const SiteKind kind : kinds) {
      if (!site_entry(state_->layers, {kind, l.stack, l.layer, 0})) continue;
      if (kind == SiteKind::Head) {
        for (std::size_t h = 0; h < stack.heads; ++h) out.push_back({kind, l.stack, l.layer, h});
        continue;
      }
      for (std::size_t p = first; p < stack.positions && p <= last; ++p) out.push_back({kind, l.stack, l.layer, p});
    }
  }
  return out;
}

void PatchExperiment::check_site(const Site& site, const std::string& option) const {
  const auto stack = std::find_if(state_->stacks.begin(), state_->stacks.end(),
                                  [&](const SiteStack& s) { return s.stack == site.stack; });
  const bool head = site.kind == SiteKind::Head;
  if (stack == state_->stacks.end())
    throw InputError(option, "", fmt::format("this model has no {} layers", stack_word(site.stack)));
  if (site.layer < 0 || site.layer >= stack->layers)
    throw InputError(option, "", fmt::format("expected a layer 0..{}, found {}", stack->layers - 1, site.layer));
  const std::size_t count = head ? stack->heads : stack->positions;
  if (site.index >= count)
    throw InputError(option, "",
                     fmt::format("expected a {} 0..{}, found {}", head ? "head" : "position", count - 1, site.index));
  if (!site_entry(state_->layers, site))
    throw InputError(option, "", fmt::format("layer {} has no {} site", site.layer, site_kind_name(site.kind)));
}

std::vector<double> PatchExperiment::State::patched(const std::vector<Site>& sites, bool together,
                                                    RunOutcome* detail) const {
  const std::size_t B = together ? 1 : sites.size();
  std::vector<EntryPatches> patches;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const StepId id = *site_entry(layers, sites[i]);
    auto it = std::find_if(patches.begin(), patches.end(), [&](const EntryPatches& e) { return e.id == id; });
    if (it == patches.end()) {
      patches.push_back({id, &clean.at(id), {}});
      it = patches.end() - 1;
    }
    it->items.push_back({together ? 0 : i, sites[i].kind, sites[i].index});
  }
  // The earliest layer any site is in: the run starts there.
  ResumeAt resume;
  resume.stack = sites.front().stack;
  resume.layer = sites.front().layer;
  for (const Site& site : sites)
    if ((site.stack == resume.stack && site.layer < resume.layer) ||
        (site.stack == Stack::Encoder && resume.stack == Stack::Decoder)) {
      resume.stack = site.stack;
      resume.layer = site.layer;
    }
  resume.output = [this, B](Stack stack, int index) {
    const Tensor& kept = corrupt.layer_output(stack, index);  // (1,S,N)
    Tensor out = Tensor::uninitialized({B, kept.shape[1], kept.shape[2]}, kept.axes);
    for (std::size_t b = 0; b < B; ++b)
      std::copy(kept.data.begin(), kept.data.end(), out.data.begin() + static_cast<std::ptrdiff_t>(b * kept.size()));
    return out;
  };
  const RunInput input = replicated(corrupt_input, B);
  RunRequest request;
  request.input = &input;
  request.resume = options.resume ? &resume : nullptr;
  request.patches = &patches;
  request.capture_hidden = detail != nullptr;
  RunOutcome outcome = run(model, ids, request);
  std::vector<double> out;
  for (std::size_t b = 0; b < B; ++b) out.push_back(metric_of(outcome.logits, b, ids.size()));
  if (detail) *detail = std::move(outcome);
  return out;
}

std::vector<double> PatchExperiment::each(const std::vector<Site>& sites,
                                          const std::function<void(std::size_t, std::size_t)>& progress) const {
  const State& s = *state_;
  std::vector<double> out;
  out.reserve(sites.size());
  std::size_t i = 0;
  while (i < sites.size()) {
    // a batch: sites of one layer, at most s.batch of them
    std::size_t j = i + 1;
    while (j < sites.size() && j - i < s.batch && sites[j].stack == sites[i].stack && sites[j].layer == sites[i].layer)
      ++j;
    const std::vector<Site> batch(sites.begin() + static_cast<std::ptrdiff_t>(i),
                                  sites.begin() + static_cast<std::ptrdiff_t>(j));
    for (const double v : s.patched(batch, false)) out.push_back(v);
    i = j;
    if (progress) progress(i, sites.size());
  }
  return out;
}

SiteDetail PatchExperiment::detail(const Site& site) const {
  const State& s = *state_;
  SiteDetail d;
  d.site = site;
  const StepId id = *site_entry(s.layers, site);
  d.address = trace_name(id);
  d.corrupt = part_of(s.corrupt.at(id), site.index);
  d.clean = part_of(s.clean.at(id), site.index);
  RunOutcome outcome;
  d.value = s.patched({site}, true, &outcome).front();
  d.hidden = part_of(outcome.hidden, SIZE_MAX);
  d.answer_logit = outcome.logits.at(0);
  d.answer_column = head_column(s.model, s.metric.answer, &d.answer_bias);
  if (s.metric.wrong) {
    d.wrong_logit = outcome.logits.at(1);
    d.wrong_column = head_column(s.model, *s.metric.wrong, &d.wrong_bias);
  }
  return d;
}

double PatchExperiment::together(const std::vector<Site>& sites) const {
  if (sites.empty()) return state_->m_corrupt;
  return state_->patched(sites, true).front();
}

}  // namespace attn

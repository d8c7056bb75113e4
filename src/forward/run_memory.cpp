// The memory estimate: the model's own program run on shapes alone (attn/run_memory.h).
#include "attn/run_memory.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/parameters.h"
#include "core/shape_only.h"
#include "forward/memory_holdings.h"
#include "forward/program.h"
#include "model/byte_size.h"
#include "model/memory_estimate.h"
#include "model/token_input.h"

namespace attn {

namespace {

// What the run holds besides its tensors, measured with a malloc counter (the peak of the
// bytes malloc has handed out and not taken back, malloc_usable_size of each) on the
// examples and the reference checkpoints:
// - the program itself, its command line and streams, before any model: 285 KiB (attn
//   --version), and the command's options, parsed, and its session: 292 KiB;
constexpr long double kProgramBytes = 292.0L * 1024;
// - a checkpoint's loader besides: its files' headers, config and tokenizer documents: 48 KiB
//   (a file of 50 tensors, GPT-Neo's with its unused masks, or BERT's vocab.txt: 45 KiB);
constexpr long double kCheckpointBytes = 48.0L * 1024;
//   and for each tensor it names, what the open files keep of its header (name, dtype,
//   shape, offsets, the index by name) and the name the model keeps: about 500 bytes; while
//   it reads them, its read plan's entry and the headers' documents besides: about 800, let
//   go before the run (validate's heap: Marian's 86 tensors 430 KB, 101 447 KB, against
//   Llama's 21 332 KB; a .bin's pickles hold its header entries: the larger of the two);
constexpr long double kBytesPerCheckpointTensor = 200, kBytesPerCheckpointTensorRead = 800;
// - a vocabulary row: its token's text and about 170 bytes of strings, lookup maps and
//   display names around it (GPT-2's 50257 rows: 8.6 MiB);
constexpr long double kBytesPerVocabularyRow = 170;
// - a tokenizer's token beside the vocabulary (a BPE's piece, its id map and merges):
//   about 130 bytes (GPT-2's tokenizer.json of 50257 tokens and 50000 merges: 6.6 MiB); a
//   model file's word tokenizer, its own maps of the words, 400 (the untrained translator's
//   335 words against seed 004's 12: 185 KiB more besides the weights);
constexpr long double kBytesPerTokenizerToken = 130, kBytesPerWordTokenizerToken = 400;
// - a model file's JSON, parsed whole while the model loads: its text and its document,
//   2.25 bytes a byte of it (the built-in translator's 38 KB of words and numbers: 2.2; the
//   trained examples' arrays of numbers: 1.9 besides their weights).
constexpr long double kBytesPerModelFileByte = 2.25;

// - a generation's own besides its runs: the tokens so far, the cache's and the choice's
//   printing: 8 KiB.
constexpr long double kGenerationBytes = 8.0L * 1024;
// - attn grad's walkthrough, the forward's and the backward's text held (present/held_text.h):
//   about twice the forward's estimated text (memory_holdings.cpp), which is 0.94 to 1.24
//   times the text the examples' walkthroughs write; 1.7 times it covers the most it misses
//   and the printers' own strings (gpt_tiny's and seed004's grad are the closest).
constexpr long double kGradTextHeld = 1.7;

// The run's input for a run on shapes alone: numbers given as X as their shapes alone (no
// copy of them), the decoder's input grown to the plan's length (its last token repeated),
// the lens and the ablation the plan says.
RunInput shape_input(const RunInput& input, const RunPlan& plan) {
  const std::size_t target_len = plan.target_len;
  RunInput run;
  run.batched = input.batched;
  run.source_tokens = input.source_tokens;
  run.target_tokens = input.target_tokens;
  run.target_X_batched = input.target_X_batched;
  run.ablation = plan.ablation ? *plan.ablation : input.ablation;
  run.lens = input.lens || plan.lens;
  if (input.X.has_values()) run.X = shape_only(input.X.shape, input.X.axes);
  if (input.target_X.has_values()) run.target_X = shape_only(input.target_X.shape, input.target_X.axes);
  if (target_len && !run.target_tokens.empty()) {
    std::vector<std::vector<std::string>> lists = token_lists(run.target_tokens);
    for (auto& tokens : lists)
      while (!tokens.empty() && tokens.size() < target_len) tokens.push_back(tokens.back());
    run.target_tokens.texts.clear();
    run.target_tokens.tokens = std::move(lists);
  }
  return run;
}

// One run of the program on `input` under `kept`, `held` bytes held beside it, its head
// the ids' logits alone when `head_ids` says so.
MemoryHoldings shape_run(const Model& model, const RunInput& input, RunPlan::Kept kept, bool shown, long double held,
                         const std::vector<std::size_t>* head_ids = nullptr, bool dumped = false) {
  MemoryHoldings holdings(model, kept, shown, input.lens && model.output.present);
  holdings.hold(held);
  if (dumped) holdings.note_shapes();
  Trace trace(!input.batched);
  holdings.watch(trace);
  RunContext context;
  context.ablation = &input.ablation;
  context.head_ids = head_ids;
  run_program(model, input, trace, context);
  return holdings;
}

// `shapes` appended to `list` as pointers (a dump's count reads them where they are).
void point_to(const std::vector<Shape>& shapes, std::vector<const Shape*>& list) {
  for (const Shape& shape : shapes) list.push_back(&shape);
}

// What a generation's dump holds beside it: the prompt's records, then each new token's step
// and the caches after it (step.<t>.cache.decoder.<l>.k and .v), counted as the last step's,
// the largest.
long double generation_dump_bytes(const RunPlan& plan, const MemoryHoldings& prompt, const MemoryHoldings& step,
                                  const std::vector<LayerCache>& caches, std::size_t filled) {
  if (!plan.dump_held) return 0;
  std::vector<const Shape*> written;
  point_to(prompt.shapes(), written);
  point_to(step.shapes(), written);
  // each layer's k and v as the last step leaves them
  std::vector<Shape> cache_shapes;
  cache_shapes.reserve(2 * caches.size());
  for (const LayerCache& c : caches)
    for (const CachedHeads* kv : {&c.k, &c.v}) {
      cache_shapes.push_back(kv->shape());
      cache_shapes.back()[1] = plan.generated_len;
    }
  point_to(cache_shapes, written);
  // (counted, not listed: -n can be a hundred million)
  const long double steps =
      plan.generated_len > filled + 1 ? static_cast<long double>(plan.generated_len - filled - 1) : 0;
  const long double per_step = static_cast<long double>(step.shapes().size() + 2 * caches.size());
  return static_cast<long double>(
      plan.dump_held(written, static_cast<long double>(prompt.shapes().size()) + steps * per_step));
}

// What a generation's dump holds when the prompt's run is the last: its records.
long double prompt_dump_bytes(const RunPlan& plan, const MemoryHoldings& prompt) {
  if (!plan.dump_held) return 0;
  std::vector<const Shape*> written;
  point_to(prompt.shapes(), written);
  return static_cast<long double>(plan.dump_held(written, static_cast<long double>(written.size())));
}

// attn generate: the prompt's run fills the KV cache; the last new token's cached step
// reads it at its longest. Each walkthrough's text is written when its run is over.
long double generation_peak(const Model& model, const RunInput& input, const RunPlan& plan, long double held) {
  std::vector<LayerCache> caches(model.decoder.size());
  RunContext context;
  context.ablation = &input.ablation;
  context.cache = &caches;
  MemoryHoldings prompt(model, plan.shown ? RunPlan::Kept::Streamed : RunPlan::Kept::Nothing, plan.shown, false);
  prompt.hold(held);
  prompt.keep_last_logits();
  if (plan.dump_held) prompt.note_shapes();
  Trace prompt_trace(!input.batched);
  prompt.watch(prompt_trace);
  run_program(model, input, prompt_trace, context);
  const std::size_t filled = caches.empty() ? 0 : caches[0].k.length();
  if (plan.generated_len <= filled + 1) {
    // beam search's first step: every beam's copy of the prompt's cache
    long double copies = 0;
    if (plan.beams > 1)
      for (const LayerCache& c : caches)
        for (const CachedHeads* t : {&c.k, &c.v, &c.cross_k, &c.cross_v})
          copies += static_cast<long double>(t->reserved_bytes());
    return prompt.peak() + static_cast<long double>(plan.beams > 1 ? plan.beams : 0) * copies +
           prompt_dump_bytes(plan, prompt);
  }
  // the cache as the last step finds it, every position but its own (shapes alone), held
  // with room for its own (CachedHeads::reserved_bytes), and the largest one's room before
  // it grew beside it
  long double cache = 0, grown_from = 0;
  for (LayerCache& c : caches) {
    for (CachedHeads* t : {&c.k, &c.v}) {
      t->set_length_of_shapes(plan.generated_len - 1);
      grown_from = std::max(grown_from, static_cast<long double>(t->reserved_bytes()));
      cache += static_cast<long double>(t->reserved_bytes(plan.generated_len));
    }
    for (const CachedHeads* t : {&c.cross_k, &c.cross_v}) cache += static_cast<long double>(t->reserved_bytes());
  }
  cache += grown_from;
  MemoryHoldings step(model, plan.shown ? RunPlan::Kept::Everything : RunPlan::Kept::Nothing, plan.shown, false);
  // the prompt's trace lives on, as it kept it; the decoder's last logits, (V,), and the
  // sampling's logits and probabilities beside them as the next token is chosen
  // (beam search: up to twice N caches while the beams are reordered; each beam's logits,
  // and the candidates' log-probabilities, scores and order, N x V each)
  const long double beams = static_cast<long double>(plan.beams);
  const long double cache_copies = plan.beams > 1 ? 2 * beams : 1;
  const long double rows = plan.beams > 1 ? 4 * beams : 0;
  step.hold(held + prompt.kept() + cache_copies * cache + (3 + rows) * prompt.last_logits());
  Trace step_trace(true);
  step.watch(step_trace);
  if (plan.dump_held) step.note_shapes();
  context.step = true;
  context.position = plan.generated_len - 1;
  Program run(model, 0, step_trace, context);
  run_forward(model, run);
  return std::max(prompt.peak(), step.peak()) + generation_dump_bytes(plan, prompt, step, caches, filled);
}

// A matrix in panels (StoredMatrix::in_panels), beside the mapped file it was made from:
// K = stride rows of 64 bytes for each panel of its columns, the last one's padding too.
long double panel_bytes(const StoredMatrix& m, long double numbers) {
  if (m.panel == 0 || m.stride == 0) return 0;
  const long double columns = numbers / static_cast<long double>(m.stride);
  return std::ceil(columns / static_cast<long double>(m.panel)) * static_cast<long double>(m.stride) * 64;
}

// The weights' numbers as the run holds them: float64, or as stored in the mapped files
// (and in panels).
long double weight_bytes(const Model& model, long double* float64, long double* largest) {
  long double bytes = 0;
  *float64 = *largest = 0;
  for (const ConstParameter& p : parameters(model)) {
    const long double numbers = static_cast<long double>(p.tensor->size());
    *float64 += 8 * numbers;
    *largest = std::max(*largest, 8 * numbers);
    // (its shape and axes' names besides: a tiny model's weights are as much names as numbers)
    const StoredMatrix* stored = p.tensor->stored.get();
    bytes += stored ? numbers * static_cast<long double>(stored_type_bytes(stored->type)) +
                          panel_bytes(*stored, numbers) + tensor_heap_bytes(p.tensor->shape, p.tensor->axes, false)
                    : tensor_heap_bytes(p.tensor->shape, p.tensor->axes);
  }
  return bytes;
}

// The model as loaded, besides its weights: its vocabulary and its tokenizer.
long double vocabulary_bytes(const Model& model) {
  long double bytes = 0;
  for (std::size_t id = 0; id < model.vocab.size(); ++id)
    bytes += kBytesPerVocabularyRow + static_cast<long double>(model.vocab.token(id).size());
  if (!model.tokenizer) return bytes;
  const long double tokens = static_cast<long double>(model.tokenizer->size());
  const long double checkpoint =
      kCheckpointBytes + kBytesPerCheckpointTensor * static_cast<long double>(model.checkpoint.tensor_names.size());
  return bytes + (model.checkpoint.present() ? checkpoint + kBytesPerTokenizerToken * tokens
                                             : kBytesPerWordTokenizerToken * tokens);
}

// What the plan's dump holds beside the run that writes it: the records, and for attn grad
// a gradient of each and of every weight.
long double dump_bytes(const Model& model, const RunPlan& plan, const MemoryHoldings& run) {
  if (!plan.dump_held) return 0;
  std::vector<const Shape*> written;
  point_to(run.shapes(), written);
  long double tensors = static_cast<long double>(written.size());
  if (plan.backward) {  // the gradients: the records' shapes again, and the weights'
    tensors *= 2;
    for (const ConstParameter& p : parameters(model)) {
      written.push_back(&p.tensor->shape);
      tensors += 1;
    }
  }
  return static_cast<long double>(plan.dump_held(written, tensors));
}

// The most the run's tensors hold at once, run on shapes alone, and a dump's buffers beside
// them from the start.
long double tensors_peak(const Model& model, const RunInput& given, const RunPlan& plan, long double weights64,
                         long double largest_weight) {
  const RunInput input = shape_input(given, plan);
  const ShapesOnly shapes_only;
  long double peak = 0, held = 0;
  if (plan.unablated_run && model.output.present) {
    RunInput plain = input;
    plain.ablation = Ablation{};
    plain.lens = false;
    const MemoryHoldings unablated = shape_run(model, plain, RunPlan::Kept::Nothing, false, 0);
    peak = unablated.peak();
    held = unablated.last();  // its probabilities, beside the ablated run
  }
  if (plan.generated_len) return std::max(peak, kGenerationBytes + generation_peak(model, input, plan, held));
  const RunPlan::Kept kept = plan.backward ? RunPlan::Kept::Everything : plan.kept;
  const MemoryHoldings run = shape_run(model, input, kept, plan.shown, held, plan.head_ids, bool(plan.dump_held));
  const long double dump = dump_bytes(model, plan, run);
  peak = dump + std::max(peak, run.peak());
  if (!plan.backward) return peak;
  // attn grad's backward: the forward's entries, a gradient of each as large when they are
  // shown or kept (and one weight's printed), every weight's gradient, and the block being
  // differentiated: its work, its results' gradients (among the kept gradients when they
  // are kept) and one weight's share (the tied head's, (V,N)); the walkthrough shows the
  // forward and the backward.
  const bool gradients_kept = plan.shown || plan.gradients_kept;
  const long double walkthrough = kGradTextHeld * 2 * run.text();
  const long double gradients = gradients_kept ? run.kept() + largest_weight : 0;
  const long double differentiated = (gradients_kept ? 1 : 2) * run.largest_block() + largest_weight;
  return std::max(peak, dump + held + run.kept() + gradients + weights64 + differentiated + walkthrough);
}

}  // namespace

RunPlan run_plan(const LoadOptions& options) {
  RunPlan plan;
  plan.kept = options.trace_kept || options.backward ? RunPlan::Kept::Everything : RunPlan::Kept::Nothing;
  plan.backward = options.backward;
  return plan;
}

std::uint64_t estimate_run_memory(const Model& model, const RunInput& input, const RunPlan& plan) {
  long double weights64 = 0, largest_weight = 0;
  const long double weights = weight_bytes(model, &weights64, &largest_weight);
  const long double loaded = kProgramBytes + weights + vocabulary_bytes(model);
  // the load, the model file's document beside the weights made from it (a checkpoint's
  // headers, read plan and pickles beside them, as they were read); then the run
  const long double checkpoint_read =
      std::max(kBytesPerCheckpointTensorRead * static_cast<long double>(model.checkpoint.tensor_names.size()),
               static_cast<long double>(model.checkpoint.reading_bytes));
  const long double load =
      loaded + kBytesPerModelFileByte * static_cast<long double>(plan.model_file_bytes) + checkpoint_read;
  const long double bytes = std::max(load, loaded + static_cast<long double>(plan.lesson_bytes) +
                                               tensors_peak(model, input, plan, weights64, largest_weight));
  return bytes > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options, const RunPlan& plan) {
  const std::uint64_t limit = memory_limit(options);
  const std::uint64_t need = estimate_run_memory(model, input, plan);
  if (need <= limit) return;
  // the sizes the refusal names: B, S and T as the run will have them
  const std::size_t target_len = std::max(plan.target_len, plan.generated_len);
  RunSize size = run_size_of(model, input);
  if (model.decoder_only())
    size.seq_len = size.target_len = std::max(size.seq_len, target_len);
  else if (model.has_target())
    size.target_len = std::max(size.target_len, target_len);
  const std::string& path = input.has_tokens() ? input.source_tokens.json_path : std::string("input");
  throw InputError(model.source, path,
                   fmt::format("this run would need about {} (B={}, S={}{}, d_model={}, heads={}, layers={}), more "
                               "than the limit of {}; use a shorter text or raise --max-memory",
                               byte_size_text(static_cast<double>(need), ByteStyle::Memory), size.batch, size.seq_len,
                               target_len && !model.decoder_only() ? fmt::format(", T={}", size.target_len) : "",
                               model.config.d_model, model.config.num_heads, size.encoder_layers + size.decoder_layers,
                               byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options) {
  check_run_memory(model, input, options, 0);
}

void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options, std::size_t target_len) {
  RunPlan plan = run_plan(options);
  plan.target_len = target_len;
  check_run_memory(model, input, options, plan);
}

}  // namespace attn

// The memory a run of a model needs, estimated before the run allocates anything large:
// the model's own forward program (forward/program.h) run on shapes alone, every step
// giving its result's shape and no numbers (core/shape_only.h), and what the real run
// would hold of those results summed as it goes: the entries its trace keeps (as the
// command keeps them: a walkthrough forgets the layers it has printed, a dump to a file
// keeps nothing, attn grad keeps everything), the tensors the running block holds, the
// head's logits, the logit lens, an ablation's run without it, a generation's KV cache.
// The estimate is the most that sum reaches, plus what the run holds besides tensors: the
// model's weights, its vocabulary and tokenizer, the walkthrough's text, and the program
// itself (forward/run_memory.cpp says how each was measured). So it cannot disagree with
// what the run records: there is no second description of the forward to count from.
#ifndef ATTN_RUN_MEMORY_H_
#define ATTN_RUN_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "attn/model.h"
#include "attn/model_file.h"
#include "attn/run_input.h"

namespace attn {

// How a command runs the model, as far as its memory goes.
struct RunPlan {
  // What the run's trace keeps: nothing (--quiet, a dump written to a file as it comes);
  // what a walkthrough streaming the run keeps (it forgets each layer it has printed but the
  // results a later layer reads); every entry (attn grad's backward reads them all; a dump
  // to standard output is written once the run has succeeded); the attention weights and
  // token ids alone (attn heads scores those).
  enum class Kept : unsigned char { Nothing, Streamed, Everything, AttentionWeights };
  Kept kept = Kept::Nothing;
  bool shown = false;     // a walkthrough of the run is written, its text held until the end
  bool backward = false;  // attn grad: a gradient for every entry and for every weight
  // attn grad: the gradients are kept until the end, as they are when shown (a dump to
  // standard output writes them once the run has succeeded; the lesson draws them).
  bool gradients_kept = false;
  // --ablate beside an output head: the run without the ablation first, its next-token
  // probabilities kept beside the ablated run.
  bool unablated_run = false;
  // The decoder's input grows to at least this many tokens (attn explain's greedy target)
  // before the run; 0: as given.
  std::size_t target_len = 0;
  // attn generate: the positions the KV cache holds at the last new token (the prompt and
  // the new tokens); the prompt's run fills the cache, each new token is a cached step.
  // 0: not a generation.
  std::size_t generated_len = 0;
  // attn generate --beams: the caches held at once (each beam's, and a parent's copy while
  // two beams continue it), and every beam's log-probabilities and scores over the vocabulary.
  std::size_t beams = 1;
  // What the command sets in the input after checking (RunInput::lens and ::ablation): the
  // logit lens, and the heads ablated (nullptr: the input's own).
  bool lens = false;
  const Ablation* ablation = nullptr;
  // attn patch's runs: the head computes the logits of these vocabulary ids alone at the
  // last row, (B,1,k) (RunContext::head_ids; nullptr: the whole head, (B,T,V) twice).
  const std::vector<std::size_t>* head_ids = nullptr;
  // --dump: what the dump holds while it writes `tensors` tensors of these shapes (the
  // run's records; attn grad's gradients besides; each shape at least once: a generation's
  // thousand steps write the same shapes a thousand times; pointed to, not copied), counted
  // by io/ (attn/dump.h's dump_held_bytes, handed over by the command: forward/ does not
  // depend on io/). Empty: no dump.
  std::function<std::uint64_t(const std::vector<const Shape*>& shapes, long double tensors)> dump_held;
  // --html: the lesson's page, built in memory beside the run and written once it is over,
  // with its file's buffer (cli/html_option.cpp estimates it).
  std::uint64_t lesson_bytes = 0;
  // The model file's bytes, parsed whole as the model loaded (0: none, a checkpoint): its
  // JSON document and the weights made from it were held at once, before this run.
  std::uint64_t model_file_bytes = 0;
};

// The plan LoadOptions describes, as every loader checks a model's own input with it: the
// trace kept whole (trace_kept, backward) or nothing, nothing shown. Each command then
// checks its own plan, which holds at least as much.
RunPlan run_plan(const LoadOptions& options);

// The estimate, in bytes (held at UINT64_MAX for absurd sizes).
std::uint64_t estimate_run_memory(const Model& model, const RunInput& input, const RunPlan& plan);

// InputError at the input's sentence (or "input") when the run is estimated to need more
// than options' limit (--max-memory, else half the machine's memory).
void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options, const RunPlan& plan);

}  // namespace attn

#endif  // ATTN_RUN_MEMORY_H_

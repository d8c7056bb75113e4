// The session: one model loaded with one run's input, and what a command does with them:
// a forward run (its trace's hooks read or replace any step), the backward pass, the
// memory checks, the target a decoder grows by itself, the loss's labels, and --lens and
// --ablate put into the input. Every command (explain, steps, grad, generate, heads, vocab)
// calls it; cli/ only parses options and hands them over, and present/ prints what it
// reports. Generation (session/generation.h) and the comparison runs
// (session/comparison_runs.h, session/head_scores_run.h) run on a Session.
#ifndef ATTN_SESSION_SESSION_H_
#define ATTN_SESSION_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "attn/tensor.h"
#include "attn/trace.h"

namespace attn {

// Which model and which input (the model-selection options: TEXT, --target, -c, --example,
// --model).
struct ModelChoice {
  std::string text;        // the sentence to run (models with a vocabulary)
  std::string target;      // --target: the decoder's input sentence
  std::string model_file;  // -c FILE ("-": standard input); empty: the built-in default model
  std::string example;     // --example NAME: a bundled example instead of a file
  std::string checkpoint;  // --model DIR|NAME: a Hugging Face checkpoint
};

// How the model is read (the reading options): the memory limit, and what the run reads of
// what the model learned (docs/heads.md).
struct ReadingChoice {
  double max_memory_gib = 0;  // --max-memory; 0: half the machine's memory
  bool lens = false;          // --lens: the logit lens after every layer
  std::string answer;         // --answer TOKEN (with --lens): its rank, logit and probability per layer
  std::string ablate;         // --ablate L.H[,L.H...]: heads whose context is replaced
  bool ablate_mean = false;   // --ablate-mean: by its mean over positions, not zero
};

// The run's model as the output names it: the folder or file escaped as error messages are
// (printable), "example NAME", or the built-in model.
std::string model_source_name(const ModelChoice& choice);
// The bytes of the model file `choice` names (an example's, the built-in model's), which
// loading parses whole (RunPlan::model_file_bytes); 0 for a checkpoint and standard input.
std::uint64_t model_file_bytes(const ModelChoice& choice);

class Session {
 public:
  // Loads the model `choice` names (a file, standard input, an example, a checkpoint or the
  // built-in one) with the command line's sentences in place, within `reading`'s memory
  // limit. A checkpoint has no input of its own: its text is the command line's, refused
  // when empty unless `text_optional` (attn heads makes one).
  Session(const ModelChoice& choice, const ReadingChoice& reading, LoadOptions load, bool text_optional = false);
  // A model already loaded with its input (the tests' tiny checkpoints, whose placeholder
  // tokens no tokenizer reads).
  explicit Session(LoadedModel loaded, LoadOptions load = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Model& model() const { return loaded_.model; }
  RunInput& input() { return loaded_.input; }
  const RunInput& input() const { return loaded_.input; }
  const LoadOptions& load_options() const { return load_; }
  const ModelChoice& choice() const { return choice_; }
  const ReadingChoice& reading() const { return reading_; }
  // The model as the output names it (model_source_name).
  std::string source_name() const { return model_source_name(choice_); }
  double load_seconds() const { return load_seconds_; }

  // The run as the input now stands, estimated as `plan` says the command makes it
  // (attn/run_memory.h; the model file's bytes filled in): InputError at the sentence when
  // it needs more than the limit.
  void check_memory(RunPlan plan) const;
  // A decoder given no target reads what the model itself writes, as when it generates:
  // its target grown greedily from <BOS> (explain, heads), estimated first with the length
  // it can grow to. With `estimate`, the run is estimated even when nothing grows (a
  // sentence from the command line can make it as large as any file can).
  void grow_target(bool estimate);
  // The same, the run always estimated as `plan` says (with the target it can grow to).
  void grow_target(RunPlan plan);
  // attn grad's loss: `labels` (--labels), or those --target implies, or, for a causal
  // language model without any, its own text's next tokens; InputError when the loss is
  // not defined.
  void set_labels(const std::string& labels);
  // --lens and --ablate into the run's input, checked against the model (InputError
  // "--lens" for a model without an output head, "--answer" for a text that is not one
  // token of its vocabulary, "--ablate" for a head it lacks).
  void apply_reading();
  // --answer's vocabulary id, once apply_reading has found it.
  std::optional<std::size_t> lens_answer() const { return lens_answer_; }

  // One forward run of the model on the input, every step recorded into `trace` (whose
  // hooks read or replace the steps): the output, (B?,T,V) probabilities with a head.
  Tensor run(Trace& trace) const;
  // The backward pass over a run's kept `trace` (attn grad): the loss.
  double backward(Trace& trace) const;

 private:
  ModelChoice choice_;
  ReadingChoice reading_;
  LoadOptions load_;
  LoadedModel loaded_;
  double load_seconds_ = 0;
  std::optional<std::size_t> lens_answer_;
};

}  // namespace attn

#endif  // ATTN_SESSION_SESSION_H_

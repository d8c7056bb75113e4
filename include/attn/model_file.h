// Loading a model: one door, load_model(source), whatever the format; the JSON model file
// (docs/model-file.md) is read into a Model and the RunInput its "input" section gives:
// every field checked, "randn" values drawn in the documented order, runs too big for the
// memory limit refused.
#ifndef ATTN_MODEL_FILE_H_
#define ATTN_MODEL_FILE_H_

#include <cstdint>
#include <string>

#include "attn/model.h"
#include "attn/run_input.h"

namespace attn {

struct LoadOptions {
  // Refuse a run whose estimated memory exceeds this (0: half the machine's memory).
  std::uint64_t max_memory_bytes = 0;
  // Find every problem in one pass and throw them together as InputErrors (attn
  // validate), instead of stopping at the first InputError.
  bool collect_all_errors = false;
  // Whether the run keeps every intermediate (a JSON dump to stdout, written once the run
  // has succeeded) or streams them to the walkthrough and a dump file, so that only about
  // one layer's tensors are alive at a time.
  bool trace_kept = true;
  // The run is attn grad's: the forward trace is kept whole and the backward pass adds a
  // gradient for every tensor and every weight (counted in the memory estimate).
  bool backward = false;
  // The run records the logit lens (attn explain --lens): every layer's lens.<l>.norm,
  // .logits and .probabilities, kept (counted in the memory estimate).
  bool lens = false;
  // The run ablates heads (--ablate): the unablated run's next-token probabilities are kept
  // beside it, and each layer may record a context_ablated (counted in the memory estimate).
  bool ablation = false;
  // A checkpoint's weight matrices stay where its mapped files store them (Tensor::stored),
  // widened as the forward pass reads them, and one at a time by what shows or dumps one:
  // explain, generate, heads, validate and vocab. Off (and with `backward`, or with the
  // environment's ATTN_WIDEN_WEIGHTS set) they are widened to float64 at load, as grad
  // and train need to write gradients and updates.
  bool weights_as_stored = false;
  // With weights_as_stored: the matrices the products read are copied into panels at load
  // (model/weight_panels.h), for a run that reads every weight once per generated token
  // (generate under ATTN_PANELS=1). The estimate counts the copy beside the mapped files.
  bool weights_in_panels = false;
};

// A model as loaded, and the input its source gives (empty when it gives none).
struct LoadedModel {
  Model model;
  RunInput input;
};

// The JSON model file. The path "-" reads the model from standard input, named "<stdin>" in
// errors.
LoadedModel load_model_file(const std::string& path, const LoadOptions& options = {});
// How errors name the model file at `path`: the path itself, or "<stdin>" for "-".
std::string model_file_name(const std::string& path);
// `source` names the document in error messages ("model.json", "<default model>").
LoadedModel load_model_text(const std::string& text, const std::string& source, const LoadOptions& options = {});

// Tokenizes a text or token input and looks every token up, as the run will: InputError
// (at the input's JSON path) for an empty sentence, a word not in the vocabulary when it has
// no <UNK>, padding without <PAD>, or more tokens than a learned position table has rows.
void check_token_input(const Model& model, const TokenInput& input);

// The sentence given on the command line replaces the file's input (and its target, which
// belonged to the file's sentence: the decoder then starts from <BOS>, or from --target).
// InputError when the model has no vocabulary. `origin` names it in messages.
void replace_source_text(const Model& model, RunInput& input, const std::string& text, const std::string& origin);
// The decoder's input sentence. InputError when the model has no decoder or no vocabulary.
void replace_target_text(const Model& model, RunInput& input, const std::string& text, const std::string& origin);
// Both drop the file's input.labels and input.output_grad, which belong to its input.

// The labels given on the command line (attn grad --labels): a sentence tokenized as the
// output positions' sequence (the target with a decoder), one token per position.
// InputError (at `origin`) without an output head, for a batch, or for the wrong count.
void replace_labels(const Model& model, RunInput& input, const std::string& text, const std::string& origin);

// attn grad's --labels alone, with a decoder: the target they imply, "<BOS>" and every
// label but the last (the labels as given when there is nothing to shift).
std::string target_implied_by_labels(const Model& model, const std::string& labels);
// --target alone: the labels it implies, the target without its <BOS>, then "<EOS>" (empty
// without an <EOS> or a single target).
std::string labels_implied_by_target(const Model& model, const RunInput& input);

// InputError naming input.labels (a model with an output head) or input.output_grad (one
// without) when the model defines no loss for attn grad to differentiate.
void check_loss_defined(const Model& model, const RunInput& input);

// The memory limit for the run as the model now stands, after a sentence from the command
// line replaced its input (replace_source_text, replace_target_text): InputError at that
// sentence when the run is estimated to need more than options' limit.
void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options);
// The same with the decoder's input `target_len` tokens long at least: before the target is
// decoded greedily (or generated), the run it will become is estimated, so that a long text
// is refused before the model runs once.
void check_run_memory(const Model& model, const RunInput& input, const LoadOptions& options, std::size_t target_len);

// The sizes of a run that decide its memory.
struct RunSize {
  std::size_t batch = 1, seq_len = 1, target_len = 0;
  std::size_t encoder_layers = 1, decoder_layers = 0;
  std::size_t vocab = 0;
  std::size_t position_rows = 0;  // a learned position table's max_len
  bool untied_head = false;       // an output head of its own, (N, V), beside the embedding
  bool trace_kept = true;         // false: one layer's activations at a time, not every layer's
  bool backward = false;          // attn grad: every layer's activations, their gradients, the weights' gradients
  bool lens = false;              // --lens: per layer of the last stack its output, norm, logits and probabilities
  // --ablate: the unablated run's probabilities kept beside the run (B*T*V) and a
  // context_ablated of (B,S,H*d) counted in every layer
  bool ablation = false;
  // The weights kept as a checkpoint stores them (LoadOptions::weights_as_stored): how many
  // numbers, and the bytes of the mapped files they take, counted instead of 8 bytes each.
  std::uint64_t stored_numbers = 0, stored_bytes = 0;
};

// The sizes of a run of the model on `input`: B, S (in tokens), T, the layers, V.
RunSize run_size_of(const Model& model, const RunInput& input);

// The memory a run is estimated to need, in bytes (weights plus the intermediates alive:
// every layer's when the trace keeps them, else the largest layer's). Saturates at UINT64_MAX for absurd sizes.
std::uint64_t estimate_run_bytes(const ModelConfig& config, const RunSize& size);
// Half the physical memory: the default limit.
std::uint64_t default_memory_limit();

}  // namespace attn

#endif  // ATTN_MODEL_FILE_H_

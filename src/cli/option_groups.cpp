#include "option_groups.h"

#include "html_option.h"
#include "validators.h"

namespace attn::cli {

const ModelSourceHelp kExplainModelSource{
    "Model file (JSON, see docs/model-file.md; - reads standard input); default: built-in model",
    "Run a bundled example (list them with 'attn examples')"};
const ModelSourceHelp kGenerateModelSource{"Model file (JSON, see docs/model-file.md); default: built-in model",
                                           "Run a bundled example (list them with 'attn examples')"};

void add_model_source(CLI::App& command, ModelChoice& model, const ModelSourceHelp& help) {
  command.add_option("-c,--config", model.model_file, help.config)->check(non_empty("a file name"));
  command.add_option("-e,--example", model.example, help.example)
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  if (!help.checkpoint) return;
  command
      .add_option("--model", model.checkpoint,
                  "A Hugging Face model: a folder holding config.json, safetensors and the tokenizer's files, or a Hub "
                  "name found in the local cache (docs/real-models.md)")
      ->check(non_empty("a folder or a Hub name"))
      ->excludes("--config")
      ->excludes("--example");
}

void add_model_options(CLI::App& command, ModelChoice& model, ReadingChoice& reading) {
  command.add_option("text", model.text, "Sentence to run (replaces the model file's input text)")
      ->check(values_from(ValueList::FreeText));
  command
      .add_option("-t,--target", model.target,
                  "Target sentence for the decoder (replaces the model file's target; needs a model with a decoder)")
      ->check(values_from(ValueList::FreeText));
  add_model_source(command, model, kExplainModelSource);
  add_memory_option(command, reading.max_memory_gib);
}

void add_memory_option(CLI::App& command, double& gib, const char* help) {
  command
      .add_option(
          "--max-memory", gib,
          help ? help : "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
}

void add_reading_options(CLI::App& command, ReadingChoice& reading, bool with_lens) {
  if (with_lens) {
    command.add_flag("--lens", reading.lens,
                     "The logit lens: after every layer, the final norm and the output head, each position's top "
                     "token per layer (docs/heads.md)");
    command
        .add_option("--answer", reading.answer,
                    "With --lens: this token's rank, logit and probability at the last position after every layer "
                    "(docs/experiments.md)")
        ->needs("--lens")
        ->check(values_from(ValueList::FreeText));
  }
  command
      .add_option("--ablate", reading.ablate,
                  "Ablate these heads: their context set to zero and everything after recomputed, shown beside the "
                  "unablated run; L.H[,L.H...], or encoder.L.H / decoder.L.H (docs/heads.md)")
      ->check(non_empty("heads: L.H[,L.H...]"))
      ->check(values_from(ValueList::FreeText));
  command
      .add_flag("--ablate-mean", reading.ablate_mean,
                "With --ablate: each ablated head's context replaced by its mean over the positions, not zero")
      ->needs("--ablate");
}

void add_sampling_options(CLI::App& command, SamplingChoice& sampling) {
  command.add_option("--temperature", sampling.temperature, "Divide the logits by T before sampling; 0: greedy")
      ->check(finite_number(0, true, kNoBound, false, ">= 0 (0: greedy, the most probable token)"))
      ->capture_default_str();
  command.add_option("--top-k", sampling.top_k, "Sample from the K most probable tokens only; 0: all")
      ->transform(non_negative_integer())
      ->capture_default_str();
  command.add_option("--top-p", sampling.top_p, "Sample from the most probable tokens reaching probability P")
      ->capture_default_str();
  command.add_option("--seed", sampling.seed, "Seed of the sampling stream, np.random.RandomState(S)")
      ->transform(seed_number())
      ->capture_default_str();
}

namespace {

// --dump and how it writes.
void add_dump_options(CLI::App& command, OutputChoice& output) {
  command
      .add_option("--dump", output.dump_path,
                  "Write every intermediate tensor to FILE as JSON, or as NumPy .npz when FILE ends in .npz "
                  "('-' for JSON on stdout); written whole or not at all")
      ->check(non_empty("a file name"));
  command
      .add_option("--json-nonfinite", output.json_non_finite,
                  "How the JSON dump writes -inf, inf and NaN, which JSON has no number for: string (\"-Infinity\", "
                  "read by every JSON parser), null, or literal (-Infinity, as Python's json module writes it)")
      ->check(CLI::IsMember({"string", "null", "literal"}))
      ->capture_default_str();
  command
      .add_option("--dump-parameters", output.dump_parameters,
                  "Whether the dump holds the model's parameters after the tensors: yes, no, or auto (yes when they "
                  "take at most 16 MiB as float64: a small model's weights, not a paper-sized one's)")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
}

// How numbers print: --precision, --linewidth, --threshold.
void add_number_options(CLI::App& command, PrintChoice& print) {
  command.add_option("--precision", print.precision, "Digits after the point when printing tensors")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  command
      .add_option("--linewidth", print.line_width,
                  "Wrap printed arrays at this many columns (default: terminal width, 75 when piped)")
      ->check(CLI::Range(20, 100000));
  command
      .add_option("--threshold", print.threshold,
                  "Summarize tensors with more elements than this with '...' (NumPy's threshold)")
      ->transform(non_negative_integer())
      ->capture_default_str();
}

// Which steps are shown: --cell, --steps, --layer, --head, --batch, --pause.
void add_step_options(CLI::App& command, StepChoice& steps) {
  command
      .add_option("--cell", steps.cell,
                  "The element worked out in full, as b,h,i,j (batch, head, row, column; default 0,0,0,0)")
      ->check(non_empty("an element: b,h,i,j"))
      ->check(values_from(ValueList::FreeText));
  command
      .add_option("--steps", steps.steps,
                  "Show only these steps: numbers, ranges and kinds, e.g. 5-9,softmax ('attn steps' lists them)")
      ->check(non_empty("steps: numbers, ranges and kinds, e.g. 5-9,softmax"))
      ->check(values_from(ValueList::StepKinds));
  command.add_option("--layer", steps.layer, "Show only one layer: 1, encoder.1 or decoder.0")
      ->check(non_empty("a layer: 1, encoder.1 or decoder.0"))
      ->check(values_from(ValueList::FreeText));
  command.add_option("--head", steps.head, "Show only this head of tensors with a head axis")
      ->transform(non_negative_integer());
  command.add_option("--batch", steps.batch, "Show only this batch item of tensors with a batch axis")
      ->transform(non_negative_integer());
  command.add_flag("--pause", steps.pause,
                   "Show one step at a time: Enter the next, b the one before, a step number that step, q quits");
}

// How much of each step is drawn: --full, --top, --color, --heatmap.
void add_view_options(CLI::App& command, PrintChoice& print) {
  command.add_flag("--full", print.full,
                   "Show every step in full (each explanation, worked element and view), vocabulary-sized tensors "
                   "whole");
  command.add_option("--top", print.top_k, "Show vocabulary-sized rows as their K largest entries")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_color_option(command, print);
  command
      .add_option("--heatmap", print.heatmap,
                  "Attention heatmaps: auto (colour cells when colour is on, else Unicode shading), color, shade, "
                  "ascii (plain characters)")
      ->check(CLI::IsMember({"auto", "color", "shade", "ascii"}))
      ->capture_default_str();
}

}  // namespace

void add_color_option(CLI::App& command, PrintChoice& print) {
  command
      .add_option("--color", print.color,
                  "Colour: auto (when stdout is a terminal and NO_COLOR is unset), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

void add_walkthrough_options(CLI::App& command, OutputChoice& output, PrintChoice& print, StepChoice& steps,
                             bool with_html) {
  add_dump_options(command, output);
  if (with_html) add_html_option(command, output.html_path);
  add_number_options(command, print);
  command.add_flag("-q,--quiet", output.quiet, "Print no walkthrough (use with --dump)");
  command.add_flag("--timings", output.timings,
                   "Print on stderr how long loading, the forward pass and the dump took, and on how many threads "
                   "(OMP_NUM_THREADS, else one per CPU)");
  command.add_flag("--brief", print.brief, "Leave out the short explanation ('why') under each step");
  add_step_options(command, steps);
  add_view_options(command, print);
}

}  // namespace attn::cli

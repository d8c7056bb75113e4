#include "generate_command.h"

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "attn/walkthrough.h"
#include "core/numpy_random.h"
#include "forward/ablation.h"
#include "html_option.h"
#include "model/token_input.h"
#include "present/print_generation.h"
#include "reading_options.h"
#include "standard_streams.h"
#include "validators.h"

namespace attn::cli {

namespace {

// The options' values a run cannot use: one line each, before anything runs.
void check_options(const GenerateOptions& o) {
  if (!(o.temperature >= 0))
    throw InputError(
        "--temperature", "",
        fmt::format("expected a number >= 0 (0: greedy, the most probable token), found {}", o.temperature));
  if (!(o.top_p > 0 && o.top_p <= 1))
    throw InputError("--top-p", "", fmt::format("expected a number in (0, 1] (1: every token), found {}", o.top_p));
  if (o.max_new_tokens == 0) throw InputError("--max-new-tokens", "", "expected at least 1, found 0");
  if (o.json && o.run.dump_path == "-")
    throw InputError("--json", "", "expected standard output to itself, found --dump - writing there too");
}

// The decoder's starting sequence: a decoder-only model's input text, or <BOS> for an
// encoder-decoder (whose source is the text).
std::vector<std::string> start_tokens(const Model& model, RunInput& input) {
  if (!model.has_decoder())
    throw InputError(model.source, "decoder",
                     "this model has no decoder to generate with: give a decoder-only model (model.architecture "
                     "\"decoder-only\") or an encoder-decoder");
  if (!input.has_tokens())
    throw InputError(model.source, "input", "generate reads text: this model's input is numbers (input.X)");
  if (input.batched)
    throw InputError(model.source, "input",
                     "generate continues a single text; this file's input is a batch: give one TEXT on the command "
                     "line");
  if (model.decoder_only()) return token_lists(input.source_tokens)[0];
  if (!model.has_target())
    throw InputError(model.source, model.decoder.empty() ? "decoder" : "model.architecture",
                     "this model has no decoder to generate with: give a decoder-only model (model.architecture "
                     "\"decoder-only\") or an encoder-decoder");
  if (!start_from_bos(model, input))
    throw InputError(model.source, "vocab", "the decoder starts from \"<BOS>\", which this vocabulary lacks");
  return {model.vocab.token(*model.vocab.special_id(SpecialRole::Begin))};
}

// A record of step `t`, named step.<t>.<name>, for the dump.
void dump_record(TraceDump& dump, std::size_t t, const TraceRecord& r) {
  const std::string name = fmt::format("step.{}.{}", t, r.name);
  dump.add(TraceRecord{r.id, name, r.shape, r.axes, r.data, r.operands});
}

// The caches after step `t`: step.<t>.cache.decoder.<l>.k and .v, (H,t,d) or (G,t,d).
void dump_caches(TraceDump& dump, std::size_t t, const KvCacheDecoder& decoder) {
  const std::vector<Operand> none;
  for (std::size_t l = 0; l < decoder.caches().size(); ++l)
    for (const auto& [key, tensor] : {std::pair{"k", &decoder.caches()[l].k}, std::pair{"v", &decoder.caches()[l].v}}) {
      StepId id;
      id.kind = std::string(key) == "k" ? StepKind::KeyHeads : StepKind::ValueHeads;
      id.stack = Stack::Decoder;
      id.layer = static_cast<int>(l);
      id.block = Block::MaskedSelfAttention;
      const std::string name = fmt::format("step.{}.cache.decoder.{}.{}", t, l, key);
      dump.add(TraceRecord{id, name, tensor->shape, tensor->axes, tensor->data.data(), none});
    }
}

// "12,345"
std::string grouped_number(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

void setup_generate(CLI::App& app, GenerateOptions& options) {
  CLI::App* generate = app.add_subcommand(
      "generate",
      "Generate text one token at a time with a KV cache: continue TEXT (decoder-only) or translate it "
      "(encoder-decoder); greedy or sampled");
  ExplainOptions& run = options.run;
  generate->add_option("text", run.text, "The prompt to continue (decoder-only) or the source sentence");
  generate
      ->add_option("-c,--config", run.model_file, "Model file (JSON, see docs/model-file.md); default: built-in model")
      ->check(non_empty("a file name"));
  generate->add_option("-e,--example", run.example, "Run a bundled example (list them with 'attn examples')")
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  add_checkpoint_option(*generate, run);
  generate->add_option("-n,--max-new-tokens", options.max_new_tokens, "Generate at most N tokens")
      ->transform(non_negative_integer())
      ->capture_default_str();
  generate->add_option("--temperature", options.temperature, "Divide the logits by T before sampling; 0: greedy")
      ->check(finite_number(0, true, kNoBound, false, ">= 0 (0: greedy, the most probable token)"))
      ->capture_default_str();
  generate->add_option("--top-k", options.top_k, "Sample from the K most probable tokens only; 0: all")
      ->transform(non_negative_integer())
      ->capture_default_str();
  generate->add_option("--top-p", options.top_p, "Sample from the most probable tokens reaching probability P")
      ->capture_default_str();
  generate->add_option("--seed", options.seed, "Seed of the sampling stream, np.random.RandomState(S)")
      ->transform(seed_number())
      ->capture_default_str();
  generate
      ->add_option("--max-memory", run.max_memory_gib,
                   "Refuse runs estimated to need more than this many GiB, the prompt and -n new tokens counted "
                   "(default: half the machine's memory)")
      ->check(memory_limit_gib());
  add_reading_options(*generate, run, /*with_lens=*/false);
  generate->add_flag("--no-cache", options.no_cache,
                     "Run the whole prefix again for every token instead of using the KV cache (for timing)");
  generate->add_option("--stop", options.stop, "Stop after generating this token")->capture_default_str();
  generate
      ->add_option("--dump", run.dump_path,
                   "Write every step's tensors (step.<t>.<name>) and caches to FILE as JSON, or .npz")
      ->check(non_empty("a file name"));
  add_html_option(*generate, run.html_path);
  generate->add_flag("-q,--quiet", run.quiet,
                     "Print the generated text alone, exactly as the tokenizer decodes it (for a script to read)");
  generate->add_flag("--json", options.json,
                     "Print {\"ids\": [...], \"text\": \"...\"} alone: the generated ids and their decoded text");
  generate->add_flag("--brief", run.brief, "Leave out the explanations");
  generate->add_option("--precision", run.precision, "Digits after the point when printing tensors")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  generate->add_option("--top", run.top_k, "Show the K most probable next tokens")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  generate
      ->add_option("--color", run.color,
                   "Colour: auto (when stdout is a terminal and NO_COLOR is unset), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  generate->callback([&options]() {
    const int code = run_generate(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

namespace {

// One generation: the model and its input (the prompt), the cache, the outputs, and what was
// generated so far.
struct Generation {
  Generation(const GenerateOptions& options, LoadedModel loaded, std::ostream& out)
      : options(options), loaded(std::move(loaded)), out(out) {}

  const GenerateOptions& options;
  LoadedModel loaded;
  std::ostream& out;                // the walkthrough's terminal: stderr when the dump takes stdout
  std::vector<std::string> tokens;  // the decoder's sequence so far
  std::unique_ptr<KvCacheDecoder> decoder;
  std::optional<std::size_t> stop;
  std::vector<std::size_t> eos_ids;  // a checkpoint's eos_token_ids: generation stops at any of them
  std::vector<std::size_t> generated_ids;
  WalkthroughOptions walk;
  std::unique_ptr<TraceDump> dump;
  std::unique_ptr<HtmlLesson> lesson;
  PageRenderer* page = nullptr;
  std::ostream* terminal = nullptr;  // nullptr with --quiet
  bool draw = false;                 // on the terminal or the page
  std::vector<std::string> generated;
  std::uint64_t saved = 0;  // multiply-adds the cache saved

  const Model& model() const { return loaded.model; }
};

// Loads the model with the prompt and checks everything a run needs before anything runs:
// a decoder, a text, an output head (the cache refuses a model without one), the --stop
// token, the memory; then opens the dump and the lesson.
std::unique_ptr<Generation> prepare(const GenerateOptions& options) {
  check_options(options);
  const ExplainOptions& run = options.run;
  if (!run.dump_path.empty()) check_dump_target(run.dump_path, {run.model_file});
  LoadOptions load;
  load.trace_kept = false;  // the prompt's walkthrough forgets the layers it has printed
  load.ablation = !run.ablate.empty();
  // Only the steps compute with the weights (the lesson and the dumps widen the one they
  // show or write): a checkpoint's stay as stored.
  load.weights_as_stored = true;
  auto g =
      std::make_unique<Generation>(options, load_run_model(run, load), run.dump_path == "-" ? std::cerr : std::cout);
  const Model& model = g->model();
  g->tokens = start_tokens(model, g->loaded.input);
  // --ablate: the prompt's run and every step zero the heads (the mean is refused below)
  if (!run.ablate.empty()) g->loaded.input.ablation = parse_ablation(run.ablate, run.ablate_mean, model);
  // no output head, or an ablation by the mean: refused here
  g->decoder = std::make_unique<KvCacheDecoder>(model, g->loaded.input.ablation);
  if (model.vocab.never_written_ids().size() >= model.vocab.size())
    throw InputError(model.source, "vocab",
                     fmt::format("expected a token the model can write, found only {} special tokens that no model "
                                 "writes (<PAD>, <UNK>, <BOS>): there is nothing to generate",
                                 model.vocab.size()));
  g->stop = model.checkpoint.present() ? model.vocab.exact(options.stop) : model.vocab.find(options.stop);
  if (model.checkpoint.present()) g->eos_ids = model.checkpoint.eos_token_ids;
  if (!g->stop && options.stop != Vocabulary::kEnd)
    throw InputError("--stop", "",
                     fmt::format("\"{}\" is not in the vocabulary of {}, so it could never be generated",
                                 printable(options.stop), model.source));
  // The run the prompt grows to: the prompt (or <BOS>) and -n new tokens, at most what a
  // learned position table holds.
  std::size_t longest = g->tokens.size() + options.max_new_tokens;
  if (longest < options.max_new_tokens) longest = std::numeric_limits<std::size_t>::max();
  if (model.config.positional_encoding == PositionalEncoding::Learned)
    longest = std::min<std::size_t>(longest, model.config.max_len);
  // the prompt's run and the last new token's step, with the KV cache at its longest
  RunPlan plan;
  plan.generated_len = longest;
  plan.shown = !(run.quiet || options.json);
  plan.model_file_bytes = model_file_bytes(run);
  check_run_memory(model, g->loaded.input, load, plan);
  g->walk = walkthrough_options(run);
  if (!run.dump_path.empty()) g->dump = std::make_unique<TraceDump>(run.dump_path, model, g->loaded.input);
  // --html: the same walkthrough on a web page, the first token's steps and then each new
  // token's, committed once the run is over; a path that cannot take it is refused here.
  check_html_memory(run, model, g->walk,
                    PageSize{&g->loaded.input, false, longest > g->tokens.size() ? longest - g->tokens.size() : 0},
                    load);
  g->lesson = open_html_lesson(run, "attn generate", model, g->walk);
  g->page = g->lesson ? &g->lesson->keep_open() : nullptr;
  const bool alone = run.quiet || options.json;  // the result alone on standard output
  g->terminal = alone ? nullptr : &g->out;
  g->draw = !alone || g->lesson;
  return g;
}

// Where generation stops, for its heading: "stops after \"<EOS>\"", or a checkpoint's
// "stops at eos_token_id 50256 (␣<|endoftext|>)".
std::string stop_text(const Generation& g) {
  std::string out;
  if (g.stop || g.eos_ids.empty()) out = fmt::format("stops after \"{}\"", printable(g.options.stop));
  if (g.eos_ids.empty()) return out;
  const Model& model = g.model();
  std::string ids;
  for (const std::size_t id : g.eos_ids)
    ids += fmt::format("{}{} ({})", ids.empty() ? "" : ", ", id,
                       id < model.vocab.size() ? printable(readable_token(model, model.vocab.token(id))) : "?");
  return out + (out.empty() ? "" : ", ") +
         fmt::format("stops at eos_token_id{} {}", g.eos_ids.size() == 1 ? "" : "s", ids);
}

// Step 0: the prompt (and for an encoder-decoder the source), the whole run shown; its keys
// and values fill the cache.
void run_prompt(Generation& g, Trace& prompt) {
  const Model& model = g.model();
  const GenerateOptions& options = g.options;
  prompt.keep_entries(g.draw);
  if (g.dump) prompt.set_sink([&](const TraceRecord& r) { dump_record(*g.dump, 0, r); });
  if (g.draw) {
    if (g.terminal)
      g.out << fmt::format("Generating with {}: {} token{} to start from, at most {} new, {}; {}\n",
                           printable(model.source), g.tokens.size(), g.tokens.size() == 1 ? "" : "s",
                           options.max_new_tokens,
                           options.temperature == 0
                               ? "greedy (temperature 0)"
                               : fmt::format("sampled (temperature {}, seed {})", options.temperature, options.seed),
                           stop_text(g));
    if (g.terminal && !g.loaded.input.ablation.empty())
      g.out << fmt::format("ablated: {}, in the prompt's run and every step\n",
                           ablation_label(g.loaded.input.ablation));
    const std::string first =
        fmt::format("══ Token 1: the whole {}, every step ══", model.decoder_only() ? "prompt" : "source and <BOS>");
    if (g.terminal) g.out << "\n" << first << "\n";
    if (g.page) g.page->layer_header(first);
    const auto walkthrough =
        start_walkthrough(g.out, prompt, model, g.loaded.input, g.walk, !g.terminal, true, g.lesson.get());
    prompt.set_entry_observer([&](const TraceEntry& e) { walkthrough->add(e); });
    g.decoder->prefill(g.loaded.input, prompt);
    walkthrough->finish();
    print_cache_after_prompt(g.terminal, g.page, *g.decoder, model, g.walk);
  } else {
    g.decoder->prefill(g.loaded.input, prompt);
  }
  if (g.dump) dump_caches(*g.dump, 0, *g.decoder);
}

// --no-cache: the whole prefix again, as attn explain would run it, into a new cache. The
// model's input is not touched: the prefix is a run input of its own.
void rerun_prefix(Generation& g) {
  auto full = std::make_unique<KvCacheDecoder>(g.model(), g.loaded.input.ablation);
  Trace again(true);
  again.keep_entries(false);
  RunInput prefix = g.loaded.input;
  TokenInput& sequence = g.model().decoder_only() ? prefix.source_tokens : prefix.target_tokens;
  sequence.texts.clear();
  sequence.tokens = {g.tokens};
  full->prefill(prefix, again);
  g.decoder = std::move(full);
}

// Token after token until --stop, -n or the end of a learned position table.
void generate_tokens(Generation& g) {
  const Model& model = g.model();
  const GenerateOptions& options = g.options;
  const SamplingOptions sampling{options.temperature, options.top_k, options.top_p};
  NumpyRandom rng(options.seed);
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  std::size_t draws = 0;
  for (std::size_t n = 1;; ++n) {
    const std::vector<double>& logits = g.decoder->logits();
    const SamplingResult choice = choose_next_token(logits.data(), logits.size(), sampling, never, &rng);
    if (g.draw) print_choice(g.terminal, g.page, choice, sampling, model, g.tokens, n, draws, options.seed, g.walk);
    if (choice.draw) ++draws;
    const std::string token = model.vocab.token(choice.id);
    if (g.stop && choice.id == *g.stop) break;
    if (std::find(g.eos_ids.begin(), g.eos_ids.end(), choice.id) != g.eos_ids.end()) break;
    g.generated.push_back(token);
    g.generated_ids.push_back(choice.id);
    g.tokens.push_back(token);
    if (n == options.max_new_tokens) break;
    if (model.checkpoint.present() && model.checkpoint.max_positions &&
        g.decoder->length() >= model.checkpoint.max_positions) {
      const std::string note =
          fmt::format("the model has {} positions: no room for more", model.checkpoint.max_positions);
      if (g.terminal) g.out << "\nnote: " << note << "\n";
      if (g.page) g.page->note(note);
      break;
    }
    if (model.config.positional_encoding == PositionalEncoding::Learned &&
        g.decoder->length() >= model.config.max_len) {
      const std::string note = fmt::format("the position table has {} rows: no room for more", model.config.max_len);
      if (g.terminal) g.out << "\nnote: " << note << "\n";
      if (g.page) g.page->note(note);
      break;
    }
    if (options.no_cache) {
      rerun_prefix(g);
      continue;
    }
    Trace step(true);
    step.keep_entries(g.draw);
    if (g.dump) step.set_sink([&](const TraceRecord& r) { dump_record(*g.dump, n, r); });
    g.decoder->step(choice.id, step);
    g.saved += g.decoder->last_cost().without_cache - g.decoder->last_cost().with_cache;
    if (g.dump) dump_caches(*g.dump, n, *g.decoder);
    if (g.draw) print_generation_step(g.terminal, g.page, step, *g.decoder, model, g.tokens, n + 1, g.walk);
  }
}

// The generated text as the tokenizer decodes it: a checkpoint's ids (skipping special
// tokens and the rows no token has; its text starts with its space, " Cere arrows"), or a
// word model's words joined by spaces. Raw: what a script reads from --quiet and --json.
std::string decoded_text(const Generation& g) {
  const Model& model = g.model();
  std::string text;
  if (!model.checkpoint.present()) {
    for (const auto& t : g.generated) text += (text.empty() ? "" : " ") + t;
    return text;
  }
  std::vector<std::size_t> tokens;
  for (const std::size_t id : g.generated_ids)
    if (id < model.tokenizer->size()) tokens.push_back(id);
  return model.tokenizer->decode(tokens, true);
}

// What was generated, on the terminal (or alone with --quiet or --json) and the page; then
// the lesson and the dump committed.
void finish(Generation& g, const Trace& prompt) {
  const std::string decoded = decoded_text(g);
  // As the walkthrough shows it: a checkpoint's text in quotes (it starts with its space),
  // escaped as every text shown is.
  const std::string text = g.model().checkpoint.present() ? printable("\"" + decoded + "\"") : decoded;
  const std::string count = fmt::format("{} token{}", g.generated.size(), g.generated.size() == 1 ? "" : "s");
  const std::string saved = fmt::format(
      "The KV cache saved {} multiply-adds over running the whole prefix for every token.", grouped_number(g.saved));
  if (g.terminal)
    g.out << fmt::format("\nGenerated {}: {}\n", count, text) << saved << "\n";
  else if (g.options.json)
    std::cout << nlohmann::json{{"ids", g.generated_ids}, {"text", decoded}}.dump(
                     -1, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  else if (g.options.run.dump_path != "-")
    std::cout << decoded << "\n";
  if (g.page) {
    g.page->layer_header(fmt::format("══ Generated {}: {} ══", count, text));
    g.page->line(saved);
  }
  if (g.lesson) {
    // A walkthrough that could not be written fails the run before the lesson is committed.
    check_standard_output();
    g.lesson->commit();
  }
  if (g.dump) {
    check_standard_output();
    g.dump->finish(prompt);
  }
}

}  // namespace

int run_generate(const GenerateOptions& options) {
  const std::unique_ptr<Generation> generation = prepare(options);
  Trace prompt(!generation->loaded.input.batched);
  run_prompt(*generation, prompt);
  generate_tokens(*generation);
  finish(*generation, prompt);
  return 0;
}

}  // namespace attn::cli

#include "generate_command.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/generate.h"
#include "attn/product_kernel.h"
#include "attn/walkthrough.h"
#include "command_run.h"
#include "html_option.h"
#include "present/print_beams.h"
#include "present/print_generation.h"
#include "present/progress.h"
#include "session/generation.h"
#include "standard_streams.h"
#include "validators.h"
#include "walkthrough_choice.h"

namespace attn::cli {

namespace {

// Whether the environment asks for a checkpoint's matrices in panels (ATTN_PANELS=1,
// docs/cli.md; LoadOptions::weights_in_panels). Not the default: a Llama-1B-shaped token
// took 0.8x of its time so, but the copy of 2.47 GB into new memory took 1 to 5 s of page
// population on this project's virtual machines, more than 48 tokens saved
// (docs/performance.md).
bool panels_requested() {
  const char* panels = std::getenv("ATTN_PANELS");
  return panels && std::string(panels) == "1";
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
    for (const auto& [key, cache] : {std::pair{"k", &decoder.caches()[l].k}, std::pair{"v", &decoder.caches()[l].v}}) {
      const Tensor tensor = cache->as_tensor();
      StepId id;
      id.kind = std::string(key) == "k" ? StepKind::KeyHeads : StepKind::ValueHeads;
      id.stack = Stack::Decoder;
      id.layer = static_cast<int>(l);
      id.block = Block::MaskedSelfAttention;
      const std::string name = fmt::format("step.{}.cache.decoder.{}.{}", t, l, key);
      dump.add(TraceRecord{id, name, tensor.shape, tensor.axes, tensor.data.data(), none});
    }
}

// generate's outputs and how it words them: --dump, --html, -q, --json and the walkthrough's.
void add_output_options(CLI::App& generate, GenerateOptions& options) {
  OutputChoice& output = options.output;
  PrintChoice& print = options.print;
  generate.add_flag("--no-cache", options.rules.no_cache,
                    "Run the whole prefix again for every token instead of using the KV cache (for timing)");
  generate.add_option("--stop", options.rules.stop, "Stop after generating this token")->capture_default_str();
  generate
      .add_option("--dump", output.dump_path,
                  "Write every step's tensors (step.<t>.<name>) and caches to FILE as JSON, or .npz")
      ->check(non_empty("a file name"));
  add_html_option(generate, output.html_path);
  generate.add_flag("-q,--quiet", output.quiet,
                    "Print the generated text alone, exactly as the tokenizer decodes it (for a script to read)");
  generate.add_flag("--timings", output.timings,
                    "Print on stderr how long loading, the prompt and the new tokens took (a token's: the median "
                    "step with the KV cache), and on how many threads");
  generate.add_flag("--json", options.json,
                    "Print {\"ids\": [...], \"text\": \"...\"} alone: the generated ids and their decoded text");
  generate.add_flag("--brief", print.brief, "Leave out the explanations");
  generate.add_flag("--full", print.full,
                    "Show every step in full: the first token's, and every number of each later token's new row "
                    "with every head's scores and weights (a big model's later tokens are otherwise a page each)");
  generate.add_option("--precision", print.precision, "Digits after the point when printing tensors")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  generate.add_option("--top", print.top_k, "Show the K most probable next tokens")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  add_color_option(generate, print);
}

// Beam search instead of one greedy or sampled sequence.
void add_beam_options(CLI::App& generate, BeamRules& beams) {
  generate
      .add_option("--beams", beams.beams,
                  "Beam search: keep the N most probable sequences at every token, as Hugging Face's generate "
                  "(num_beams); 1: greedy")
      ->transform(non_negative_integer())
      ->capture_default_str();
  generate
      .add_option("--length-penalty", beams.length_penalty,
                  "Beam search: a finished sequence scores its log-probability / length^X (above 0 favours longer "
                  "ones)")
      ->check(finite_number(-kNoBound, false, kNoBound, false, "(of any sign)"))
      ->capture_default_str();
  const std::map<std::string, EarlyStopping> early{
      {"false", EarlyStopping::Heuristic}, {"true", EarlyStopping::AtOnce}, {"never", EarlyStopping::Never}};
  generate
      .add_option("--early-stopping", beams.early_stopping,
                  "Beam search: stop when no beam can beat the N finished sequences by the current length (false), "
                  "as soon as N have finished (true), or by the longest length (never)")
      ->transform(CLI::CheckedTransformer(early))
      ->default_str("false");
}

}  // namespace

void setup_generate(CLI::App& app, GenerateOptions& options) {
  CLI::App* generate = app.add_subcommand(
      "generate",
      "Generate text one token at a time with a KV cache: continue TEXT (decoder-only) or translate it "
      "(encoder-decoder); greedy, sampled or by beam search");
  generate->add_option("text", options.model.text, "The prompt to continue (decoder-only) or the source sentence");
  add_model_source(*generate, options.model, kGenerateModelSource);
  generate->add_option("-n,--max-new-tokens", options.rules.max_new_tokens, "Generate at most N tokens")
      ->transform(non_negative_integer())
      ->capture_default_str();
  add_sampling_options(*generate, options.sampling);
  add_beam_options(*generate, options.beams);
  add_memory_option(*generate, options.reading.max_memory_gib,
                    "Refuse runs estimated to need more than this many GiB, the prompt and -n new tokens counted "
                    "(default: half the machine's memory)");
  add_reading_options(*generate, options.reading, /*with_lens=*/false);
  add_output_options(*generate, options);
  run_on_parse(*generate, options, run_generate);
}

namespace {

// Where a generation is shown: the walkthrough's terminal (stderr when the dump takes
// stdout; none with --quiet or --json), the lesson's page, the dump.
struct GenerateOutputs {
  explicit GenerateOutputs(std::ostream& out) : out(out) {}
  std::ostream& out;
  WalkthroughOptions walk;
  std::unique_ptr<TraceDump> dump;
  std::unique_ptr<HtmlLesson> lesson;
  PageRenderer* page = nullptr;
  std::ostream* terminal = nullptr;  // nullptr with --quiet or --json
  bool draw = false;                 // on the terminal or the page
  // On a terminal's stderr while nothing else prints there (-q, --json): the prompt's layers,
  // then each token.
  std::unique_ptr<ProgressLine> progress;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::vector<double> chosen_at;  // seconds since `started` at which each new token was chosen
};

// Opens the dump and the lesson: --html draws the same walkthrough on a web page, the first
// token's steps and then each new token's, committed once the run is over; a path that
// cannot take it is refused here.
std::unique_ptr<GenerateOutputs> open_outputs(const GenerateOptions& options, const Session& session,
                                              const Generation& generation) {
  const OutputChoice& output = options.output;
  auto o = std::make_unique<GenerateOutputs>(output.dump_to_stdout() ? std::cerr : std::cout);
  const Model& model = session.model();
  o->walk = walkthrough_options(options.print, StepChoice{}, output.dump_to_stdout());
  if (!output.dump_path.empty()) o->dump = std::make_unique<TraceDump>(output.dump_path, model, session.input());
  RunPlan plan = generation.plan();
  plan.lesson_bytes = check_html_memory(output.html_path, model, o->walk,
                                        PageSize{&session.input(), false, generation.room()}, session.load_options());
  if (plan.lesson_bytes) session.check_memory(plan);
  o->lesson = open_html_lesson(output, options.model, "attn generate", model, o->walk);
  o->page = o->lesson ? &o->lesson->keep_open() : nullptr;
  const bool alone = output.quiet || options.json;  // the result alone on standard output
  o->terminal = alone ? nullptr : &o->out;
  o->draw = !alone || o->lesson;
  if (alone && ::isatty(STDERR_FILENO))
    o->progress = std::make_unique<ProgressLine>(std::cerr, model.encoder.size(), model.decoder.size());
  return o;
}

// Step 0: the prompt (and for an encoder-decoder the source), the whole run shown; its keys
// and values fill the cache.
void run_prompt(Generation& generation, const Session& session, GenerateOutputs& o, Trace& prompt,
                const std::string& choice = "") {
  prompt.keep_entries(o.draw);
  if (o.dump || o.progress)
    prompt.set_sink([&o](const TraceRecord& r) {
      if (o.progress) o.progress->update(r.id, 0, seconds_since(o.started));
      if (o.dump) dump_record(*o.dump, 0, r);
    });
  if (o.draw) {
    print_generation_start(o.terminal, o.page, generation, session.model(), session.input().ablation,
                           o.walk.array.line_width, choice);
    const auto walkthrough =
        start_walkthrough(o.out, prompt, session.model(), session.input(), o.walk, !o.terminal, true, o.lesson.get());
    prompt.set_entry_observer([&](const TraceEntry& e) { walkthrough->add(e); });
    generation.prefill(prompt);
    walkthrough->finish();
    print_cache_after_prompt(o.terminal, o.page, generation.decoder(), session.model(), o.walk);
  } else {
    generation.prefill(prompt);
  }
  if (o.dump) dump_caches(*o.dump, 0, generation.decoder());
}

// Token after token, each choice and step shown and dumped as it comes.
void generate_tokens(Generation& generation, const Model& model, GenerateOutputs& o) {
  const SamplingChoice& s = generation.sampling();
  const SamplingOptions sampling{s.temperature, s.top_k, s.top_p};
  Generation::Observer observer;
  observer.chose = [&](const SamplingResult& choice, std::size_t n, std::size_t draws) {
    o.chosen_at.push_back(seconds_since(o.started));
    if (o.draw)
      print_choice(o.terminal, o.page, choice, sampling, model, generation.tokens(), n, draws, s.seed, o.walk);
    if (o.progress)
      o.progress->show(fmt::format("attn: token {} of at most {}, {:.1f} s", n, generation.rules().max_new_tokens,
                                   seconds_since(o.started)),
                       seconds_since(o.started));
  };
  observer.ran_out = [&](const std::string& note) { print_generation_note(o.terminal, o.page, note); };
  observer.starting_step = [&](Trace& step, std::size_t n) {
    step.keep_entries(o.draw);
    if (o.dump) step.set_sink([&o, n](const TraceRecord& r) { dump_record(*o.dump, n, r); });
  };
  observer.stepped = [&](const Trace& step, std::size_t n) {
    if (o.dump) dump_caches(*o.dump, n, generation.decoder());
    if (o.draw)
      print_generation_step(o.terminal, o.page, step, generation.decoder(), model, generation.tokens(), n + 1, o.walk);
  };
  generation.generate(observer);
}

// What was generated, on the terminal (or alone with --quiet or --json) and the page; then
// the lesson and the dump committed.
void finish(const GenerateOptions& options, const Generation& generation, const Model& model, GenerateOutputs& o,
            const Trace& prompt) {
  print_generated(o.terminal, o.page, generation, model);
  if (!o.terminal && (options.json || !options.output.dump_to_stdout()))
    print_generated_alone(std::cout, generation, options.json);
  if (o.lesson) {
    // A walkthrough that could not be written fails the run before the lesson is committed.
    check_standard_output();
    o.lesson->commit();
  }
  if (o.dump) {
    check_standard_output();
    o.dump->finish(prompt);
  }
}

}  // namespace

namespace {

// --beams N: the prompt's run as greedy generation shows it, then each step's candidates and
// beams, and the hypotheses.
int run_beam_search(const GenerateOptions& options, Session& session) {
  if (!options.output.dump_path.empty())
    throw InputError("--dump", "", "expected no --dump beside --beams: the dump holds one sequence's steps");
  if (!options.output.html_path.empty())
    throw InputError("--html", "", "expected no --html beside --beams: the lesson's page shows one sequence");
  RunPlan plan;
  plan.shown = !(options.output.quiet || options.json);
  BeamSearch search(session, options.beams, options.rules, plan);
  const auto o = open_outputs(options, session, search.generation());
  Trace prompt(!session.input().batched);
  run_prompt(search.generation(), session, *o, prompt, beam_search_text(options.beams));
  search.start();
  search.run([&](const BeamStep& step) {
    if (o->terminal) print_beam_step(*o->terminal, step, search, session.model(), o->walk);
    if (o->progress)
      o->progress->show(fmt::format("attn: token {} of at most {}, {} beams, {:.1f} s", step.number, search.limit(),
                                    options.beams.beams, seconds_since(o->started)),
                        seconds_since(o->started));
  });
  if (o->progress) o->progress->clear();
  if (o->terminal)
    print_beam_result(*o->terminal, search, session.model(), o->walk);
  else
    print_beam_result_alone(std::cout, search, options.json);
  return 0;
}

}  // namespace

// --timings: the load, the prompt's forward pass, and the new tokens: the first chosen from
// the prompt's scores, each later one after a step with the KV cache, whose median is a
// token's time (bench/llama reads it: the load's share left out, which whole processes
// subtracted leave in when it varies).
void print_generate_timings(double load_seconds, double prompt_seconds, std::size_t prompt_tokens,
                            const std::vector<double>& chosen_at, double tokens_from) {
  std::string tokens;
  if (chosen_at.size() >= 2) {
    std::vector<double> steps;
    for (std::size_t i = 1; i < chosen_at.size(); ++i) steps.push_back(chosen_at[i] - chosen_at[i - 1]);
    std::sort(steps.begin(), steps.end());
    const std::size_t n = steps.size();
    const double median = n % 2 ? steps[n / 2] : (steps[n / 2 - 1] + steps[n / 2]) / 2;
    tokens = fmt::format(", a token {:.4f} s (the median of {} step{})", median, n, n == 1 ? "" : "s");
  }
  std::cerr << fmt::format(
      "attn: load {:.3f} s, prompt {:.3f} s ({} token{}), {} new token{} {:.3f} s{}, {} thread{}, "
      "{} product kernel\n",
      load_seconds, prompt_seconds, prompt_tokens, prompt_tokens == 1 ? "" : "s", chosen_at.size(),
      chosen_at.size() == 1 ? "" : "s", chosen_at.empty() ? 0.0 : chosen_at.back() - tokens_from, tokens,
      omp_get_max_threads(), omp_get_max_threads() == 1 ? "" : "s", attn::product_kernel_name());
}

int run_generate(const GenerateOptions& options) {
  check_generation_choices(options.sampling, options.rules);
  check_beam_rules(options.beams, options.sampling, options.rules);
  if (options.json && options.output.dump_to_stdout())
    throw InputError("--json", "", "expected standard output to itself, found --dump - writing there too");
  if (!options.output.dump_path.empty()) check_dump_target(options.output.dump_path, {options.model.model_file});
  LoadOptions load;
  load.trace_kept = false;  // the prompt's walkthrough forgets the layers it has printed
  load.ablation = !options.reading.ablate.empty();
  // Only the steps compute with the weights (the lesson and the dumps widen the one they
  // show or write): a checkpoint's stay as stored.
  load.weights_as_stored = true;
  load.weights_in_panels = panels_requested();
  const auto load_started = std::chrono::steady_clock::now();
  const auto session = open_session(options.model, options.reading, options.output.dump_path, false, load);
  const double load_seconds = seconds_since(load_started);
  if (options.beams.beams > 1) return run_beam_search(options, *session);
  RunPlan plan;
  plan.shown = !(options.output.quiet || options.json);
  plan.dump_held = dump_memory(options.output.dump_path, session->model(), DumpOptions{});  // as open_outputs writes it
  Generation generation(*session, options.sampling, options.rules, plan);
  const auto outputs = open_outputs(options, *session, generation);
  Trace prompt(!session->input().batched);
  const auto prompt_started = std::chrono::steady_clock::now();
  run_prompt(generation, *session, *outputs, prompt);
  const double prompt_seconds = seconds_since(prompt_started), tokens_from = seconds_since(outputs->started);
  const std::size_t prompt_tokens = generation.tokens().size();
  generate_tokens(generation, session->model(), *outputs);
  if (outputs->progress) outputs->progress->clear();
  finish(options, generation, session->model(), *outputs, prompt);
  if (options.output.timings)
    print_generate_timings(load_seconds, prompt_seconds, prompt_tokens, outputs->chosen_at, tokens_from);
  return 0;
}

}  // namespace attn::cli

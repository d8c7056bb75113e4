#include "generate_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "attn/walkthrough.h"
#include "core/numpy_random.h"
#include "html_option.h"
#include "model/token_input.h"
#include "present/print_generation.h"
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
}

// The decoder's starting sequence: a decoder-only model's input text, or <BOS> for an
// encoder-decoder (whose source is the text).
std::vector<std::string> start_tokens(Model& model) {
  if (!model.has_decoder())
    throw InputError(model.source, "decoder",
                     "this model has no decoder to generate with: give a decoder-only model (model.architecture "
                     "\"decoder-only\") or an encoder-decoder");
  if (!model.has_tokens())
    throw InputError(model.source, "input", "generate reads text: this model's input is numbers (input.X)");
  if (model.batched)
    throw InputError(model.source, "input",
                     "generate continues a single text; this file's input is a batch: give one TEXT on the command "
                     "line");
  if (model.decoder_only()) return token_lists(model.source_tokens)[0];
  if (!model.has_target())
    throw InputError(model.source, model.decoder.empty() ? "decoder" : "model.architecture",
                     "this model has no decoder to generate with: give a decoder-only model (model.architecture "
                     "\"decoder-only\") or an encoder-decoder");
  if (!start_from_bos(model))
    throw InputError(model.source, "vocab", "the decoder starts from \"<BOS>\", which this vocabulary lacks");
  return {"<BOS>"};
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
  generate->add_option("-n,--max-new-tokens", options.max_new_tokens, "Generate at most N tokens")
      ->transform(non_negative_integer())
      ->capture_default_str();
  generate->add_option("--temperature", options.temperature, "Divide the logits by T before sampling; 0: greedy")
      ->capture_default_str();
  generate->add_option("--top-k", options.top_k, "Sample from the K most probable tokens only; 0: all")
      ->transform(non_negative_integer())
      ->capture_default_str();
  generate->add_option("--top-p", options.top_p, "Sample from the most probable tokens reaching probability P")
      ->capture_default_str();
  generate->add_option("--seed", options.seed, "Seed of the sampling stream, np.random.RandomState(S)")
      ->capture_default_str();
  generate->add_flag("--no-cache", options.no_cache,
                     "Run the whole prefix again for every token instead of using the KV cache (for timing)");
  generate->add_option("--stop", options.stop, "Stop after generating this token")->capture_default_str();
  generate
      ->add_option("--dump", run.dump_path,
                   "Write every step's tensors (step.<t>.<name>) and caches to FILE as JSON, or .npz")
      ->check(non_empty("a file name"));
  add_html_option(*generate, run.html_path);
  generate->add_flag("-q,--quiet", run.quiet, "Print the generated text alone, on one line");
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

int run_generate(const GenerateOptions& options) {
  check_options(options);
  const ExplainOptions& run = options.run;
  if (!run.dump_path.empty()) check_dump_target(run.dump_path, {run.model_file});
  LoadOptions load;
  Model model = load_run_model(run, load);
  std::vector<std::string> tokens = start_tokens(model);
  auto decoder = std::make_unique<KvCacheDecoder>(model);  // no output head: refused here
  std::optional<std::size_t> stop = model.vocab.find(options.stop);
  if (!stop && options.stop != "<EOS>")
    throw InputError("--stop", "",
                     fmt::format("\"{}\" is not in the vocabulary of {}, so it could never be generated",
                                 printable(options.stop), model.source));
  check_run_memory(model, load);

  const WalkthroughOptions walk = walkthrough_options(run);
  const bool print = !run.quiet;
  std::ostream& out = run.dump_path == "-" ? std::cerr : std::cout;
  std::unique_ptr<TraceDump> dump;
  if (!run.dump_path.empty()) dump = std::make_unique<TraceDump>(run.dump_path, model);
  // --html: the same walkthrough on a web page, the first token's steps and then each new
  // token's, committed once the run is over; a path that cannot take it is refused here.
  const auto lesson = open_html_lesson(run, "attn generate", model, walk);
  PageRenderer* page = lesson ? &lesson->keep_open() : nullptr;
  std::ostream* terminal = print ? &out : nullptr;
  const bool draw = print || lesson;
  SamplingOptions sampling{options.temperature, options.top_k, options.top_p};
  NumpyRandom rng(options.seed);
  const std::vector<std::size_t> never = model.vocab.never_written_ids();

  // Step 0: the prompt (and for an encoder-decoder the source), the whole run shown.
  Trace prompt(!model.batched);
  prompt.keep_entries(draw);
  prompt.set_sink([&](const TraceRecord& r) {
    decoder->observe(r);
    if (dump) dump_record(*dump, 0, r);
  });
  if (draw) {
    if (print)
      out << fmt::format("Generating with {}: {} token{} to start from, at most {} new, {}; stops after \"{}\"\n",
                         printable(model.source), tokens.size(), tokens.size() == 1 ? "" : "s", options.max_new_tokens,
                         options.temperature == 0
                             ? "greedy (temperature 0)"
                             : fmt::format("sampled (temperature {}, seed {})", options.temperature, options.seed),
                         printable(options.stop));
    const std::string first =
        fmt::format("══ Token 1: the whole {}, every step ══", model.decoder_only() ? "prompt" : "source and <BOS>");
    if (print) out << "\n" << first << "\n";
    if (page) page->layer_header(first);
    const auto walkthrough = start_walkthrough(out, prompt, model, walk, !print, true, lesson.get());
    prompt.set_entry_observer([&](const TraceEntry& e) { walkthrough->add(e); });
    run_model(model, prompt);
    walkthrough->finish();
    print_cache_after_prompt(terminal, page, *decoder, model, walk);
  } else {
    run_model(model, prompt);
  }
  if (dump) dump_caches(*dump, 0, *decoder);

  std::vector<std::string> generated;
  std::size_t draws = 0;
  std::uint64_t saved = 0;
  for (std::size_t n = 1;; ++n) {
    const std::vector<double>& logits = decoder->logits();
    const SamplingResult choice = choose_next_token(logits.data(), logits.size(), sampling, never, &rng);
    if (draw) print_choice(terminal, page, choice, sampling, model, tokens, n, draws, options.seed, walk);
    if (choice.draw) ++draws;
    const std::string token = model.vocab.token(choice.id);
    if (stop && choice.id == *stop) break;
    generated.push_back(token);
    tokens.push_back(token);
    if (n == options.max_new_tokens) break;
    if (model.config.positional_encoding == PositionalEncoding::Learned && decoder->length() >= model.config.max_len) {
      const std::string note = fmt::format("the position table has {} rows: no room for more", model.config.max_len);
      if (print) out << "\nnote: " << note << "\n";
      if (page) page->note(note);
      break;
    }
    Trace step(true);
    step.keep_entries(draw);
    if (dump) step.set_sink([&](const TraceRecord& r) { dump_record(*dump, n, r); });
    if (options.no_cache) {  // the whole prefix again, as attn explain would run it
      auto full = std::make_unique<KvCacheDecoder>(model);
      Trace again(true);
      again.keep_entries(false);
      again.set_sink([&](const TraceRecord& r) { full->observe(r); });
      if (model.decoder_only()) {
        model.source_tokens.texts.clear();
        model.source_tokens.tokens = {tokens};
      } else {
        model.target_tokens.texts.clear();
        model.target_tokens.tokens = {tokens};
      }
      run_model(model, again);
      decoder = std::move(full);
      continue;
    }
    decoder->step(choice.id, step);
    saved += decoder->last_cost().without_cache - decoder->last_cost().with_cache;
    if (dump) dump_caches(*dump, n, *decoder);
    if (draw) print_generation_step(terminal, page, step, *decoder, model, tokens, n + 1, walk);
  }

  std::string text;
  for (const auto& t : generated) text += (text.empty() ? "" : " ") + t;
  if (print) {
    out << fmt::format("\nGenerated {} token{}: {}\n", generated.size(), generated.size() == 1 ? "" : "s", text);
    out << fmt::format("The KV cache saved {} multiply-adds over running the whole prefix for every token.\n",
                       grouped_number(saved));
  } else if (run.dump_path != "-") {
    std::cout << text << "\n";
  }
  if (page) {
    page->layer_header(
        fmt::format("══ Generated {} token{}: {} ══", generated.size(), generated.size() == 1 ? "" : "s", text));
    page->line(fmt::format("The KV cache saved {} multiply-adds over running the whole prefix for every token.",
                           grouped_number(saved)));
  }
  if (lesson) {
    // A walkthrough that could not be written fails the run before the lesson is committed.
    check_standard_output();
    lesson->commit();
  }
  if (dump) {
    check_standard_output();
    dump->finish(prompt);
  }
  return 0;
}

}  // namespace attn::cli

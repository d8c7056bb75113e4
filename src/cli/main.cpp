// attn: a command-line walkthrough of transformer attention.
// Exit codes: 0 ok, 2 bad usage or bad input, 1 anything else.
#include <malloc.h>
#include <omp.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <Eigen/Core>

#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/product_kernel.h"
#include "attribute_command.h"
#include "examples_command.h"
#include "explain_command.h"
#include "generate_command.h"
#include "grad_command.h"
#include "heads_command.h"
#include "init_command.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "patch_command.h"
#include "reference.h"
#include "session/session.h"
#include "standard_streams.h"
#include "steps_command.h"
#include "tokenize_command.h"
#include "train_command.h"
#include "validate_command.h"
#include "vocab_command.h"
#include "wait_policy.h"

namespace {

// OpenMP's thread count capped at the CPUs this process may run on (its affinity), before
// any thread starts, and said once: more threads than CPUs only wait for each other, and a
// huge OMP_NUM_THREADS (100000) made libgomp crash starting them.
void cap_threads_at_cpus() {
  const int asked = omp_get_max_threads(), cpus = omp_get_num_procs();
  if (cpus < 1 || asked <= cpus) return;
  omp_set_num_threads(cpus);
  std::cerr << "attn: OMP_NUM_THREADS asks for " << asked << " threads, more than the " << cpus << " CPU"
            << (cpus == 1 ? "" : "s") << " attn may run on: it uses " << cpus << "\n";
}

// How the process runs models: the threads' waiting policy, the heap, Eigen's threads.
void prepare_process() {
  // Threads waiting for work sleep (OMP_WAIT_POLICY=PASSIVE) unless the user chose a
  // policy: wait_policy.cpp answers libgomp's getenv, without running attn twice.
#ifdef M_MMAP_THRESHOLD
  // Every step returns a new tensor and the previous ones are freed: glibc would hand
  // each big one back to the kernel and fault it in again, page by page (half a gigabyte
  // of page faults per run at 512 tokens, measured). Keeping freed memory in the heap for
  // reuse avoids that. M_MMAP_THRESHOLD stops at 32 MB, and blocks above it (a score
  // tensor from about 1000 tokens: 268 MB at 2048) were still mapped and unmapped per
  // step, so no block is mapped at all (M_MMAP_MAX 0): at 1024 tokens 114K page faults
  // instead of 346K, one per page of the peak, for a peak 14% higher (docs/performance.md).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  // OpenMP's threads (OMP_NUM_THREADS, else one per CPU attn may run on), but not Eigen's
  // own: attn splits large products into column blocks itself (src/kernels/matmul.cpp),
  // fixed by the sizes so that the thread count changes no bit, and Eigen's threaded
  // product, which synchronizes inside every block and cuts its work by the thread count,
  // measured slower (docs/performance.md). With one thread here, a product that is not
  // split (a single row, say) stays on one thread.
  Eigen::setNbThreads(1);
  cap_threads_at_cpus();
}

// Every subcommand's options, as the parser fills them.
struct Commands {
  attn::cli::ExplainOptions explain;
  attn::cli::GenerateOptions generate;
  attn::cli::GradOptions grad;
  attn::cli::StepsOptions steps;
  attn::cli::ValidateOptions validate;
  attn::cli::InitOptions init;
  attn::cli::TrainCommandOptions train;
  attn::cli::TokenizeOptions tokenize;
  attn::cli::HeadsOptions heads;
  attn::cli::VocabOptions vocab;
  attn::cli::PatchOptions patch;
  attn::cli::ExperimentOptions attribute;
};

void setup_commands(CLI::App& app, Commands& c) {
  attn::cli::setup_explain(app, c.explain);
  attn::cli::setup_examples(app);
  attn::cli::setup_generate(app, c.generate);
  attn::cli::setup_grad(app, c.grad);
  attn::cli::setup_steps(app, c.steps);
  attn::cli::setup_validate(app, c.validate);
  attn::cli::setup_init(app, c.init);
  attn::cli::setup_train(app, c.train);
  attn::cli::setup_tokenize(app, c.tokenize);
  attn::cli::setup_heads(app, c.heads);
  attn::cli::setup_vocab(app, c.vocab);
  attn::cli::setup_patch(app, c.patch);
  attn::cli::setup_attribute(app, c.attribute);
}

// What a NumericError's numbers came from, named as the subcommand that ran names it: the
// model a walkthrough ran, or what `attn train` trained. The subcommands that run no model
// (examples, init, validate) name themselves.
std::string numeric_error_source(const CLI::App& app, const Commands& c) {
  if (app.got_subcommand("explain")) return attn::model_source_name(c.explain.model);
  if (app.got_subcommand("grad")) return attn::model_source_name(c.grad.model);
  if (app.got_subcommand("steps")) return attn::model_source_name(c.steps.run.model);
  if (app.got_subcommand("generate")) return attn::model_source_name(c.generate.model);
  if (app.got_subcommand("heads")) return attn::model_source_name(c.heads.model);
  if (app.got_subcommand("vocab")) return attn::model_source_name(c.vocab.model);
  if (app.got_subcommand("patch")) return attn::model_source_name(c.patch.run.model);
  if (app.got_subcommand("attribute")) return attn::model_source_name(c.attribute.model);
  if (app.got_subcommand("train")) return attn::cli::train_source_name(c.train);
  for (const CLI::App* command : app.get_subcommands()) return "attn " + command->get_name();
  return "attn";
}

// Parses the command line and runs the subcommand it names; maps what it throws to an exit
// code: 0 ok, 2 bad usage or bad input, 1 anything else.
int parse_and_run(CLI::App& app, const Commands& commands, int argc, char** argv) {
  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() != 0) throw;
      app.exit(e);  // --help, --version
    }
    // Output that could not be written is a failure, not a success with the output lost.
    attn::cli::check_standard_output();
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // The parser quotes what the user typed: one printable line, whatever the bytes.
    std::cerr << attn::printable(std::string("attn: ") + e.what() + " (run 'attn --help' for usage)") << "\n";
    return 2;
  } catch (const attn::InputError& e) {
    // Already "FILE: json.path: expected ..., found ..."
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const attn::InputErrors& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const attn::NumericError& e) {
    // "encoder.0.attention.scores[0, 1, 1] is inf (overflow)": the model's numbers are the
    // cause, so it is bad input and names the model file like any other input error.
    std::cerr << attn::printable(numeric_error_source(app, commands) + ": " + e.what()) << "\n";
    return 2;
  } catch (const attn::EnvironmentError& e) {
    // A whole line already: "attn: cannot write to standard output: ...", "PATH: ...".
    std::cerr << attn::printable(e.what()) << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "attn: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attn: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything opens a file: a closed standard output must not become the dump.
  attn::cli::guard_standard_streams();
  // libgomp has read its environment (as it was loaded): a thread count it could not read
  // was kept from it, and is refused here in one line.
  if (const char* threads = attn::cli::refused_thread_count()) {
    std::cerr << attn::printable(std::string("OMP_NUM_THREADS: expected a positive number of threads (or a list of "
                                             "them, one per nesting level, as 4,2), found \"") +
                                 threads + "\"")
              << "\n";
    return 2;
  }
  prepare_process();
  // The large products' kernel, once: the best this CPU runs, or the one ATTN_CPU names.
  if (const auto refused = attn::choose_product_kernel(std::getenv("ATTN_CPU"))) {
    std::cerr << *refused << "\n";
    return 2;
  }
  CLI::App app{"attn: see how transformer attention works, one step at a time, on numbers you can check"};
  app.set_version_flag("--version", std::string("attn ") + ATTN_VERSION);
  app.require_subcommand(1);

  Commands commands;
  setup_commands(app, commands);

  // `attn --man-page`, `attn --completion bash|zsh`: written from the app just built.
  if (const auto code = attn::cli::write_reference_if_asked(app, ATTN_VERSION, argc, argv)) return *code;

  return parse_and_run(app, commands, argc, argv);
}

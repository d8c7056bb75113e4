// attn: a command-line walkthrough of transformer attention.
// Exit codes: 0 ok, 2 bad usage or bad input, 1 anything else.
#include <iostream>

#include <CLI/CLI.hpp>

#include "attn/default_model.h"
#include "attn/error.h"
#include "attn/examples.h"
#include "examples_command.h"
#include "explain_command.h"
#include "steps_command.h"
#include "validate_command.h"

int main(int argc, char** argv) {
  CLI::App app{"attn: see how transformer attention works, one step at a time, on numbers you can check"};
  app.set_version_flag("--version", std::string("attn ") + ATTN_VERSION);
  app.require_subcommand(1);

  attn::cli::ExplainOptions explain;
  attn::cli::setup_explain(app, explain);
  attn::cli::setup_examples(app);
  attn::cli::ExplainOptions steps;
  attn::cli::setup_steps(app, steps);
  attn::cli::ValidateOptions validate;
  attn::cli::setup_validate(app, validate);

  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "attn: " << e.what() << " (run 'attn --help' for usage)\n";
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
    // The model named as run_explain names it.
    const std::string source = !explain.example.empty()      ? std::string("example ") + attn::find_example(explain.example).name
                               : explain.model_file.empty() ? attn::kDefaultModelSource
                                                            : explain.model_file;
    std::cerr << attn::printable(source + ": " + e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "attn: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "attn: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

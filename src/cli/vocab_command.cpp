#include "vocab_command.h"

#include <cctype>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/model_file.h"
#include "validators.h"

namespace attn::cli {

void setup_vocab(CLI::App& app, VocabOptions& options) {
  CLI::App* vocab = app.add_subcommand(
      "vocab", "List the tokens a model knows, with their ids (the built-in model, -c FILE or --example NAME)");
  ExplainOptions& run = options.run;
  vocab->add_option("-c,--config", run.model_file, "Model file (JSON; - reads standard input); default: built-in model")
      ->check(non_empty("a file name"));
  vocab->add_option("-e,--example", run.example, "A bundled example's model (list them with 'attn examples')")
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  vocab->add_flag("--json", options.json, "Print the tokens as one JSON array, in id order");
  vocab->callback([&options]() {
    const int code = run_vocab(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

namespace {

// A punctuation mark the word splitter makes a token of its own (docs/tokenizer.md, rule 3):
// one ASCII character that is neither a letter, a digit, nor one of ' - _ (word characters).
bool is_mark(const std::string& token) {
  const auto c = token.empty() ? 0 : static_cast<unsigned char>(token[0]);
  return token.size() == 1 && std::ispunct(c) && c != '\'' && c != '-' && c != '_';
}

// "81 words", "79 words and 2 marks", "1 word and 1 mark": the tokens that are not special.
std::string words_and_marks(const Vocabulary& vocab, std::size_t specials) {
  std::size_t marks = 0;
  for (std::size_t id = 0; id < vocab.size(); ++id) marks += is_mark(vocab.token(id)) ? 1 : 0;
  const std::size_t words = vocab.size() - specials - marks;
  const std::string w = fmt::format("{} word{}", words, words == 1 ? "" : "s");
  return marks == 0 ? w : fmt::format("{} and {} mark{}", w, marks, marks == 1 ? "" : "s");
}

}  // namespace

int run_vocab(const VocabOptions& options) {
  LoadOptions load;
  load.weights_as_stored = true;  // the tokens alone are read
  const LoadedModel loaded = load_run_model(options.run, load);
  const Vocabulary& vocab = loaded.model.vocab;
  if (vocab.empty())
    throw InputError(model_source_name(options.run), "vocab",
                     "this model has no vocabulary: its input is numbers (input.X), not words");
  if (options.json) {
    // The tokens as they are spelled (UTF-8), not \u-escaped.
    std::cout << nlohmann::json(vocab.tokens()).dump() << "\n";
    return 0;
  }
  const std::size_t specials = vocab.never_written_ids().size() + (vocab.special_id(SpecialRole::End) ? 1 : 0);
  std::cout << fmt::format("{} tokens in the vocabulary of {} ({} special, {}):\n", vocab.size(),
                           options.run.model_file.empty() && options.run.example.empty()
                               ? std::string("the built-in model")
                               : printable(model_source_name(options.run)),
                           specials, words_and_marks(vocab, specials));
  const std::size_t width = std::to_string(vocab.size() - 1).size();
  for (std::size_t id = 0; id < vocab.size(); ++id)
    std::cout << fmt::format("{:>{}}  {}\n", id, width, printable(vocab.token(id)));
  return 0;
}

}  // namespace attn::cli

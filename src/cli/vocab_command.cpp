#include "vocab_command.h"

#include <cctype>
#include <iostream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/model_file.h"
#include "session/session.h"

namespace attn::cli {

void setup_vocab(CLI::App& app, VocabOptions& options) {
  CLI::App* vocab = app.add_subcommand(
      "vocab", "List the tokens a model knows, with their ids (the built-in model, -c FILE or --example NAME)");
  add_model_source(*vocab, options.model,
                   {"Model file (JSON; - reads standard input); default: built-in model",
                    "A bundled example's model (list them with 'attn examples')", /*checkpoint=*/false});
  vocab->add_flag("--json", options.json, "Print the tokens as one JSON array, in id order");
  run_on_parse(*vocab, options, run_vocab);
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
  const Session session(options.model, ReadingChoice{}, load);
  const Vocabulary& vocab = session.model().vocab;
  if (vocab.empty())
    throw InputError(session.source_name(), "vocab",
                     "this model has no vocabulary: its input is numbers (input.X), not words");
  if (options.json) {
    // The tokens as they are spelled (UTF-8), not \u-escaped.
    std::cout << nlohmann::json(vocab.tokens()).dump() << "\n";
    return 0;
  }
  const std::size_t specials = vocab.never_written_ids().size() + (vocab.special_id(SpecialRole::End) ? 1 : 0);
  std::cout << fmt::format("{} tokens in the vocabulary of {} ({} special, {}):\n", vocab.size(),
                           options.model.model_file.empty() && options.model.example.empty()
                               ? std::string("the built-in model")
                               : printable(session.source_name()),
                           specials, words_and_marks(vocab, specials));
  const std::size_t width = std::to_string(vocab.size() - 1).size();
  for (std::size_t id = 0; id < vocab.size(); ++id)
    std::cout << fmt::format("{:>{}}  {}\n", id, width, printable(vocab.token(id)));
  return 0;
}

}  // namespace attn::cli

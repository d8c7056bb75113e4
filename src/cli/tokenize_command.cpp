#include "tokenize_command.h"

#include <cstring>
#include <iostream>
#include <iterator>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/tokenizer_files.h"
#include "checkpoint/locate.h"
#include "core/memory_budget.h"
#include "model/default_model.h"
#include "option_groups.h"
#include "validators.h"

namespace attn::cli {

namespace {

// Standard input is read whole, but not past this: a text to tokenize is not a gigabyte
// (nor holds a NUL byte).
constexpr std::size_t kMaxStdinBytes = 64 << 20;

std::string read_standard_input() {
  std::string text;
  char buffer[1 << 16];
  while (std::cin.read(buffer, sizeof buffer) || std::cin.gcount() > 0) {
    const auto got = static_cast<std::size_t>(std::cin.gcount());
    // A NUL byte is no text (< /dev/zero, a binary file): refused as it is read.
    if (const void* nul = std::memchr(buffer, '\0', got))
      throw InputError("<stdin>", "",
                       fmt::format("expected a text, found a NUL byte at byte {}",
                                   text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buffer)));
    text.append(buffer, got);
    if (text.size() > kMaxStdinBytes) throw InputError("<stdin>", "", "expected a text of at most 64 MiB, found more");
  }
  return text;
}

void print_table(const Tokenizer& tokenizer, const Encoding& encoding, const std::string& model) {
  std::cout << fmt::format("{} tokens ({}, {} in the vocabulary, from {})\n", encoding.ids.size(), tokenizer.kind(),
                           tokenizer.size(), printable(model));
  std::size_t width = 2;
  for (const std::size_t id : encoding.ids) width = std::max(width, std::to_string(id).size());
  for (const std::size_t id : encoding.ids) {
    const std::string mark = tokenizer.is_special(id) ? "  (special)" : "";
    std::cout << fmt::format("{:>{}}  {}{}\n", id, width, printable(tokenizer.display_piece(id)), mark);
  }
}

// The built-in model's tokenizer: the words of its vocabulary.
std::shared_ptr<const Tokenizer> default_tokenizer() {
  LoadOptions load;
  return load_model_text(default_model_json(), kDefaultModelSource, load).model.tokenizer;
}

}  // namespace

void setup_tokenize(CLI::App& app, TokenizeOptions& options) {
  CLI::App* tokenize =
      app.add_subcommand("tokenize", "Show the ids and pieces a model's tokenizer makes of a text (--model DIR)");
  tokenize
      ->add_option("--model", options.model,
                   "The model: a folder holding tokenizer.json, or vocab.json + merges.txt, or a Hub name in the "
                   "local cache; default: the built-in model's words")
      ->check(non_empty("a folder or a Hub name"));
  tokenize->add_option("text", options.text, "The text to tokenize; \"-\" reads standard input")->required();
  tokenize->add_flag("--json", options.json, "Print {\"ids\": [...], \"tokens\": [...]} (the vocabulary's pieces)");
  tokenize->add_flag("--no-special-tokens", options.no_special_tokens,
                     "Leave out the tokens the tokenizer adds around the text (<s>, <|begin_of_text|>)");
  add_memory_option(*tokenize, options.max_memory_gib,
                    "Refuse a tokenizer file or a text estimated to need more than this many GiB to read and "
                    "tokenize (default: half the machine's memory)");
  run_on_parse(*tokenize, options, run_tokenize);
}

int run_tokenize(const TokenizeOptions& options) {
  set_memory_limit(static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0));
  // A folder, or a Hub name found offline in huggingface_hub's cache; without one, the
  // built-in model's word tokenizer (docs/tokenizer.md).
  const std::shared_ptr<const Tokenizer> tokenizer =
      options.model.empty() ? default_tokenizer()
                            : std::shared_ptr<const Tokenizer>(
                                  load_tokenizer(locate_model(options.model, HubEnvironment::from_process())));
  const std::string text = options.text == "-" ? read_standard_input() : options.text;
  const Encoding encoding = tokenizer->encode(text, !options.no_special_tokens);
  if (!options.json) {
    print_table(*tokenizer, encoding, options.model.empty() ? kDefaultModelSource : options.model);
    return 0;
  }
  const nlohmann::json out = {{"ids", encoding.ids}, {"tokens", encoding.pieces}};
  // The pieces are UTF-8 (the vocabulary file was); written as they are, not \u-escaped.
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace attn::cli

#include "model/vocabulary_section.h"

#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "model/tensor_values.h"
#include "tokenizers/word_tokenizer.h"

namespace attn {

namespace {

// The vocab's tokens, each checked. A hash map of the tokens so far finds a duplicate in
// one look-up: 100,000 tokens load in milliseconds, not the 15 s that comparing each with
// every earlier one took.
std::vector<std::string> read_tokens(LoadContext& context, const Json& vocab) {
  const JsonReader& reader = context.reader;
  std::vector<std::string> tokens;
  tokens.reserve(vocab.size());
  std::unordered_map<std::string, std::size_t> first_index;
  first_index.reserve(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const std::string path = json_index("vocab", i);
    std::string token = reader.string(vocab[i], path);
    if (token.empty()) reader.fail(path, "expected a non-empty token, found \"\"");
    // Tokens are printed: no control characters (JSON escapes such as \u001b decode to them).
    if (const auto problem = unprintable_part(token, /*whitespace_allowed=*/false))
      reader.fail(path, "expected a printable token, found " + *problem);
    const auto [earlier, is_new] = first_index.emplace(token, i);
    if (!is_new) {
      const std::string message = fmt::format("duplicate token \"{}\" (already vocab[{}])", token, earlier->second);
      if (!reader.collecting()) reader.fail(path, message);
      context.record(InputError(reader.file(), path, message));
      // The stand-in is a token too: a later token equal to it is a duplicate of it, and
      // the vocabulary's tokens stay distinct.
      token = fmt::format("{}\x01duplicate{}", token, i);
      while (!first_index.emplace(token, i).second) token += '\x01';
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

void read_vocabulary(LoadContext& context, const Json& document, Model& model) {
  const JsonReader& reader = context.reader;
  const Json* vocab = reader.member(document, "vocab");
  const Json* embedding = reader.member(document, "embedding");
  if (!vocab) {
    if (embedding) reader.fail("embedding", "expected a vocab alongside the embedding (one row per vocabulary token)");
    return;
  }
  reader.array(*vocab, "vocab");
  if (vocab->empty()) reader.fail("vocab", "expected at least one token, found an empty array");
  model.vocab = Vocabulary(read_tokens(context, *vocab));
  model.tokenizer = std::make_shared<const WordTokenizer>(model.vocab);
  if (!embedding) reader.fail("embedding", "missing: a vocab needs an embedding table (len(vocab) x d_model)");
  // (V, N): row i is token i's vector.
  model.embedding =
      read_tensor(context, *embedding, "embedding",
                  TensorRequest{{model.vocab.size(), model.config.d_model}, {"V", "N"}, "len(vocab) x d_model"});
}

void read_prompt_template(LoadContext& context, const Json& document, Model& model) {
  const JsonReader& reader = context.reader;
  const Json* value = reader.member(document, "prompt_template");
  if (!value) return;
  const std::string path = "prompt_template";
  const std::string text = reader.string(*value, path);
  if (model.config.architecture != Architecture::DecoderOnly)
    reader.fail(path,
                "only for a decoder-only model (model.architecture \"decoder-only\"), whose text is a prompt to "
                "continue; remove it");
  if (model.vocab.empty()) reader.fail(path, "the model has no vocab to read a prompt with; remove it");
  if (const auto problem = unprintable_part(text, /*whitespace_allowed=*/true))
    reader.fail(path, "expected printable text, found " + *problem);
  std::size_t count = 0;
  for (std::size_t i = text.find("{}"); i != std::string::npos; i = text.find("{}", i + 2)) ++count;
  if (count != 1)
    reader.fail(path, fmt::format("expected one \"{{}}\" where the text goes (\"<BOS> {{}} =\"), found {} in \"{}\"",
                                  count, text));
  const std::size_t at = text.find("{}");
  for (const std::string& part : {text.substr(0, at), text.substr(at + 2)})
    for (const std::string& token : split_tokens(part))
      if (!model.vocab.find(token))
        reader.fail(path,
                    fmt::format("expected the tokens around \"{{}}\" in the vocab, found \"{}\", which is not", token));
  model.prompt_template = text;
}

void read_positions(LoadContext& context, const Json& document, Model& model) {
  const ModelConfig& config = model.config;
  const Json* positions = context.reader.member(document, "positions");
  if (!positions) {
    if (config.positional_encoding == PositionalEncoding::Learned)
      context.reader.fail("positions",
                          "missing: model.positional_encoding = \"learned\" needs a (max_len, d_model) table");
    return;
  }
  if (config.positional_encoding != PositionalEncoding::Learned)
    context.reader.fail("positions", "a position table is only used with model.positional_encoding = \"learned\"");
  // (max_len, N): row s is added to the token at position s.
  model.positions = read_tensor(context, *positions, "positions",
                                TensorRequest{{config.max_len, config.d_model}, {"S", "N"}, "max_len x d_model"});
}

}  // namespace attn

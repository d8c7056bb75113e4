#include "model/token_input.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/model_file.h"
#include "core/text.h"
#include "model/json_reader.h"
#include "tokenizers/word_tokenizer.h"

namespace attn {

std::vector<std::vector<std::string>> token_lists(const TokenInput& input) {
  if (input.texts.empty()) return input.tokens;
  std::vector<std::vector<std::string>> lists;
  for (const auto& text : input.texts) lists.push_back(split_tokens(text));
  return lists;
}

std::vector<std::vector<std::string>> token_lists(const TokenInput& input, const Tokenizer& tokenizer) {
  if (input.texts.empty()) return input.tokens;
  std::vector<std::vector<std::string>> lists;
  for (const auto& text : input.texts) lists.push_back(tokenizer.split(text));
  return lists;
}

namespace {

// What lookup_token_ids needs of the vocabulary, at the input's path: every token found
// (or an <UNK> for it), and a <PAD> when sentences differ in length. Checked row by row,
// each row's tokens before its padding, so the first problem is the one the run would meet.
void check_lookup(const Model& model, const TokenInput& input, const std::vector<std::vector<std::string>>& lists) {
  std::size_t longest = 0;
  for (const auto& tokens : lists) longest = std::max(longest, tokens.size());
  const Vocabulary& vocab = model.vocab;
  for (const auto& tokens : lists) {
    if (!vocab.unknown_id())
      for (const auto& token : tokens)
        if (!vocab.find(token))
          throw InputError(model.source, input.json_path,
                           "unknown token \"" + token + "\" and the vocabulary has no \"<UNK>\"");
    if (tokens.size() < longest && !vocab.pad_id())
      throw InputError(model.source, input.json_path,
                       "sentences of different lengths need \"<PAD>\" in the vocabulary");
  }
}

TokenInput token_input(std::vector<std::string> texts, std::vector<std::vector<std::string>> tokens, bool batched,
                       std::string json_path) {
  TokenInput input;
  input.texts = std::move(texts);
  input.tokens = std::move(tokens);
  input.batched = batched;
  input.json_path = std::move(json_path);
  return input;
}

}  // namespace

namespace {

// Text reaches the terminal and the dumps: it must be UTF-8 (JSON cannot hold anything
// else) with no control characters (an escape sequence in a sentence would recolour the
// learner's terminal). Checked before tokenizing: the tokenizer splits bytes.
void check_printable(const Model& model, const TokenInput& input) {
  for (std::size_t b = 0; b < input.texts.size(); ++b)
    if (const auto problem = unprintable_part(input.texts[b], /*whitespace_allowed=*/true))
      throw InputError(model.source, input.batched ? json_index(input.json_path, b) : input.json_path,
                       "expected printable UTF-8 text, found " + *problem);
  for (std::size_t b = 0; b < input.tokens.size(); ++b)
    for (std::size_t s = 0; s < input.tokens[b].size(); ++s)
      if (const auto problem = unprintable_part(input.tokens[b][s], /*whitespace_allowed=*/false)) {
        const std::string row = input.batched ? json_index(input.json_path, b) : input.json_path;
        throw InputError(model.source, json_index(row, s), "expected a printable UTF-8 token, found " + *problem);
      }
}

// "2 0 1" framed by the model's prompt_template "<BOS> {} =": "<BOS> 2 0 1 =", with a note
// saying so. A text that already starts and ends as the template does is kept as typed.
std::string framed_text(const Model& model, const std::string& text, std::vector<std::string>& notes) {
  const std::string& frame = model.prompt_template;
  const std::size_t at = frame.find("{}");
  const std::vector<std::string> before = split_tokens(frame.substr(0, at)), after = split_tokens(frame.substr(at + 2));
  const std::vector<std::string> tokens = split_tokens(text);
  const bool framed = tokens.size() >= before.size() + after.size() &&
                      std::equal(before.begin(), before.end(), tokens.begin()) &&
                      std::equal(after.rbegin(), after.rend(), tokens.rbegin());
  if (framed || tokens.empty()) return text;  // an empty text is refused as it is
  std::string out;
  for (const auto* part : {&before, &tokens, &after})
    for (const std::string& token : *part) out += (out.empty() ? "" : " ") + token;
  notes.push_back(fmt::format("the text was framed as the model was trained (prompt_template \"{}\"): {}", frame, out));
  return out;
}

}  // namespace

void check_token_input(const Model& model, const TokenInput& input) {
  check_printable(model, input);
  const std::vector<std::vector<std::string>> lists = token_lists(input);
  for (std::size_t b = 0; b < lists.size(); ++b) {
    const std::string path = input.batched ? json_index(input.json_path, b) : input.json_path;
    if (lists[b].empty()) throw InputError(model.source, path, "expected at least one token, found none");
    if (reads_position_table(model.config.positional_encoding) && lists[b].size() > model.config.max_len)
      throw InputError(model.source, path,
                       fmt::format("expected at most max_len = {} tokens (the learned position table's rows), found {}",
                                   model.config.max_len, lists[b].size()));
  }
  check_lookup(model, input, lists);
}

std::optional<std::size_t> decoder_start_id(const Model& model) {
  if (model.checkpoint.decoder_start_id) return model.checkpoint.decoder_start_id;
  return model.vocab.special_id(SpecialRole::Begin);
}

std::vector<std::size_t> never_generated_ids(const Model& model) {
  std::vector<std::size_t> ids = model.vocab.never_written_ids();
  for (const std::size_t id : model.checkpoint.never_generated)
    if (id < model.vocab.size()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

bool ends_text(const Model& model, std::size_t id) {
  const std::vector<std::size_t>& eos = model.checkpoint.eos_token_ids;
  if (std::find(eos.begin(), eos.end(), id) != eos.end()) return true;
  const auto end = model.vocab.special_id(SpecialRole::End);
  return end && *end == id;
}

bool start_from_bos(const Model& model, RunInput& input) {
  const auto begin = decoder_start_id(model);
  if (!begin) return false;
  const std::size_t B = input.has_tokens()
                            ? std::max(input.source_tokens.texts.size(), input.source_tokens.tokens.size())
                            : input.X.shape[0];
  input.target_X = Tensor();
  input.target_tokens = token_input(
      {}, std::vector<std::vector<std::string>>(B, {model.vocab.token(*begin)}), input.batched,
      model.checkpoint.decoder_start_id ? "input (no target given: the decoder starts from decoder_start_token_id)"
                                        : "input (no target given: the decoder starts from <BOS>)");
  input.target_tokens.from_bos = true;
  return true;
}

namespace {

// A checkpoint's text, encoded as its own tokenizer does (the post-processor's <s> or
// <|begin_of_text|> included): the pieces become the run's tokens, each found again by
// its exact spelling.
void encode_checkpoint_text(const Model& model, RunInput& input, const std::string& text, const std::string& origin) {
  if (const auto problem = unprintable_part(text, /*whitespace_allowed=*/true))
    throw InputError(origin, "", "expected printable UTF-8 text, found " + *problem);
  if (text.empty()) throw InputError(origin, "", "expected a text to run, found an empty one");
  const Encoding encoding = model.tokenizer->encode(text, true);
  if (encoding.ids.empty()) throw InputError(origin, "", "expected a text with at least one token, found none");
  const std::size_t positions = model.checkpoint.max_positions;
  if (positions && encoding.ids.size() > positions)
    throw InputError(origin, "",
                     fmt::format("expected at most {} tokens ({}'s positions), found {}", positions,
                                 model.checkpoint.architecture, encoding.ids.size()));
  input.source_tokens = token_input({}, {encoding.pieces}, false, origin);
  input.batched = false;
}

// A checkpoint's target, as transformers feeds a decoder during training: the text encoded
// (its special tokens included) as the labels, and shifted right (shift_tokens_right), so the
// decoder reads decoder_start_token_id and then the target's pieces, without the final
// eos_token_id that the last position is to predict. The labels end with that eos_token_id
// (put there when the tokenizer adds none): each position predicts the next piece.
void encode_checkpoint_target(const Model& model, RunInput& input, const std::string& text, const std::string& origin) {
  if (const auto problem = unprintable_part(text, /*whitespace_allowed=*/true))
    throw InputError(origin, "", "expected printable UTF-8 text, found " + *problem);
  if (text.empty()) throw InputError(origin, "", "expected a target text, found an empty one");
  const auto start = decoder_start_id(model);
  if (!start)
    throw InputError(model.checkpoint.folder + "/config.json", "decoder_start_token_id",
                     "missing: the decoder has no token to start from");
  Encoding encoding = model.tokenizer->encode(text, true);
  while (!encoding.pieces.empty() && ends_text(model, encoding.ids.back())) {
    encoding.ids.pop_back();
    encoding.pieces.pop_back();
  }
  std::vector<std::string> pieces = {model.vocab.token(*start)};
  pieces.insert(pieces.end(), encoding.pieces.begin(), encoding.pieces.end());
  const std::size_t positions = model.checkpoint.max_positions;
  if (positions && pieces.size() > positions)
    throw InputError(origin, "",
                     fmt::format("expected at most {} tokens ({}'s positions), found {}", positions,
                                 model.checkpoint.architecture, pieces.size()));
  input.target_X = Tensor();
  input.labels = Tensor();
  input.output_grad = Tensor();
  input.target_tokens = token_input({}, {pieces}, false, origin);
  if (model.checkpoint.eos_token_ids.empty()) return;  // no end to predict: no labels implied
  const std::size_t T = pieces.size();
  input.labels = Tensor({1, T}, {"B", "T"});
  for (std::size_t t = 0; t + 1 < T; ++t) input.labels.data[t] = static_cast<double>(encoding.ids[t]);
  input.labels.data[T - 1] = static_cast<double>(model.checkpoint.eos_token_ids[0]);
}

}  // namespace

void replace_source_text(const Model& model, RunInput& input, const std::string& text, const std::string& origin) {
  if (model.checkpoint.present()) {
    input = RunInput{};
    encode_checkpoint_text(model, input, text, origin);
    if (model.has_target()) start_from_bos(model, input);  // decoder_start_token_id, then its own words
    return;
  }
  if (model.vocab.empty())
    throw InputError(model.source, "vocab",
                     "this model has no vocabulary, so it cannot read text; give the input as input.X");
  input.X = Tensor();
  input.labels = Tensor();
  input.output_grad = Tensor();
  input.source_tokens = token_input({text}, {}, false, origin);
  input.batched = false;
  // Checked as the user wrote it, so that a byte offset points into their text.
  check_printable(model, input.source_tokens);
  if (!model.prompt_template.empty())
    input.source_tokens.texts[0] = framed_text(model, text, input.source_tokens.notes);
  check_token_input(model, input.source_tokens);
  if (model.has_target()) {
    input.target_tokens = TokenInput{};
    if (!start_from_bos(model, input))
      throw InputError(model.source, "vocab",
                       "the model has a decoder but no \"<BOS>\" to start it from; give --target TEXT");
  }
}

void replace_target_text(const Model& model, RunInput& input, const std::string& text, const std::string& origin) {
  if (!model.has_target())
    throw InputError(model.source, "decoder", "this model has no decoder, so a target sentence has nothing to feed");
  if (model.checkpoint.present()) {
    encode_checkpoint_target(model, input, text, origin);
    return;
  }
  if (model.vocab.empty())
    throw InputError(model.source, "vocab", "this model has no vocabulary, so it cannot read a target sentence");
  if (input.batched)
    throw InputError(model.source, "input",
                     "the model's input is a batch; a single target sentence needs a single source sentence");
  input.target_X = Tensor();
  input.labels = Tensor();
  input.output_grad = Tensor();
  input.target_tokens = token_input({text}, {}, false, origin);
  // Checked as the user wrote it, so that a byte offset points into their text.
  check_printable(model, input.target_tokens);
  // A decoder's input starts with <BOS>: the token it was trained to start from, whose
  // prediction is the first word. A target without it is read one position off.
  const auto tokens = split_tokens(text);
  const auto begin = model.vocab.special_id(SpecialRole::Begin);
  if (begin && (tokens.empty() || tokens[0] != model.vocab.token(*begin))) {
    input.target_tokens.texts[0] = model.vocab.token(*begin) + " " + text;
    input.target_tokens.notes.push_back(
        "the target did not start with <BOS>, the token a decoder starts from: attn put one in front");
  }
  check_token_input(model, input.target_tokens);
}

}  // namespace attn

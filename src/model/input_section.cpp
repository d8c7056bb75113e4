#include "model/input_section.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "attn/model_file.h"
#include "model/tensor_values.h"

namespace attn {

namespace {

const std::vector<std::string> kInputKeys = {"X",           "text",          "tokens", "target_X",
                                             "target_text", "target_tokens", "labels", "output_grad"};

// An input given as numbers. `batched`: the file wrote (B, S, N), not (S, N).
struct NumbersInput {
  Tensor x;  // (B, S, N), or (B, T, N) for the target
  bool batched = false;
};

// The shape X has in the file: from the value itself, nested numbers or {"randn": [B, S, N]}
// (the model implies only its last axis). `axis` names the sequence axis, S or T.
Shape x_shape(const JsonReader& reader, const Json& x, const std::string& path, std::size_t d_model, const char* axis) {
  Shape shape;
  if (x.is_array()) {
    shape = nested_shape(reader, x, path);
  } else if (x.is_object()) {
    shape = read_generator_shape(reader, x, path);
  } else if (x.is_string()) {
    reader.fail(path, fmt::format("the shape is not implied by the model; write {{\"{}\": [{}, {}]}} or "
                                  "{{\"{}\": [B, {}, {}]}}",
                                  x.get<std::string>(), axis, d_model, x.get<std::string>(), axis, d_model));
  } else {
    reader.fail(path, fmt::format("expected a (B, {0}, d_model) or ({0}, d_model) array of numbers, found {1}", axis,
                                  describe_json(x)));
  }
  if (shape.size() != 2 && shape.size() != 3)
    reader.fail(path,
                fmt::format("expected shape (B, {0}, d_model) or ({0}, d_model), got {1}", axis, shape_string(shape)));
  if (shape.back() != d_model)
    reader.fail(path,
                fmt::format("expected last axis of size d_model = {}, got shape {}", d_model, shape_string(shape)));
  return shape;
}

NumbersInput read_x(LoadContext& context, const Json& x, const std::string& path, const Model& model,
                    const LayerCounts& layers, const char* axis) {
  const Shape shape = x_shape(context.reader, x, path, model.config.d_model, axis);
  NumbersInput input;
  input.batched = shape.size() == 3;
  // (S, N) -> (1, S, N): the run always has a batch axis.
  const Shape full = input.batched ? shape : Shape{1, shape[0], shape[1]};
  check_input_memory(context, element_count(full), path);
  // The whole run, before anything is drawn ("randn" of a huge X would take minutes).
  check_run_memory(context, model, full[0], full[1], full[1], layers, path);
  input.x = read_tensor(context, x, path, TensorRequest{shape, {}, ""});
  input.x.shape = full;
  input.x.axes = {"B", axis, "N"};
  return input;
}

TokenInput read_text(const JsonReader& reader, const Json& value, const std::string& path) {
  TokenInput input;
  input.json_path = path;
  if (value.is_string()) {
    input.texts.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    if (value.empty()) reader.fail(path, "expected at least one sentence, found an empty array");
    input.batched = true;
    for (std::size_t i = 0; i < value.size(); ++i) input.texts.push_back(reader.string(value[i], json_index(path, i)));
  } else {
    reader.fail(path, "expected a sentence or a list of sentences, found " + describe_json(value));
  }
  return input;
}

std::vector<std::string> read_token_list(const JsonReader& reader, const Json& value, const std::string& path) {
  reader.array(value, path);
  if (value.empty()) reader.fail(path, "expected at least one token, found an empty array");
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < value.size(); ++i) tokens.push_back(reader.string(value[i], json_index(path, i)));
  return tokens;
}

// One list of tokens, or a batch of them (a list of lists).
TokenInput read_tokens(const JsonReader& reader, const Json& value, const std::string& path) {
  TokenInput input;
  input.json_path = path;
  reader.array(value, path);
  if (value.empty()) reader.fail(path, "expected at least one token, found an empty array");
  if (value[0].is_array()) {
    input.batched = true;
    for (std::size_t i = 0; i < value.size(); ++i)
      input.tokens.push_back(read_token_list(reader, value[i], json_index(path, i)));
  } else {
    input.tokens.push_back(read_token_list(reader, value, path));
  }
  return input;
}

void needs_vocab(const LoadContext& context, const Model& model, const std::string& path, const char* key) {
  const JsonReader& reader = context.reader;
  if (!model.vocab.empty()) return;
  // A vocab the file gives but that could not be read was reported already (attn validate
  // goes on after it): not a second error.
  if (context.vocab_unreadable) throw AlreadyReported{};
  reader.fail(json_child(path, key), "the model has no vocab, so it cannot read text or tokens; give X instead");
}

// The keys one input sequence is given under, and the name of its sequence axis.
struct SequenceKeys {
  const char* numbers;
  const char* text;
  const char* tokens;
  const char* axis;
};
const SequenceKeys kSourceKeys{"X", "text", "tokens", "S"};
const SequenceKeys kTargetKeys{"target_X", "target_text", "target_tokens", "T"};

// Whether the sequence is given under one of its keys; an error when under more than one.
bool one_given(const JsonReader& reader, const Json& value, const std::string& path, const SequenceKeys& keys) {
  int n = 0;
  for (const char* key : {keys.numbers, keys.text, keys.tokens}) n += reader.member(value, key) ? 1 : 0;
  if (n > 1)
    reader.fail(path,
                fmt::format("expected one of {}, {} or {}, found more than one", keys.numbers, keys.text, keys.tokens));
  return n == 1;
}

// One input sequence as the file gives it: numbers, or text or tokens (neither when none
// of the keys is there).
struct Sequence {
  NumbersInput numbers;
  TokenInput tokens;
};

Sequence read_sequence(LoadContext& context, const Json& value, const std::string& path, const LayerCounts& layers,
                       const SequenceKeys& keys, const Model& model) {
  const JsonReader& reader = context.reader;
  Sequence sequence;
  if (const Json* x = reader.member(value, keys.numbers)) {
    sequence.numbers = read_x(context, *x, json_child(path, keys.numbers), model, layers, keys.axis);
  } else if (const Json* text = reader.member(value, keys.text)) {
    needs_vocab(context, model, path, keys.text);
    sequence.tokens = read_text(reader, *text, json_child(path, keys.text));
  } else if (const Json* tokens = reader.member(value, keys.tokens)) {
    needs_vocab(context, model, path, keys.tokens);
    sequence.tokens = read_tokens(reader, *tokens, json_child(path, keys.tokens));
  }
  return sequence;
}

// The target must have the source's batch layout: one target per source sentence.
void check_target_layout(const JsonReader& reader, const std::string& path, const RunInput& input) {
  if (input.target_tokens.empty() && input.target_X.data.empty()) return;
  const std::size_t source_b = input.has_tokens()
                                   ? std::max(input.source_tokens.texts.size(), input.source_tokens.tokens.size())
                                   : (input.X.rank() == 3 ? input.X.shape[0] : 0);
  const bool given_as_x = input.target_tokens.empty();
  const bool target_batched = given_as_x ? input.target_X_batched : input.target_tokens.batched;
  const std::size_t target_b = given_as_x
                                   ? input.target_X.shape[0]
                                   : std::max(input.target_tokens.texts.size(), input.target_tokens.tokens.size());
  const std::string where = given_as_x ? json_child(path, "target_X") : input.target_tokens.json_path;
  if (target_batched != input.batched)
    reader.fail(where, input.batched
                           ? fmt::format("expected a batch of {} targets like the source, found a single one", source_b)
                           : "expected a single target like the source, found a batch (a list)");
  if (source_b != target_b)
    reader.fail(where,
                fmt::format("expected {} target sequences, one per source sentence, found {}", source_b, target_b));
}

}  // namespace

void read_input(LoadContext& context, const Json& value, const std::string& path, const LayerCounts& layers,
                const Model& model, RunInput& input) {
  const JsonReader& reader = context.reader;
  reader.object(value, path, kInputKeys);
  if (model.decoder_only()) {
    if (reader.member(value, "X"))
      reader.fail(json_child(path, "X"),
                  "a decoder-only model reads tokens: give input.text or input.tokens, found X (numbers)");
    for (const char* key : {"target_X", "target_text", "target_tokens"})
      if (reader.member(value, key))
        reader.fail(json_child(path, key),
                    "a decoder-only model has no target: its input (text or tokens) is the text it continues");
  }
  if (!one_given(reader, value, path, kSourceKeys))
    reader.fail(path, "expected one of X (numbers), text or tokens, found none");
  one_given(reader, value, path, kTargetKeys);
  Sequence source = read_sequence(context, value, path, layers, kSourceKeys, model);
  input.X = std::move(source.numbers.x);
  input.source_tokens = std::move(source.tokens);
  input.batched = input.has_tokens() ? input.source_tokens.batched : source.numbers.batched;
  // The target after the source: "randn" draws the source's X first (docs/model-file.md).
  Sequence target = read_sequence(context, value, path, layers, kTargetKeys, model);
  input.target_X = std::move(target.numbers.x);
  input.target_X_batched = target.numbers.batched;
  input.target_tokens = std::move(target.tokens);
  check_target_layout(reader, path, input);
  if (input.has_tokens()) check_token_input(model, input.source_tokens);
  if (!input.target_tokens.empty()) check_token_input(model, input.target_tokens);
}

}  // namespace attn

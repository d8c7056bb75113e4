// The data of attn train: one example per line of a JSON Lines file, each read as a model
// file's input is read (model/input_section.cpp, model/loss_section.cpp).
#include <algorithm>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "attn/model_file.h"
#include "attn/train.h"
#include "core/numpy_random.h"
#include "model/byte_size.h"
#include "model/input_section.h"
#include "model/json_reader.h"
#include "model/load_context.h"
#include "model/loss_section.h"
#include "model/memory_estimate.h"
#include "model/text_lines.h"
#include "model/token_input.h"

namespace attn {

namespace {

// The model as the input reader names it in messages (each line's "FILE:LINE"): a copy made
// once per file.
Model input_shell(const Model& model) { return model; }

// (1, L, W) -> (L, W): one example's tensor without the batch axis.
Tensor without_batch_axis(Tensor t) {
  if (t.rank() == 3) {
    t.shape.erase(t.shape.begin());
    t.axes.erase(t.axes.begin());
  }
  return t;
}

// The example of one line, read against `shell` (whose input it replaces).
Example read_example(const Json& document, const std::string& source, std::size_t line, Model& shell,
                     const LoadOptions& load) {
  LoadContext context(source, load);
  context.rng = NumpyRandom(shell.config.seed);
  const JsonReader& reader = context.reader;
  shell.source = source;
  RunInput input;
  const LayerCounts layers{shell.encoder.size(), shell.decoder.size()};
  read_input(context, document, "", layers, shell, input);
  if (input.batched)
    reader.fail(input.has_tokens() ? input.source_tokens.json_path : "X",
                "expected one example per line: one sentence, one list of tokens or X of shape (S, d_model)");
  if (shell.has_target() && input.target_tokens.empty() && input.target_X.data.empty())
    reader.fail("", "expected the decoder's input: target_text, target_tokens or target_X (the model has a decoder)");
  read_loss_section(context, document, "", shell, input);
  if (input.labels.data.empty() && input.output_grad.data.empty())
    reader.fail("", shell.output.present ? "expected labels: training needs the token each output position should "
                                           "predict (<PAD> where nothing is learned)"
                                         : "expected output_grad: training a model without an output head needs the "
                                           "gradient of the loss with respect to its output");
  Example example;
  example.line = line;
  if (input.has_tokens()) example.source = token_lists(input.source_tokens)[0];
  if (!input.target_tokens.empty()) example.target = token_lists(input.target_tokens)[0];
  example.x = without_batch_axis(std::move(input.X));
  example.target_x = without_batch_axis(std::move(input.target_X));
  for (double id : input.labels.data) example.labels.push_back(static_cast<std::size_t>(id));
  example.output_grad = without_batch_axis(std::move(input.output_grad));
  return example;
}

// About what an example holds: its tokens as strings, its numbers, its labels, and the heap's
// own 32 bytes or so per block (each list, each long token; each tensor's shape and axes).
std::uint64_t example_bytes(const Example& e) {
  constexpr std::uint64_t kBlock = 32;
  // (twice the Example: the list grows by doubling, the old and the new block alive at once)
  std::uint64_t bytes = 2 * sizeof(Example) + 3 * kBlock;
  for (const auto* tokens : {&e.source, &e.target}) {
    bytes += tokens->capacity() * sizeof(std::string) + kBlock;
    for (const std::string& token : *tokens)
      bytes += token.capacity() > 15 ? token.capacity() + 1 + kBlock : 0;  // longer than the string itself holds
  }
  for (const Tensor* t : {&e.x, &e.target_x, &e.output_grad})
    if (!t->data.empty()) bytes += t->size() * sizeof(double) + 3 * kBlock + t->axes.size() * sizeof(std::string);
  return bytes + e.labels.capacity() * sizeof(std::size_t) + kBlock;
}

std::size_t source_length(const Example& e) { return e.source.empty() ? e.x.shape.at(0) : e.source.size(); }
std::size_t target_length(const Example& e) {
  if (!e.target.empty()) return e.target.size();
  return e.target_x.data.empty() ? 0 : e.target_x.shape.at(0);
}

// One data set is tokens or numbers, not both: a batch of tokens is embedded, one of numbers
// is the layers' input itself, and the two cannot be stacked into one input. Every line
// gives each part (the source, the target, the loss's labels or output_grad) as the first.
void check_same_kinds(const Dataset& data) {
  const Example& first = data.examples.front();
  const auto part = [](bool numbers, const char* as_numbers, const char* as_tokens) {
    return numbers ? as_numbers : as_tokens;
  };
  for (const Example& e : data.examples) {
    const std::string source = fmt::format("{}:{}", data.source, e.line);
    const auto mixed = [&](bool numbers, bool first_numbers, const char* as_numbers, const char* as_tokens) {
      if (numbers == first_numbers) return;
      throw InputError(
          source, "",
          fmt::format("expected {} like line {}, found {}: one training set gives every example the "
                      "same way",
                      part(first_numbers, as_numbers, as_tokens), first.line, part(numbers, as_numbers, as_tokens)));
    };
    mixed(!e.x.data.empty(), !first.x.data.empty(), "X", "text or tokens");
    mixed(!e.target_x.data.empty(), !first.target_x.data.empty(), "target_X", "target_text or target_tokens");
    mixed(!e.output_grad.data.empty(), !first.output_grad.data.empty(), "output_grad", "labels");
  }
}

// Examples of different lengths are padded: with <PAD> for tokens, which numbers cannot be.
void check_lengths(const Dataset& data, const Model& model) {
  const Example& first = data.examples.front();
  for (const Example& e : data.examples) {
    const std::string source = fmt::format("{}:{}", data.source, e.line);
    const bool differs = source_length(e) != source_length(first) || target_length(e) != target_length(first);
    if (!differs) continue;
    if ((!e.x.data.empty() && source_length(e) != source_length(first)) ||
        (!e.target_x.data.empty() && target_length(e) != target_length(first)))
      throw InputError(source, e.x.data.empty() ? "target_X" : "X",
                       fmt::format("expected {} positions like line {}: examples given as numbers cannot be padded",
                                   e.x.data.empty() ? target_length(first) : source_length(first), first.line));
    if (!model.vocab.pad_id())
      throw InputError(source, "",
                       fmt::format("expected as many tokens as line {}: examples of different lengths are padded with "
                                   "\"<PAD>\", which the vocabulary does not have",
                                   first.line));
  }
}

// A data line holds one example: a sentence, or a tensor of numbers written out (about 20
// bytes each, so some 800,000 of them); a longer line is not an example. Larger tensors are
// written as {"zeros": [S, d_model]} or {"randn": [S, d_model]}.
constexpr std::size_t kMaxDataLineBytes = 16 << 20;

std::string memory_text(std::uint64_t bytes) { return byte_size_text(static_cast<double>(bytes), ByteStyle::Memory); }

// The examples of `lines`, each counted as it is read: a line is read only up to what the
// examples before it left of the limit, its JSON parsed only if its document fits in what
// is left after the line, and the examples refused at the line whose example passes it.
Dataset read_examples(TextLines& lines, const Model& model, const LoadOptions& load) {
  Dataset data;
  data.source = lines.name();
  const std::uint64_t limit = memory_limit(load);
  Model shell = input_shell(model);
  std::string content;
  std::size_t max_line = kMaxDataLineBytes;
  const std::function<std::string()> expected = [&] {
    return max_line == kMaxDataLineBytes
               ? fmt::format("a line of at most {} (one example; write large tensors as {{\"zeros\": [S, d]}})",
                             memory_text(kMaxDataLineBytes))
               : fmt::format(
                     "a line of at most {} (what the examples before it left of the limit of {}; raise "
                     "--max-memory)",
                     memory_text(max_line), memory_text(limit));
  };
  for (;;) {
    const std::uint64_t left = limit - std::min(limit, data.bytes);
    max_line = static_cast<std::size_t>(std::min<std::uint64_t>(kMaxDataLineBytes, left));
    if (!lines.next(content, max_line, expected)) break;
    if (content.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::size_t line = lines.number();
    const std::string where = fmt::format("{}:{}", data.source, line);
    const Json document = parse_json(content, where, kMaxJsonDepth, std::max<std::uint64_t>(left - content.size(), 1));
    data.examples.push_back(read_example(document, where, line, shell, load));
    data.bytes += example_bytes(data.examples.back());
    if (data.bytes > limit)
      throw InputError(where, "",
                       fmt::format("the examples up to this line would need about {}, more than the limit of {}; use "
                                   "fewer or shorter examples or raise --max-memory",
                                   memory_text(data.bytes), memory_text(limit)));
    data.max_source = std::max(data.max_source, source_length(data.examples.back()));
    data.max_target = std::max(data.max_target, target_length(data.examples.back()));
  }
  if (data.examples.empty())
    throw InputError(data.source, "", "expected at least one example (one JSON object per line)");
  check_same_kinds(data);
  check_lengths(data, model);
  return data;
}

}  // namespace

Dataset parse_dataset(const std::string& text, const std::string& source, const Model& model, const LoadOptions& load) {
  TextLines lines(text, source);
  return read_examples(lines, model, load);
}

Dataset read_dataset(const std::string& path, const Model& model, const LoadOptions& load) {
  TextLines lines(path, kMaxInputBytes, "a data file (JSON Lines)");
  return read_examples(lines, model, load);
}

struct BatchOrder::Stream {
  explicit Stream(std::uint32_t seed) : rng(seed) {}
  NumpyRandom rng;
};

BatchOrder::BatchOrder(std::size_t examples, std::size_t batch_size, bool shuffle, std::uint32_t seed)
    : n_(examples),
      batch_(std::max<std::size_t>(batch_size, 1)),
      shuffle_(shuffle),
      stream_(std::make_shared<Stream>(seed)) {}

std::vector<std::size_t> BatchOrder::next() {
  if (at_ == 0) {
    if (shuffle_) {
      order_ = stream_->rng.permutation(n_);
    } else {
      order_.resize(n_);
      for (std::size_t i = 0; i < n_; ++i) order_[i] = i;
    }
  }
  const std::size_t end = std::min(at_ + batch_, n_);
  std::vector<std::size_t> batch(order_.begin() + static_cast<std::ptrdiff_t>(at_),
                                 order_.begin() + static_cast<std::ptrdiff_t>(end));
  at_ = end == n_ ? 0 : end;
  return batch;
}

}  // namespace attn

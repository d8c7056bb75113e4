#include "model/loss_section.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/model_file.h"
#include "model/tensor_values.h"
#include "model/token_input.h"
#include "tokenizers/word_tokenizer.h"

namespace attn {

namespace {

// The output positions' sequence: the target with a decoder, else the source.
struct OutputSequence {
  std::vector<std::size_t> lengths;  // tokens per sentence (every one the same for numbers)
  std::size_t batch = 0;
};

OutputSequence output_sequence(const Model& model, const RunInput& input) {
  const bool target = model.has_target();
  const TokenInput& tokens = target ? input.target_tokens : input.source_tokens;
  const Tensor& numbers = target ? input.target_X : input.X;
  OutputSequence out;
  if (!tokens.empty()) {
    for (const auto& list : token_lists(tokens)) out.lengths.push_back(list.size());
  } else if (numbers.rank() == 3) {
    out.lengths.assign(numbers.shape[0], numbers.shape[1]);
  }
  out.batch = out.lengths.size();
  return out;
}

// One sentence's labels: a text, tokens or ids, as ids; unknown tokens become <UNK>.
std::vector<std::size_t> read_label_list(const JsonReader& reader, const Json& value, const std::string& path,
                                         const Vocabulary& vocab) {
  std::vector<std::string> tokens;
  std::vector<std::size_t> ids;
  if (value.is_string()) {
    tokens = split_tokens(value.get<std::string>());
  } else if (value.is_array() && !value.empty()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string at = json_index(path, i);
      if (value[0].is_string()) {
        tokens.push_back(reader.string(value[i], at));
      } else {
        const std::int64_t id = reader.integer(value[i], at);
        if (id < 0 || static_cast<std::size_t>(id) >= vocab.size())
          reader.fail(
              at, fmt::format("expected a token id from 0 to {} (the vocab's rows), found {}", vocab.size() - 1, id));
        ids.push_back(static_cast<std::size_t>(id));
      }
    }
  } else {
    reader.fail(
        path, "expected labels as a sentence, a list of tokens or a list of token ids, found " + describe_json(value));
  }
  for (const auto& token : tokens) {
    const auto id = vocab.find(token);
    if (!id && !vocab.unknown_id())
      reader.fail(path, "unknown token \"" + token + "\" and the vocabulary has no \"<UNK>\"");
    ids.push_back(id ? *id : *vocab.unknown_id());
  }
  return ids;
}

// The labels, (B,T) ids, <PAD> after each sentence's end.
Tensor read_labels(const JsonReader& reader, const Json& value, const std::string& path, const Model& model,
                   const RunInput& input) {
  const OutputSequence out = output_sequence(model, input);
  const char* against = model.has_target() ? "target" : "input";
  std::vector<Json> sentences;
  if (input.batched) {
    reader.array(value, path);
    if (value.size() != out.batch)
      reader.fail(path, fmt::format("expected {} lists of labels, one per {} sentence, found {}", out.batch, against,
                                    value.size()));
    sentences.assign(value.begin(), value.end());
  } else {
    sentences.push_back(value);
  }
  const std::size_t T = out.lengths.empty() ? 0 : *std::max_element(out.lengths.begin(), out.lengths.end());
  const std::size_t pad = model.vocab.pad_id().value_or(0);
  Tensor labels({sentences.size(), T}, {"B", model.has_target() ? "T" : "S"});
  std::fill(labels.data.begin(), labels.data.end(), static_cast<double>(pad));
  std::size_t counted = 0;
  for (std::size_t b = 0; b < sentences.size(); ++b) {
    const std::string at = input.batched ? json_index(path, b) : path;
    std::vector<std::size_t> ids = read_label_list(reader, sentences[b], at, model.vocab);
    // Labels padded with <PAD> to a batch's longest, as a PyTorch user writes them: the
    // padding past the sentence's positions is ignored, as every <PAD> label is.
    if (model.vocab.pad_id())
      while (ids.size() > out.lengths[b] && ids.back() == pad) ids.pop_back();
    if (ids.size() != out.lengths[b])
      reader.fail(at, fmt::format("expected {0} label{1}, one per position of the {2} ({0} token{1}), found {3}",
                                  out.lengths[b], out.lengths[b] == 1 ? "" : "s", against, ids.size()));
    for (std::size_t t = 0; t < ids.size(); ++t) {
      labels.data[b * T + t] = static_cast<double>(ids[t]);
      counted += model.vocab.pad_id() && ids[t] == pad ? 0 : 1;
    }
  }
  if (counted == 0)
    reader.fail(path,
                "expected at least one label other than <PAD>: <PAD> labels are ignored, so the loss would "
                "be a mean over no positions");
  return labels;
}

}  // namespace

Shape final_output_shape(const Model& model, const RunInput& input) {
  const OutputSequence out = output_sequence(model, input);
  const std::size_t L = out.lengths.empty() ? 0 : *std::max_element(out.lengths.begin(), out.lengths.end());
  std::size_t W = model.config.d_model;
  if (!model.has_target() && !model.encoder.empty() && !model.encoder.back().full &&
      !model.encoder.back().attention.has_output_projection())
    W = model.config.num_heads * model.config.d_head;
  if (input.batched) return {out.batch, L, W};
  return {L, W};
}

void read_loss_section(LoadContext& context, const Json& value, const std::string& path, const Model& model,
                       RunInput& input) {
  const JsonReader& reader = context.reader;
  const Json* labels = reader.member(value, "labels");
  const Json* output_grad = reader.member(value, "output_grad");
  if (labels && output_grad)
    reader.fail(json_child(path, "output_grad"),
                "expected either labels (with an output head) or output_grad (without one), found both");
  if (labels) {
    if (!model.output.present)
      reader.fail(json_child(path, "labels"),
                  "the model has no output head to score the labels; give the gradient of its output as "
                  "input.output_grad instead (or add an \"output\")");
    input.labels = read_labels(reader, *labels, json_child(path, "labels"), model, input);
  }
  if (output_grad) {
    if (model.output.present)
      reader.fail(json_child(path, "output_grad"),
                  "the model has an output head, so its loss is the cross-entropy of input.labels; output_grad is "
                  "for models without one");
    const Shape shape = final_output_shape(model, input);
    Tensor g = read_tensor(context, *output_grad, json_child(path, "output_grad"),
                           TensorRequest{shape, {}, input.batched ? "the output's (B, S, N)" : "the output's (S, N)"});
    // (S, N) -> (1, S, N), as the input: the run always has a batch axis.
    if (!input.batched) g.shape.insert(g.shape.begin(), 1);
    g.axes = {"B", model.has_target() ? "T" : "S", shape.back() == model.config.d_model ? "N" : "H*d"};
    input.output_grad = std::move(g);
  }
}

namespace {

// A checkpoint's labels: the text encoded by its tokenizer, one token per position of the
// input: nothing added for a next-token head; for a masked-LM head (BERT's), whose labels
// are the tokens at the input's own positions, encoded as the input is ([CLS] ... [SEP]).
Tensor checkpoint_labels(const Model& model, const RunInput& input, const std::string& text,
                         const std::string& origin) {
  const std::size_t S = input.source_tokens.tokens.empty() ? 0 : input.source_tokens.tokens[0].size();
  const Encoding encoding = model.tokenizer->encode(text, model.output.fills_in);
  if (encoding.ids.size() != S)
    throw InputError(origin, "",
                     fmt::format("expected {} labels, one per position of the input, found {} (the tokenizer's "
                                 "pieces of the text)",
                                 S, encoding.ids.size()));
  Tensor labels({1, S}, {"B", "S"});
  for (std::size_t s = 0; s < S; ++s) labels.data[s] = static_cast<double>(encoding.ids[s]);
  return labels;
}

}  // namespace

void replace_labels(const Model& model, RunInput& input, const std::string& text, const std::string& origin) {
  if (model.checkpoint.present() && model.has_target()) {
    // an encoder-decoder's labels are its target's pieces, which the decoder reads shifted
    // right: the target and the labels follow from the one text
    replace_target_text(model, input, text, origin);
    return;
  }
  if (model.checkpoint.present()) {
    input.labels = checkpoint_labels(model, input, text, origin);
    return;
  }
  const JsonReader reader(model.source);
  if (!model.output.present)
    reader.fail(origin, "the model has no output head to score labels against (labels need an \"output\")");
  if (input.batched) reader.fail(origin, "the model's input is a batch; --labels gives one sentence's labels");
  input.labels = read_labels(reader, Json(text), origin, model, input);
}

std::string target_implied_by_labels(const Model& model, const std::string& labels) {
  if (model.checkpoint.present()) return labels;  // the same text: encoded and shifted right
  std::vector<std::string> tokens = split_tokens(labels);
  const auto begin = model.vocab.special_id(SpecialRole::Begin);
  if (!begin || tokens.empty()) return labels;  // nothing to shift: the count check names it
  // <BOS>, then every label but the last: position t reads label t-1 and predicts label t.
  std::string text = model.vocab.token(*begin);
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) text += " " + tokens[t];
  return text;
}

std::string labels_implied_by_target(const Model& model, const RunInput& input) {
  if (model.checkpoint.present()) return std::string();  // replace_target_text set them from the pieces
  const auto end = model.vocab.special_id(SpecialRole::End);
  const std::vector<std::vector<std::string>> lists = token_lists(input.target_tokens);
  if (!end || lists.size() != 1 || lists[0].empty()) return std::string();
  // The target shifted by one (its <BOS> dropped), then <EOS>: each position predicts the next.
  std::string text;
  for (std::size_t t = 1; t < lists[0].size(); ++t) text += lists[0][t] + " ";
  return text + model.vocab.token(*end);
}

void check_loss_defined(const Model& model, const RunInput& input) {
  if (model.output.present && input.labels.data.empty())
    throw InputError(
        model.source, "input.labels",
        std::string("missing: attn grad needs the loss's labels, one token per output position (the "
                    "token each position should predict); give them in the file or with --labels") +
            (model.has_target()     ? ", or give --target (the labels follow from it: the target shifted "
                                      "by one, then <EOS>)"
             : model.decoder_only() ? ", or a text of at least two tokens (a causal model's labels are its "
                                      "text's own next tokens)"
                                    : ""));
  if (!model.output.present && input.output_grad.data.empty())
    throw InputError(model.source, "input.output_grad",
                     fmt::format("missing: attn grad needs the gradient of the loss with respect to the model's "
                                 "output, a tensor of shape {} (or \"randn\"): the loss is sum(output * output_grad)",
                                 shape_string(final_output_shape(model, input))));
}

bool use_next_tokens_as_labels(const Model& model, RunInput& input) {
  if (!model.decoder_only() || !model.output.present || !model.tokenizer || !input.labels.data.empty() ||
      input.batched || !input.has_tokens())
    return false;
  const Tokenizer& tokenizer = *model.tokenizer;
  const std::vector<std::vector<std::string>> lists = token_lists(input.source_tokens, tokenizer);
  if (lists.size() != 1 || lists[0].size() < 2) return false;
  std::vector<std::string> tokens = lists[0];
  // (B=1, S-1): position s predicts token s+1, as transformers' ForCausalLMLoss pairs
  // logits[:, :-1] with labels[:, 1:] when labels=input_ids
  Tensor labels({1, tokens.size() - 1}, {"B", "S"});
  const auto unknown = tokenizer.special_id(SpecialRole::Unknown);
  for (std::size_t s = 1; s < tokens.size(); ++s) {
    const auto id = tokenizer.lookup(tokens[s]);
    if (!id && !unknown) return false;  // the token step refuses it, naming it
    labels.data[s - 1] = static_cast<double>(id ? *id : *unknown);
  }
  // The last token predicts nothing: it is not read, which changes no other position
  // (the mask is causal), so the loss and every gradient are Hugging Face's.
  tokens.pop_back();
  input.source_tokens.texts.clear();
  input.source_tokens.tokens = {std::move(tokens)};
  input.labels = std::move(labels);
  input.source_tokens.notes.push_back(
      "no labels given: a causal language model's loss is its text's own next tokens (Hugging Face's "
      "labels=input_ids), so the model reads the text but its last token and each position predicts the "
      "token after it");
  return true;
}

}  // namespace attn

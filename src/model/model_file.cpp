// Loading a model file: the order the sections are read in, and the checks that span
// sections. Each section's reader is in its own file (config_section.cpp, ...).
#include "attn/model_file.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "model/config_section.h"
#include "model/input_section.h"
#include "model/json_reader.h"
#include "model/layer_sections.h"
#include "model/load_context.h"
#include "model/loss_section.h"
#include "model/memory_estimate.h"
#include "model/token_input.h"
#include "model/vocabulary_section.h"

namespace attn {

namespace {

const std::vector<std::string> kTopLevelKeys = {"model",     "vocab",        "prompt_template", "embedding",
                                                "positions", "input",        "encoder",         "encoder_norm",
                                                "decoder",   "decoder_norm", "output"};

// Everything else is checked against the hyper-parameters: without them, stop (in collect
// mode after naming the other missing parts, which cannot be checked against anything).
ModelConfig read_hyper_parameters(LoadContext& context, const Json& document) {
  const JsonReader& reader = context.reader;
  ModelConfig config;
  context.attempt([&] { config = read_config(reader, reader.required(document, "", "model"), "model"); });
  if (config.d_model != 0 && config.num_heads != 0 && config.d_head != 0) return config;
  for (const char* key : {"input", "encoder"})
    if (!reader.member(document, key))
      context.record(InputError(reader.file(), key, "missing (this field is required)"));
  context.stop_if_errors();
  reader.fail("model", "expected d_model and num_heads");
}

struct LayerLists {
  LayerList encoder{"encoder", false, {}, nullptr, 0}, decoder{"decoder", false, {}, nullptr, 0};
};

// model.architecture against the stacks the file gives; absent, inferred from them (an
// encoder-decoder when there is a "decoder", else an encoder).
void check_architecture(const JsonReader& reader, const Json& document, ModelConfig& config) {
  const bool encoder = reader.member(document, "encoder") != nullptr;
  const bool decoder = reader.member(document, "decoder") != nullptr;
  if (!config.architecture_given) {
    config.architecture = decoder ? Architecture::EncoderDecoder : Architecture::Encoder;
    return;
  }
  switch (config.architecture) {
    case Architecture::DecoderOnly:
      if (encoder)
        reader.fail("encoder",
                    "a decoder-only model (model.architecture) has no encoder: put its layers under \"decoder\"");
      if (reader.member(document, "encoder_norm"))
        reader.fail("encoder_norm", "a decoder-only model has no encoder: its final norm is \"decoder_norm\"");
      if (!decoder) reader.fail("decoder", "missing: a decoder-only model (model.architecture) has its layers here");
      if (!reader.member(document, "output"))
        reader.fail("output",
                    "missing: a decoder-only model predicts the next token, so it needs an output head (\"tied\" "
                    "or {\"W\": ...})");
      break;
    case Architecture::Encoder:
      if (decoder) reader.fail("decoder", "model.architecture is \"encoder\": expected no decoder");
      break;
    case Architecture::EncoderDecoder:
      if (!decoder) reader.fail("decoder", "missing: model.architecture is \"encoder-decoder\"");
      break;
  }
}

// The layer lists are resolved before the input so that the memory estimate knows them.
LayerLists read_layer_lists(LoadContext& context, const Json& document, const ModelConfig& config) {
  const JsonReader& reader = context.reader;
  LayerLists lists;
  if (config.architecture != Architecture::DecoderOnly)
    context.attempt([&] {
      const Json* encoder = reader.member(document, "encoder");
      if (!encoder)
        reader.fail("encoder", reader.member(document, "decoder")
                                   ? "missing (this field is required; a GPT-style model with its layers under "
                                     "\"decoder\" says model.architecture \"decoder-only\")"
                                   : "missing (this field is required)");
      lists.encoder = encoder_layer_list(reader, *encoder, config);
    });
  context.attempt([&] {
    if (const Json* decoder = reader.member(document, "decoder"))
      lists.decoder = decoder_layer_list(reader, *decoder, config);
  });
  return lists;
}

// The layers as the memory estimate counts them (a decoder-only model's as a decoder's over
// a target as long as its input: memory_estimate.cpp).
LayerCounts layer_counts(const LayerLists& lists) { return {lists.encoder.size(), lists.decoder.size()}; }

// Refuses a model whose weights alone, with one token of input, are over the memory limit:
// counted from the sizes the file declares, before the embedding or any layer is drawn.
void check_weights_memory(LoadContext& context, const Json& document, const ModelConfig& config,
                          const LayerLists& lists) {
  const Json* vocab = context.reader.member(document, "vocab");
  RunSize size;
  size.vocab = vocab && vocab->is_array() ? vocab->size() : 0;
  size.position_rows = config.positional_encoding == PositionalEncoding::Learned ? config.max_len : 0;
  size.encoder_layers = lists.encoder.size();
  size.decoder_layers = lists.decoder.size();
  size.target_len = size.decoder_layers ? 1 : 0;
  check_weights_size(context, config, size, "model");
}

// Reads the input and refuses a run over the memory limit. Returns whether the input was
// read; without it the weights are still checked, if they alone fit in memory.
bool read_input_within_memory(LoadContext& context, const Json& document, const LayerLists& lists, const Model& model,
                              RunInput& input) {
  const LayerCounts layers = layer_counts(lists);
  bool input_read = false;
  context.attempt([&] {
    // While X is read the run counts at least one encoder layer: a bad encoder list is
    // reported on its own and must not make a huge X look small.
    const LayerCounts while_reading{std::max<std::size_t>(1, layers.encoder), layers.decoder};
    read_input(context, context.reader.required(document, "", "input"), "input", while_reading, model, input);
    input_read = true;
  });
  if (input_read)
    context.attempt([&] { check_memory_for_input(context, model, input, layers); });
  else
    context.attempt([&] { check_run_memory(context, model, 1, 1, 1, layers, "model"); });
  return input_read;
}

// Without W_o an attention block's output has H*d_head columns, not d_model.
bool narrow_output(const AttentionWeights& attention, const ModelConfig& config) {
  return !attention.has_output_projection() && config.num_heads * config.d_head != config.d_model;
}

// The encoder's layers, each layer's output the next one's input, and its final norm.
void read_encoder(LoadContext& context, const Json& document, const LayerList& list, Model& model) {
  const ModelConfig& config = model.config;
  for (std::size_t i = 0; i < list.size(); ++i)
    context.attempt([&] { model.encoder.push_back(read_encoder_layer(context, list.layer(i), list.path(i), config)); });
  context.attempt([&] {
    for (std::size_t i = 0; i + 1 < model.encoder.size(); ++i)
      if (narrow_output(model.encoder[i].attention, config))
        context.reader.fail(
            json_child(json_index("encoder", i), "attention"),
            fmt::format("expected W_o: without it this layer's output has width H*d_head = {}, but the next "
                        "layer needs d_model = {}",
                        config.num_heads * config.d_head, config.d_model));
  });
  context.attempt([&] {
    if (const Json* norm = context.reader.member(document, "encoder_norm"))
      model.encoder_norm = read_norm(context, norm, "encoder_norm", config);
  });
}

void read_decoder(LoadContext& context, const Json& document, const LayerList& list, Model& model) {
  for (std::size_t i = 0; i < list.size(); ++i)
    context.attempt(
        [&] { model.decoder.push_back(read_decoder_layer(context, list.layer(i), list.path(i), model.config)); });
  context.attempt([&] {
    if (const Json* norm = context.reader.member(document, "decoder_norm")) {
      if (list.size() == 0) context.reader.fail("decoder_norm", "expected a decoder alongside decoder_norm");
      model.decoder_norm = read_norm(context, norm, "decoder_norm", model.config);
    }
  });
}

// What reads the encoder's output: the decoder's cross-attention (whose own input, when no
// target was given, starts from <BOS>), else the output head. Both need d_model columns
// from the encoder's last layer.
void read_encoder_consumers(LoadContext& context, const Json& document, bool has_decoder, bool input_read, Model& model,
                            RunInput& input) {
  const JsonReader& reader = context.reader;
  const bool encoder_ends_narrow = !model.encoder.empty() && !model.encoder.back().full &&
                                   narrow_output(model.encoder.back().attention, model.config);
  if (model.decoder_only()) {
    context.attempt([&] {
      if (const Json* output = reader.member(document, "output"))
        model.output = read_output(context, *output, "output", model);
    });
    return;
  }
  context.attempt([&] {
    if (has_decoder && encoder_ends_narrow)
      reader.fail(json_child(json_index("encoder", model.encoder.size() - 1), "attention"),
                  "expected W_o: the decoder's cross-attention needs the encoder's output in d_model columns");
    if (input_read && has_decoder && input.target_tokens.empty() && input.target_X.data.empty() &&
        !start_from_bos(model, input))
      reader.fail("input",
                  "the model has a decoder, so the input needs a target: target_X, target_text or "
                  "target_tokens (or a \"<BOS>\" token in the vocab to start from)");
  });
  context.attempt([&] {
    if (const Json* output = reader.member(document, "output")) {
      if (!has_decoder && encoder_ends_narrow)
        reader.fail("output", "expected the last layer to produce d_model columns (give the last attention block W_o)");
      model.output = read_output(context, *output, "output", model);
    }
  });
}

LoadedModel load(LoadContext& context, const Json& document) {
  context.reader.object(document, "", kTopLevelKeys);
  LoadedModel loaded;
  Model& model = loaded.model;
  model.source = context.reader.file();
  model.config = read_hyper_parameters(context, document);
  context.attempt([&] { check_architecture(context.reader, document, model.config); });
  context.rng = NumpyRandom(model.config.seed);

  // The weights the file declares must fit before any is drawn: a 300-byte file can ask
  // for d_model 2^24 or 2^24 layers.
  const LayerLists lists = read_layer_lists(context, document, model.config);
  context.attempt([&] {
    if (model.config.sliding_window && !model.config.causal && lists.decoder.size() == 0)
      context.reader.fail("model.sliding_window",
                          "expected a causal self-attention to limit (model.causal true, or a decoder): position i "
                          "sees i-W+1 .. i");
  });
  context.attempt([&] { check_weights_memory(context, document, model.config, lists); });
  if (context.run_refused) context.stop_if_errors();
  // The "randn" order (docs/model-file.md): embedding, positions, input, encoder layers,
  // encoder_norm, decoder layers, decoder_norm, output.
  context.attempt([&] {
    context.vocab_unreadable = true;  // until read
    read_vocabulary(context, document, model);
    context.vocab_unreadable = false;
  });
  if (!context.reader.member(document, "vocab")) context.vocab_unreadable = false;
  context.attempt([&] { read_prompt_template(context, document, model); });
  context.attempt([&] { read_positions(context, document, model); });
  const bool input_read = read_input_within_memory(context, document, lists, model, loaded.input);
  // Drawing "randn" for a run that was refused could take forever: stop here.
  if (context.run_refused) context.stop_if_errors();
  read_encoder(context, document, lists.encoder, model);
  read_decoder(context, document, lists.decoder, model);
  read_encoder_consumers(context, document, lists.decoder.size() != 0, input_read, model, loaded.input);
  // Last: labels are checked against the output head and the target, and output_grad's
  // "randn" is drawn after every weight.
  if (input_read && context.errors.empty())
    context.attempt([&] { read_loss_section(context, document.at("input"), "input", model, loaded.input); });
  context.stop_if_errors();
  return loaded;
}

}  // namespace

LoadedModel load_model_text(const std::string& text, const std::string& source, const LoadOptions& options) {
  // The parsed document's memory counts too: refused before the parser allocates it.
  const Json document = parse_json(text, source, kMaxJsonDepth, memory_limit(options));
  LoadContext context(source, options);
  try {
    return load(context, document);
  } catch (const TooManyErrors&) {
    context.errors.emplace_back(source, "",
                                fmt::format("more problems, not listed: validate stops after {}", kMaxReportedErrors));
    context.stop_if_errors();
    throw;  // not reached: there are errors
  }
}

std::string model_file_name(const std::string& path) { return path == "-" ? kStandardInputName : path; }

LoadedModel load_model_file(const std::string& path, const LoadOptions& options) {
  return load_model_text(read_text_file(path), model_file_name(path), options);
}

}  // namespace attn

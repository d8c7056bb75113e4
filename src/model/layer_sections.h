// The layers: "encoder" and "decoder" (a list of layers, one layer repeated, or "randn"),
// each layer's parts (attention, norms, feed-forward), and the "output" head.
#ifndef ATTN_MODEL_LAYER_SECTIONS_H_
#define ATTN_MODEL_LAYER_SECTIONS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "attn/model.h"
#include "model/json_reader.h"
#include "model/load_context.h"

namespace attn {

// A stack's layers as the file gives them, one JSON object per layer, before any is read
// (the memory estimate needs their number first).
struct LayerList {
  std::string key;      // "encoder" or "decoder"
  bool listed = false;  // the file gave a list: each layer has its own path
  // The layers of a list, pointing into the document; or `count` times one template (the
  // file's layer object, or the layer "randn" stands for), never copied: a file that asks
  // for 16 million layers costs nothing until the memory estimate has refused it. Each
  // layer read from a template draws its own "randn".
  std::vector<const Json*> listed_layers;
  std::shared_ptr<const Json> template_layer;
  std::size_t count = 0;

  std::size_t size() const { return count; }
  const Json& layer(std::size_t i) const { return listed ? *listed_layers[i] : *template_layer; }
  // "encoder[1]" for a listed layer, "encoder" for a repeated one.
  std::string path(std::size_t i) const { return listed ? json_index(key, i) : key; }
};

// The encoder's layers: model.num_layers of them (default 1) when the file gives one
// layer object or "randn" (attention only, or full layers when d_ff is set).
LayerList encoder_layer_list(const JsonReader& reader, const Json& value, const ModelConfig& config);
// The decoder's layers: model.num_decoder_layers of them (default num_layers, then 1).
LayerList decoder_layer_list(const JsonReader& reader, const Json& value, const ModelConfig& config);

EncoderLayerWeights read_encoder_layer(LoadContext& context, const Json& value, const std::string& path,
                                       const ModelConfig& config);
DecoderLayerWeights read_decoder_layer(LoadContext& context, const Json& value, const std::string& path,
                                       const ModelConfig& config);
// A LayerNorm's gamma and beta, (N,) each: PyTorch's initial 1 and 0 when absent (nullptr).
NormWeights read_norm(LoadContext& context, const Json* value, const std::string& path, const ModelConfig& config);
// The projection to the vocabulary: "tied" (the embedding transposed), or W (N, V) and b.
OutputWeights read_output(LoadContext& context, const Json& value, const std::string& path, const Model& model);

}  // namespace attn

#endif  // ATTN_MODEL_LAYER_SECTIONS_H_

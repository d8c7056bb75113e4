// The plan of a checkpoint's weights (an architecture's map, src/arch/): which stored tensor each of
// attn's weights comes from and how (as stored, transposed, some columns, a range), checked
// whole against the safetensors headers before any of them is read.
#ifndef ATTN_MODEL_HF_WEIGHTS_H_
#define ATTN_MODEL_HF_WEIGHTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "checkpoint/checkpoint_files.h"

namespace attn {

// How attn's tensor is laid out from the stored one.
enum class StoredLayout {
  AsStored,    // the same shape and order (GPT-2's Conv1D (in, out), embeddings, norms)
  Transposed,  // nn.Linear's (out, in) read as (in, out), so that x @ W computes x @ W^T
  Columns,     // columns [begin, end) of a 2-D tensor (GPT-2's c_attn: W_q, W_k, W_v side by side)
  Range,       // elements [begin, end) of a 1-D tensor (c_attn's bias)
  Rows,        // rows [begin, end) of a 2-D tensor (BART's positions, past the 2 rows it never reads)
  // Fused per head (GPT-NeoX's query_key_value, nn.Linear (3N, N) viewed as (H, 3d)): the
  // stored rows (elements) are `groups` runs of equal size, and the weight takes rows
  // [begin, end) of each run, side by side: HeadRows read transposed, (N, groups·(end-begin));
  // HeadRange the bias's elements likewise. Widened at load, never kept as stored.
  HeadRows,
  HeadRange,
};

struct WeightRead {
  Tensor* target = nullptr;
  std::string parameter;    // attn's name, "decoder.0.self_attention.W_q"
  std::string tensor;       // the checkpoint's, "h.0.attn.c_attn.weight"
  Shape stored_shape;       // what the checkpoint must hold
  std::string shape_words;  // "n_embd x 3 n_embd", for messages
  StoredLayout layout = StoredLayout::AsStored;
  std::size_t begin = 0, end = 0;  // Columns, Range, Rows; HeadRows, HeadRange: within each run
  std::size_t groups = 0;          // HeadRows, HeadRange: the runs (the heads)
  AxisNames axes;                  // attn's axis names
  CheckpointFiles::Entry entry;    // found by plan_check

  // "h.0.attn.c_attn.weight[:, 0:768]", "model.layers.0.self_attn.k_proj.weight.T"
  std::string source_text() const;
};

// Adds planned reads, one per weight: an architecture's map of its checkpoint's tensors
// (src/arch/<name>.cpp) is a list of these calls.
struct WeightPlanner {
  std::vector<WeightRead>& plan;
  // `target` (attn's `parameter`, of `axes`) from the stored `tensor`, which must be of shape
  // `stored` ("n_embd x 3 n_embd" in messages), laid out as `layout` says.
  void add(Tensor& target, std::string parameter, std::string tensor, Shape stored, std::string words, AxisNames axes,
           StoredLayout layout = StoredLayout::AsStored, std::size_t begin = 0, std::size_t end = 0,
           std::size_t groups = 0) {
    WeightRead w;
    w.target = &target;
    w.parameter = std::move(parameter);
    w.tensor = std::move(tensor);
    w.stored_shape = std::move(stored);
    w.shape_words = std::move(words);
    w.axes = std::move(axes);
    w.layout = layout;
    w.begin = begin;
    w.end = end;
    w.groups = groups;
    plan.push_back(std::move(w));
  }
};

// Finds every planned tensor and checks its dtype and shape: InputError naming the file
// and the tensor for the first that is missing (`architecture` needs it), not a float
// dtype, or of another shape (saying when it is the transpose).
void plan_check(std::vector<WeightRead>& plan, const CheckpointFiles& files, const std::string& architecture);

// What a checkpoint of one family may hold beside the tensors its plan reads: the tensors
// its architecture knows it does not use (buffers older files saved), each a pattern in
// which "{L}" stands for a layer's number, and how its layers' tensors are named, so that
// a checkpoint of more layers than config.json says is named as such.
struct KnownTensors {
  std::vector<std::string> unused;  // "h.{L}.attn.bias"
  std::string layer_prefix;         // "h.{L}.": every tensor of layer L starts so
  std::size_t layers = 0;           // config.json's number of layers
  std::string layers_field;         // "n_layer", "num_hidden_layers"
};

// Whether `name` is `pattern` with a layer's number (decimal, no leading zero) for each
// "{L}", and that number in *layer (the last one) when given. With `prefix_only`, `name`
// need only start with the pattern.
bool matches_tensor_pattern(const std::string& pattern, const std::string& name, std::size_t* layer = nullptr,
                            bool prefix_only = false);

// InputError naming the file and the first tensor the files hold (in their order) that the
// plan does not read and `known` does not list as unused: a layer's past config.json's
// count as such ("the checkpoint holds more layers than config.json says"), any other as
// one `architecture` does not use. A run must not silently leave out part of a checkpoint.
void check_every_tensor_used(const std::vector<WeightRead>& plan, const CheckpointFiles& files,
                             const KnownTensors& known, const std::string& architecture);

// What plan_read keeps as stored when it is given the files: how many numbers, the bytes
// they take in the files (a storage two weights share, once), and their dtypes as the
// headers name them ("F32", "F16, BF16").
struct StoredSize {
  std::uint64_t numbers = 0, bytes = 0;
  std::string dtypes;
};
StoredSize stored_size(const std::vector<WeightRead>& plan);

// Reads every planned tensor into its target, widened to float64: InputError naming the
// file, the tensor and the element at a NaN or infinity. Records each source in `names`.
// With `files` (the mapped files, kept open by the weights that point into them), the
// matrices other than the learned positions stay where the files store them (Tensor::stored,
// checked finite all the same) and only the vectors and the positions are widened.
void plan_read(const std::vector<WeightRead>& plan, std::map<std::string, std::string>& names,
               const std::shared_ptr<const void>& files = nullptr);

}  // namespace attn

#endif  // ATTN_MODEL_HF_WEIGHTS_H_

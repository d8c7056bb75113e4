// Model files of a given size, every weight "randn": what `attn init` writes, so that a
// paper-sized model is a few lines of JSON (docs/model-file.md, "randn").
#ifndef ATTN_MODEL_PRESETS_H_
#define ATTN_MODEL_PRESETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attn {

struct ModelSize {
  std::size_t d_model = 0;     // N
  std::size_t num_heads = 0;   // H (d_head = N / H)
  std::size_t d_ff = 0;        // F; 0: attention-only layers, no feed-forward
  std::size_t num_layers = 0;  // encoder layers
  std::size_t seq_len = 0;     // S, the length of the random input X
  std::size_t batch = 0;       // B; 1 writes X as one sequence, (S, N)
  std::uint32_t seed = 0;      // np.random.seed for every "randn"
  // How the layers' weights are drawn: "xavier_uniform" (the default: scores stay unsaturated
  // at the paper's size, where N(0, 1) weights give one-hot attention), "randn",
  // "normal_0.02" or "kaiming_uniform" (docs/model-file.md, "Initializers").
  std::string init = "xavier_uniform";
};

struct Preset {
  const char* name;
  const char* description;
  ModelSize size;
};

// tiny: the seeds' size (d_model 4, 2 heads, d_ff 8, 1 layer, a batch of 2 sequences of
// 6); base and big: the paper's Transformer-base and -big encoders (Table 3) on one
// sequence of 128 tokens.
const std::vector<Preset>& presets();
// The preset called `name`, or nullptr.
const Preset* find_preset(const std::string& name);

// The model file's text: the model block, X = randn (B, S, N) and "encoder": size.init.
// InputError(source, "--heads", ...) and the like when the sizes do not fit together
// (heads must divide d_model; everything else positive).
std::string model_file_text(const ModelSize& size, const std::string& comment, const std::string& source);

}  // namespace attn

#endif  // ATTN_MODEL_PRESETS_H_

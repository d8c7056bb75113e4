#include "model/presets.h"

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"tiny", "the seeds' size: d_model 4, 2 heads, d_ff 8, 1 layer, 2 sequences of 6", {4, 2, 8, 1, 6, 2, 0}},
      {"base",
       "Transformer-base encoder: d_model 512, 8 heads, d_ff 2048, 6 layers, 128 tokens",
       {512, 8, 2048, 6, 128, 1, 0}},
      {"big",
       "Transformer-big encoder: d_model 1024, 16 heads, d_ff 4096, 6 layers, 128 tokens",
       {1024, 16, 4096, 6, 128, 1, 0}},
  };
  return all;
}

const Preset* find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (name == p.name) return &p;
  return nullptr;
}

std::string model_file_text(const ModelSize& s, const std::string& comment, const std::string& source) {
  const auto positive = [&](std::size_t v, const char* option) {
    if (v == 0) throw InputError(source, option, "expected a positive integer, found 0");
  };
  positive(s.d_model, "--d-model");
  positive(s.num_heads, "--heads");
  positive(s.num_layers, "--layers");
  positive(s.seq_len, "--seq");
  positive(s.batch, "--batch");
  if (s.d_model % s.num_heads != 0)
    throw InputError(
        source, "--heads",
        fmt::format("expected a divisor of --d-model = {} (each head gets d_model / heads columns), found {}",
                    s.d_model, s.num_heads));
  const std::string d_ff = s.d_ff ? fmt::format(", \"d_ff\": {}", s.d_ff) : "";
  const std::string x_shape = s.batch == 1 ? fmt::format("[{}, {}]", s.seq_len, s.d_model)
                                           : fmt::format("[{}, {}, {}]", s.batch, s.seq_len, s.d_model);
  // The comment is user text only through the preset table, but escape it as JSON anyway.
  std::string escaped;
  for (char c : comment) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return fmt::format(
      "{{\n"
      "  \"comment\": \"{}\",\n"
      "  \"model\": {{\"d_model\": {}, \"num_heads\": {}{}, \"num_layers\": {}, \"seed\": {}}},\n"
      "  \"input\": {{\"X\": {{\"randn\": {}}}}},\n"
      "  \"encoder\": \"{}\"\n"
      "}}\n",
      escaped, s.d_model, s.num_heads, d_ff, s.num_layers, s.seed, x_shape, s.init);
}

}  // namespace attn

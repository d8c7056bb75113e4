#include "html/lesson_memory.h"

#include <algorithm>

#include "attn/model_file.h"
#include "html/html_canvas.h"
#include "present/model_overview.h"

namespace attn {

PageMemory lesson_page_memory(const Model& model, const WalkthroughOptions& walkthrough, const PageSize& page) {
  RunSize size = run_size_of(model, *page.input);
  const long double n = static_cast<long double>(page.generated);
  if (page.generated > 0) {  // the run the prompt grows to
    if (model.decoder_only())
      size.seq_len = size.target_len = size.seq_len + page.generated;
    else
      size.target_len += page.generated;
  }
  size.trace_kept = true;
  size.backward = page.backward;
  const long double B = size.batch, H = model.config.num_heads, S = size.seq_len, T = size.target_len;
  PageMemory memory;
  // One heatmap cell per attention weight (the map and its overview thumbnail): encoder
  // self-attention over S, the decoder's over T and its cross-attention over T x S.
  memory.cells =
      B * H * (size.encoder_layers * S * S + size.decoder_layers * (T * T + (model.decoder_only() ? 0.0L : T * S)));
  // Numbers printed: every one of the trace's with --full or a threshold above it, else at
  // most the threshold per tensor (about 40 tensors a layer).
  const long double trace_numbers = static_cast<long double>(estimate_run_bytes(model.config, size)) / 8;
  const long double tensors = 40.0L * (size.encoder_layers + size.decoder_layers) + 10;
  memory.numbers = walkthrough.full ? trace_numbers
                                    : std::min(trace_numbers, tensors * static_cast<long double>(std::max<std::size_t>(
                                                                            walkthrough.array.threshold, 64)));
  // attn generate: each new token's section has its query's scores and weights against
  // every key so far, per head and layer (quadratic in -n).
  memory.numbers += 2 * H * size.decoder_layers * n * (T + (model.decoder_only() ? 0.0L : S));
  // Measured (attn explain on the built-in model, 15 to 63 tokens): about 300 bytes per SVG
  // cell and 16 per number, and 4 times the page's bytes in memory while it is built; a map
  // drawn on a canvas (a big model's, a long text's) takes under 3 bytes a cell.
  const long double longest = std::max({S, T, 1.0L});
  const bool canvas =
      drawn_on_canvas(static_cast<std::size_t>(longest), static_cast<std::size_t>(longest), is_big_model(model));
  const long double page_bytes = 512.0L * 1024 + page_bytes_per_cell(canvas) * memory.cells + 16 * memory.numbers;
  memory.bytes = 4 * page_bytes;
  return memory;
}

}  // namespace attn

// The walkthrough's limits in one place: how many tokens, numbers and columns the printers
// show before they summarize a tensor or leave a picture out. (Two more are options with
// their defaults in attn/walkthrough.h, which a public header must keep: ArrayFormatOptions'
// threshold, 1000 numbers, past which NumPy summarizes an array; and wide_threshold, 64
// numbers, past which the d_ff-wide tensors and the embedding table are summarized.)
#ifndef ATTN_PRESENT_PRINT_LIMITS_H_
#define ATTN_PRESENT_PRINT_LIMITS_H_

#include <cstddef>

namespace attn {

// NumPy's default line width, used when nothing says how wide the terminal is.
constexpr std::size_t kDefaultLineWidth = 75;
// The widest line of an explanation's text (explanations.cpp; its test checks every line).
constexpr std::size_t kExplanationWidth = 88;
// A terminal leaves out a heatmap of more queries than this: its rows would no longer fit the
// screen (terminal_page.cpp; an HTML page draws them all).
constexpr std::size_t kHeatmapMaxQueries = 32;
// The embedding step pairs each token with its row up to this many positions (B*S); past
// it the rows are shown as the tensor emb.
constexpr std::size_t kTokenRowsListed = 16;
// The loss step shows -log p of this many positions.
constexpr std::size_t kLossPositionsShown = 16;
// A model with more heads than this in its longest stack (layers x heads; GPT-2 small has
// 144, Transformer-base's encoder 48) is a big model: its lesson shows the first layer in
// full, each later layer as a line or two (where its heads look), and an overview of every
// layer's heads (model_overview.h); tensors past wide_threshold numbers are summarized.
// --layer, --head, --steps and --full show any part in full.
constexpr std::size_t kOverviewFromHeads = 64;
// A big model's summarized tensors keep this many rows and columns at each edge (NumPy's
// edgeitems; 3 by default).
constexpr std::size_t kOverviewEdgeItems = 2;
// The heatmaps of a big model's lesson draw this many heads of a block.
constexpr std::size_t kOverviewHeatmapHeads = 3;
// A worked residual sum shows rows of up to this many numbers whole; longer ones (a big
// model's d_model) as their first numbers, "…" and the last (worked_layer.cpp).
constexpr std::size_t kWorkedRowWhole = 64;
// The columns of attn grad's table of weight gradients: name, shape, |g|.
constexpr std::size_t kGradientNameColumns = 44, kGradientShapeColumns = 16, kGradientNormColumns = 10;

}  // namespace attn

#endif  // ATTN_PRESENT_PRINT_LIMITS_H_

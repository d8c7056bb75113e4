// Tensors as HTML tables: one table per matrix of the last two axes, its rows and columns
// headed by their indices and the corner by the axes' names, every number written as NumPy
// writes the array (one format for all of it, chosen from the numbers shown). Past NumPy's
// threshold the tables are summarized as the terminal does (the first and last edge items of
// each axis, ⋮ and … between them), and the whole tensor follows, folded, when it is small
// enough for a page.
#ifndef ATTN_HTML_HTML_TENSOR_H_
#define ATTN_HTML_HTML_TENSOR_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "attn/walkthrough.h"
#include "present/page_renderer.h"

namespace attn {

// The most numbers a tensor's whole table may hold on the page; a larger one shows only its
// summary and says that --dump writes it.
constexpr std::size_t kWholeTensorLimit = 20000;
// The same for a big model (present/model_overview.h: GPT-2 small's 12 layers of 12 heads),
// whose page would otherwise hold every (S, d_model) tensor of every layer whole (26 MB for
// 8 tokens): its attention weights stay whole, its d_model-wide tensors are summaries.
constexpr std::size_t kBigModelWholeTensorLimit = 1000;

// The tables of `t` (summarized when it has more elements than the options' threshold),
// each captioned `label` with its index when the tensor has more than two axes.
std::string tensor_tables(const Tensor& t, const std::string& label, const ArrayFormatOptions& options);

// A figure: the label and shape, the stats line when given, the tables, and the whole tensor
// folded under them when the tables are a summary and it has at most `whole_limit` numbers.
std::string tensor_figure(const ShownTensor& shown, const std::string& stats, const ArrayFormatOptions& options,
                          std::size_t whole_limit = kWholeTensorLimit);

// A matrix with labelled rows and columns, numbers to `precision`.
std::string labeled_matrix(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& rows,
                           const std::vector<std::string>& columns, int precision);

// The largest entries of vocabulary-sized rows: one table row per position.
std::string top_k_table(const TopKView& view);
// A table of words (present/page_renderer.h's TextTable) as a <table class="words">: the
// header in <thead>, each row's label a <th>.
std::string word_table(const TextTable& table);

}  // namespace attn

#endif  // ATTN_HTML_HTML_TENSOR_H_

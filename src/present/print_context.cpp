// What the printers share: the context they read, and the table that picks a printer for
// each kind of trace entry.
#include <fmt/format.h>

#include "attn/error.h"
#include "attn/step_roles.h"
#include "present/array_format.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

std::size_t PrintContext::cell_batch() const {
  return options.filter.batch.value_or(options.cell_given ? options.cell[0] : 0);
}

std::size_t PrintContext::cell_head() const {
  return options.filter.head.value_or(options.cell_given ? options.cell[1] : 0);
}

WorkedOptions PrintContext::worked_options() const {
  WorkedOptions w;
  w.precision = options.array.precision;
  // A big model's lesson works its long rows (768 numbers, every earlier position) with
  // fewer terms before the "…", so that the lesson stays a few hundred lines.
  if (options.overview) w.max_terms = 5;
  return w;
}

std::vector<std::string> PrintContext::labels(Sequence sequence, std::size_t b, std::size_t n, bool quoted) const {
  const auto* tokens = trace.tokens(sequence);
  const char* quote = quoted ? "\"" : "";
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(tokens && b < tokens->size() && i < (*tokens)[b].size()
                      ? quote + readable_token(model, (*tokens)[b][i]) + quote
                      : std::to_string(i));
  return out;
}

std::string PrintContext::item(const Tensor& t, std::size_t b) const {
  return axis_of(t, "B") < t.rank() ? fmt::format("[{}]", b) : "";
}

std::string PrintContext::operand_name(const TraceEntry& e, std::size_t i) const {
  if (i >= e.operands.size()) return "";
  return e.operands[i].entry ? display_name(*e.operands[i].entry) : e.operands[i].name;
}

std::string display_name(const StepId& id) {
  const StepKindRow& row = step_kind_row(id.kind);
  if (id.kind == StepKind::Input) return id.sequence == Sequence::Target ? "Y" : "X";
  if (is_attention_output(id.kind)) return id.block == Block::CrossAttention ? "cross_out" : "attn_out";
  if (is_embedding_or_head_norm(id.kind)) return row.display_name;  // numbered only to tell their weights apart
  if (!*row.display_name) return trace_name(id);                    // a layer's output, a stack's norm
  return id.number > 0 ? fmt::format("{}{}", row.display_name, id.number) : row.display_name;
}

StepKind attending_queries(const PrintContext& c, const StepId& id) { return attending_queries(c.trace, id); }

StepKind attended_keys(const PrintContext& c, const StepId& id) { return attended_keys(c.trace, id); }

StepKind attended_values(const PrintContext& c, const StepId& id) { return attended_values(c.trace, id); }

const TraceEntry* PrintContext::sibling(const StepId& id, StepKind kind) const {
  StepId other = id;
  other.kind = kind;
  other.number = 0;
  return trace.find(other);
}

const TraceEntry* PrintContext::forward_sibling(const StepId& id, StepKind kind) const {
  StepId other = id;
  other.kind = kind;
  other.gradient = false;
  if (kind != id.kind) other.number = 0;
  return trace.find(other);
}

const TraceEntry* PrintContext::operand_entry(const TraceEntry& e, std::size_t i) const {
  return i < e.operands.size() && e.operands[i].entry ? trace.find(*e.operands[i].entry) : nullptr;
}

std::optional<std::pair<Tensor, Tensor>> PrintContext::cell_head_matrices(const TraceEntry& e, StepKind a,
                                                                          StepKind b) const {
  const TraceEntry* first = sibling(e.id, a);
  const TraceEntry* second = sibling(e.id, b);
  const std::size_t batch = cell_batch(), head = cell_head();
  if (!first || !second || batch >= batch_count(e.tensor) || head >= config(e.id).num_heads) return std::nullopt;
  return std::pair{head_matrix(first->tensor, batch, head), head_matrix(second->tensor, batch, head)};
}

const AttentionWeights* PrintContext::attention_weights(const StepId& id) const {
  if (!id.in_layer()) return nullptr;
  const auto layer = static_cast<std::size_t>(id.layer);
  if (id.stack == Stack::Encoder && id.block == Block::SelfAttention && layer < model.encoder.size())
    return &model.encoder[layer].attention;
  if (id.stack != Stack::Decoder || layer >= model.decoder.size()) return nullptr;
  if (id.block == Block::MaskedSelfAttention) return &model.decoder[layer].self_attention;
  if (id.block == Block::CrossAttention) return &model.decoder[layer].cross_attention;
  return nullptr;
}

bool is_mask_token(const Model& model, const std::string& piece) {
  const auto id = model.tokenizer ? model.tokenizer->find(piece) : std::nullopt;
  return id && model.tokenizer->is_special(*id) &&
         (piece.find("MASK") != std::string::npos || piece.find("mask") != std::string::npos);
}

const NormWeights* PrintContext::norm_weights(const StepId& id) const { return norm_weights_of(model, id); }

const FeedForwardWeights* PrintContext::ffn_weights(const StepId& id) const {
  const auto layer = static_cast<std::size_t>(id.layer);
  if (!id.in_layer()) return nullptr;
  if (id.stack == Stack::Encoder && layer < model.encoder.size()) return &model.encoder[layer].ffn;
  if (id.stack == Stack::Decoder && layer < model.decoder.size()) return &model.decoder[layer].ffn;
  return nullptr;
}

void print_step_text(const TraceEntry& e, PrintContext& c, const StepText& text) {
  c.page.begin_step(text.shown_kind, text.title, text.why);
  c.page.formula(text.formula);
  c.page.shapes(equation(e.operands, text.op, e.tensor));
  c.page.tensor(display_name(e.id), e.tensor);
}

void print_backward_text(const TraceEntry& e, PrintContext& c, const BackwardText& text) {
  // Shown in full the first time each kind comes backward, as the forward's first one is.
  c.page.begin_step(text.shown_kind, text.title + ", backward", "", "backward." + text.title);
  for (const auto& f : text.formulas) c.page.formula(f);
  // dL/d(the step's result) -> dL/d(each of its operands): the forward's operands, reversed
  std::string shapes = shape_with_axes(e.tensor);
  const TraceEntry* forward = c.forward_sibling(e.id, e.id.kind);
  for (std::size_t i = 0; forward && i < forward->operands.size(); ++i)
    shapes += (i ? ", " : " -> ") + shape_with_axes(forward->operands[i].shape, forward->operands[i].axes);
  c.page.shapes(shapes);
  c.page.tensor(text.label, e.tensor);
}

void print_weight_gradients(const TraceEntry& e, PrintContext& c, WeightKind kind, int norm_number) {
  ParameterId id{kind, e.id.stack, e.id.layer, norm_number ? Block::None : e.id.block, norm_number, -1};
  for (int head = -1; head < static_cast<int>(c.config(e.id).num_heads); ++head) {
    id.head = head;
    const TraceEntry* g = c.trace.find(weight_gradient_id(id));
    if (!g) continue;
    std::string name = g->operands.empty() ? parameter_name(id) : g->operands[0].name;
    name = name.substr(name.rfind('.') + 1);
    c.page.tensor(head < 0 ? "dL/d" + name : fmt::format("dL/d{}^({})", name, head), g->tensor);
  }
}

std::string plain_number(double value, int precision) {
  std::string s = format_number(value, precision);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string equation(const std::vector<Operand>& operands, const char* op, const Tensor& result) {
  std::string lhs;
  for (std::size_t i = 0; i < operands.size(); ++i)
    lhs += (i ? std::string(" ") + op + " " : "") + shape_with_axes(operands[i].shape, operands[i].axes);
  return lhs + " -> " + shape_with_axes(result);
}

namespace {

// The printers of each row of the table of step kinds (attn/step_kinds.def), in StepKind's
// order: the forward's and the backward's.
struct PrinterRow {
  StepPrinterInfo forward, backward;
};
constexpr bool kEntersLayer[] = {false, false, true, true, false, false, false};  // by EntryPlace
constexpr PrinterRow kPrinterRows[] = {
#define ATTN_STEP(kind, trace, display, page, why, forward, backward, place, alias, summary) \
  {{page, forward, kEntersLayer[static_cast<int>(EntryPlace::place)]},                       \
   {page, backward, kEntersLayer[static_cast<int>(EntryPlace::place)]}},
#include "attn/step_kinds.def"
#undef ATTN_STEP
};
static_assert(sizeof(kPrinterRows) / sizeof(kPrinterRows[0]) == kStepKindCount, "printers for every step kind");

}  // namespace

const StepPrinterInfo& printer_of(StepKind kind) { return kPrinterRows[static_cast<std::size_t>(kind)].forward; }

const StepPrinterInfo& backward_printer_of(StepKind kind) {
  return kPrinterRows[static_cast<std::size_t>(kind)].backward;
}

const char* page_of(StepKind kind) { return step_kind_row(kind).page; }

const char* explanation_of(StepKind kind) { return step_kind_row(kind).explanation; }

void print_not_a_gradient(const TraceEntry& e, PrintContext&) {
  throw InternalError("the walkthrough has no printer for " + e.name);
}

}  // namespace attn

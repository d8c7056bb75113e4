#include "present/induction_lesson.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/page_renderer.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

using Layer = InductionLessonView::Layer;

// A head of one layer, and its largest score of one kind.
struct PickedHead {
  const Layer* layer = nullptr;
  std::size_t head = 0;
  double score = 0;
};

// The head with the largest `name` score among `layers`.
std::optional<PickedHead> best_head(const std::vector<const Layer*>& layers, const std::string& name) {
  std::optional<PickedHead> best;
  for (const Layer* l : layers)
    for (std::size_t h = 0; h < l->scores.size(); ++h)
      if (const HeadScore s = score_named(l->scores[h], name); s && (!best || *s > best->score))
        best = PickedHead{l, h, *s};
  return best;
}

std::string score_cell(const HeadScore& s) { return s ? fmt::format("{:.2f}", *s) : "-"; }

std::string head_name(int layer, std::size_t head) { return fmt::format("layer {} head {}", layer, head); }

std::string quoted(const std::string& token) { return "\"" + token + "\""; }

// The latest position before p holding p's token (one exists: p is a copy target).
std::size_t earlier_occurrence(const std::vector<std::size_t>& ids, std::size_t p) {
  std::size_t q = p;
  while (q > 0 && ids[--q] != ids[p]) {
  }
  return q;
}

// Every head's scores, the roles the lesson is about first.
TextTable scores_table(const std::vector<Layer>& layers) {
  TextTable table;
  table.caption =
      "each head's scores on this sequence, as attn heads measures them (docs/heads.md): prev previous_token, ind "
      "induction (q+1), ind2 induction_2 (q+2), first first_token, and the head's role:";
  table.header = {"", "prev", "ind", "ind2", "first", "role"};
  for (const Layer& l : layers)
    for (std::size_t h = 0; h < l.scores.size(); ++h) {
      const HeadScores& s = l.scores[h];
      table.rows.push_back({head_name(l.layer, h), score_cell(s.previous_token), score_cell(s.induction),
                            score_cell(s.induction_2), score_cell(s.first_token), strongest_role(s)});
    }
  table.text = aligned_columns(table.header, table.rows);
  return table;
}

// One head's weights as a heatmap on its own, the causal mask's cells drawn as masked.
HeatmapView one_head(const Layer& layer, std::size_t head, const std::vector<std::string>& tokens,
                     const std::string& caption) {
  HeatmapView view;
  const Tensor& w = layer.heads[head];
  const std::size_t S = w.dim(0);
  Tensor masked({S, S}, {"S", "S"});
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t j = i + 1; j < S; ++j) masked.data[i * S + j] = 1;
  view.heads.push_back(w);
  view.masked.push_back(masked);
  view.titles.push_back(head_name(layer.layer, head));
  view.row_labels = tokens;
  view.column_labels = tokens;
  view.caption = caption;
  return view;
}

std::string ablation_name(const CopyAblation& a, const std::vector<Layer>& layers) {
  if (a.heads.empty()) return "none";
  const auto role = [&](const HeadAblation& h) -> std::string {
    for (const Layer& l : layers)
      if (l.layer == h.layer && h.head < l.scores.size()) {
        const std::string r = strongest_role(l.scores[h.head]);
        return r == "mixed" ? "" : " (" + r + ")";
      }
    return "";
  };
  if (a.heads.size() == 1) return head_name(a.heads[0].layer, a.heads[0].head) + role(a.heads[0]);
  std::string heads;
  for (std::size_t i = 0; i < a.heads.size(); ++i)
    heads += (i == 0 ? "" : i + 1 == a.heads.size() ? " and " : ", ") + std::to_string(a.heads[i].head);
  return fmt::format("layer {}, heads {}", a.heads[0].layer, heads);
}

TextTable ablation_table(const InductionLesson& lesson, const std::vector<Layer>& layers) {
  TextTable table;
  table.caption = fmt::format(
      "each head ablated (its context set to zero, everything after it computed again), then each "
      "layer's heads together: of the {} positions that copy, the greedy picks that are right, and the mean "
      "probability of the token to copy:",
      lesson.positions);
  table.header = {"ablated", "right", "p(copy)"};
  for (const CopyAblation& a : lesson.ablations)
    table.rows.push_back(
        {ablation_name(a, layers), fmt::format("{}/{}", a.right, lesson.positions), fmt::format("{:.4f}", a.mean_p)});
  table.text = aligned_columns(table.header, table.rows);
  return table;
}

// The result of ablating exactly `head`, if the lesson measured it.
const CopyAblation* ablated_alone(const InductionLesson& lesson, int layer, std::size_t head) {
  for (const CopyAblation& a : lesson.ablations)
    if (a.heads.size() == 1 && a.heads[0].layer == layer && a.heads[0].head == head) return &a;
  return nullptr;
}

// The induction head: its weights with the stripe below the diagonal, and how it finds the
// token to copy at the first target.
void write_induction_head(Page& page, const PickedHead& induction, const std::optional<PickedHead>& previous,
                          const std::vector<CopyTarget>& targets, const std::vector<std::string>& tokens,
                          const std::vector<std::size_t>& ids) {
  const Layer& l = *induction.layer;
  std::set<std::size_t> offsets;
  for (const CopyTarget& t : targets) offsets.insert(t.position - earlier_occurrence(ids, t.position) - 1);
  const std::string stripe = offsets.size() == 1
                                 ? fmt::format("a stripe {} positions below the diagonal", *offsets.begin())
                                 : std::string("a stripe off the diagonal");
  page.aside_heatmap(one_head(l, induction.head, tokens,
                              fmt::format("{}, the induction head (step {}): in the rows of the second copy, {}: "
                                          "each row puts {:.2f} of its weight on average on the token after the "
                                          "earlier occurrence of its own",
                                          head_name(l.layer, induction.head), l.step, stripe, induction.score)));
  const std::size_t p = targets.front().position, q = earlier_occurrence(ids, p);
  const std::string writer =
      previous ? fmt::format("layer {}'s previous-token head", previous->layer->layer) : std::string("a layer before");
  page.aside_line(fmt::format(
      "How it finds it: its queries carry each position's own token, its keys the token before each position, "
      "which {} wrote there. They match just after the earlier occurrence of the current token, and the value "
      "there carries the token to copy: row {} ({}) puts {:.2f} on position {} ({}).",
      writer, p, quoted(tokens[p]), l.heads[induction.head].data[p * tokens.size() + q + 1], q + 1,
      quoted(tokens[q + 1])));
}

std::string spec(const PickedHead& h) { return fmt::format("{}.{}", h.layer->layer, h.head); }

// What the ablation table says of the two heads, in a sentence of its numbers.
void write_ablation_summary(Page& page, const InductionLesson& lesson, const std::optional<PickedHead>& previous,
                            const std::optional<PickedHead>& induction) {
  const auto effect = [&](const std::optional<PickedHead>& h, const char* role) -> std::string {
    if (!h) return "";
    const CopyAblation* a = ablated_alone(lesson, h->layer->layer, h->head);
    if (!a) return "";
    return fmt::format("zeroing the {} head ({}) leaves {} of the {} right (mean p {:.4f}); ", role,
                       head_name(h->layer->layer, h->head), a->right, lesson.positions, a->mean_p);
  };
  const CopyAblation* none = lesson.ablations.empty() ? nullptr : &lesson.ablations.front();
  std::string text = effect(previous, "previous-token") + effect(induction, "induction");
  if (none && none->heads.empty())
    text += fmt::format("unablated, {} of {} (mean p {:.4f}). ", none->right, lesson.positions, none->mean_p);
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  const std::optional<PickedHead>& shown = previous ? previous : induction;
  if (shown)
    text += fmt::format(
        "attn explain --example induction --ablate {0} walks through an ablated run; attn heads --example "
        "induction --ablate {0} shows each position's next token with and without it.",
        spec(*shown));
  page.aside_line(text);
}

}  // namespace

void InductionLessonView::see(const TraceEntry& entry, const Trace& trace, int step) {
  const StepId& id = entry.id;
  if (!is_attention_pattern(id.kind) || id.gradient || id.block == Block::CrossAttention) return;
  const Tensor& w = entry.tensor;  // (B?,H,S,S)
  if (w.rank() < 3) return;
  const std::size_t H = w.shape[w.rank() - 3], S = w.shape[w.rank() - 2];
  const auto* tokens = trace.tokens(id.sequence);
  if (!tokens || tokens->empty() || tokens->front().size() != S) return;
  if (tokens_.empty()) {
    tokens_ = tokens->front();
    std::map<std::string, std::size_t> seen;
    for (const std::string& t : tokens_) ids_.push_back(seen.emplace(t, seen.size()).first->second);
  }
  Layer layer{id.layer, step, {}, {}};
  for (std::size_t h = 0; h < H; ++h) {
    layer.heads.push_back(head_matrix(w, 0, h));
    layer.scores.push_back(score_head(layer.heads.back(), ids_));
  }
  layers_.push_back(std::move(layer));
}

void InductionLessonView::write(Page& page, const Model& model, const InductionLesson& lesson) const {
  if (layers_.empty()) return;
  const std::vector<CopyTarget> targets = copy_targets(ids_);
  std::string sequence;
  for (const std::string& t : tokens_) sequence += (sequence.empty() ? "" : " ") + readable_token(model, t);
  std::string intro = fmt::format(
      "This model was trained to continue a repeated segment (attn train --task induction). The sequence: \"{}\". ",
      sequence);
  if (targets.empty()) {
    page.aside("══ The lesson: an induction circuit ══", "",
               intro +
                   "No token of it occurs twice, so there is nothing to copy: give a sequence that repeats a "
                   "segment, such as \"<BOS> a b c d e a b c d e\".");
    return;
  }
  const CopyTarget& first = targets.front();
  const std::size_t q = earlier_occurrence(ids_, first.position);
  intro += fmt::format(
      "At {} of its positions the token occurred before, and the token to write next is the one that "
      "followed it then: at position {}, {} again, so {}, which followed {} at position {}. Two heads do it "
      "in turn, a circuit Olsson et al. (2022) call an induction circuit.",
      targets.size(), first.position, quoted(tokens_[first.position]), quoted(tokens_[q + 1]), quoted(tokens_[q]), q);
  page.aside("══ The lesson: an induction circuit ══", "", intro);
  page.aside_table(scores_table(layers_));

  std::vector<const Layer*> all, later;
  for (const Layer& l : layers_) all.push_back(&l);
  const std::optional<PickedHead> previous =
      best_head(std::vector<const Layer*>(all.begin(), all.end() - (all.size() > 1 ? 1 : 0)), "previous_token");
  if (previous) {
    const Layer& l = *previous->layer;
    page.aside_heatmap(one_head(
        l, previous->head, tokens_,
        fmt::format("{}, the previous-token head (step {}): each row puts {:.2f} of its weight on average on the "
                    "token just before it, the cells left of the diagonal",
                    head_name(l.layer, previous->head), l.step, previous->score)));
    page.aside_line(
        fmt::format("Its output, added to each position, carries the token before it: after layer {}, position {} ({}) "
                    "also holds {}, the token that came before it.",
                    l.layer, q + 1, quoted(tokens_[q + 1]), quoted(tokens_[q])));
    for (const Layer& m : layers_)
      if (m.layer > l.layer) later.push_back(&m);
  }
  const std::optional<PickedHead> induction = best_head(later.empty() ? all : later, "induction");
  if (induction) write_induction_head(page, *induction, previous, targets, tokens_, ids_);
  page.aside_table(ablation_table(lesson, layers_));
  write_ablation_summary(page, lesson, previous, induction);
}

}  // namespace attn

// The steps before the layers: tokens, ids, embeddings, positions, the input, the masks.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "present/print_limits.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {
bool is_target(const TraceEntry& e) { return e.id.sequence == Sequence::Target; }

// The batch items --batch leaves shown.
bool shown_item(const PrintContext& c, std::size_t b) {
  return !c.options.filter.batch || *c.options.filter.batch == b;
}
// A bidirectional encoder's input (a BERT checkpoint's): the special tokens its tokenizer
// framed the first sentence with, and the masks the model is to fill in.
void print_special_tokens(const std::vector<std::vector<std::string>>& tokens, const PrintContext& c) {
  const Model& m = c.model;
  if (!m.checkpoint.present() || m.config.causal || m.has_decoder() || !m.tokenizer || tokens.empty()) return;
  std::string framing, masks;
  for (std::size_t s = 0; s < tokens[0].size(); ++s) {
    const std::string& piece = tokens[0][s];
    const auto id = m.tokenizer->find(piece);
    if (!id || !m.tokenizer->is_special(*id) || id == m.tokenizer->special_id(SpecialRole::Pad)) continue;
    const bool mask = is_mask_token(m, piece);
    (mask ? masks : framing) += fmt::format("{}\"{}\" at {}", (mask ? masks : framing).empty() ? "" : ", ", piece, s);
  }
  if (!framing.empty())
    c.page.line(
        fmt::format("special tokens the tokenizer adds: {} (the first opens every input, and a classifier "
                    "reads its row; the last closes the sentence)",
                    framing));
  if (!masks.empty()) c.page.line(fmt::format("to fill in: {} (the model sees the words on both sides)", masks));
}

// The words of the sequence `e` belongs to (its first batch item), special tokens left out,
// as a learner reads them: a checkpoint's pieces ("The", "␣cat") joined and cut at their
// spaces. For an explanation that cites the run's own sentence (Page::cite_order).
std::vector<std::string> sentence_words(const TraceEntry& e, const PrintContext& c) {
  const auto* tokens = c.trace.tokens(e.id.sequence);
  if (!tokens || tokens->empty() || !c.model.tokenizer) return {};
  const Tokenizer& tokenizer = *c.model.tokenizer;
  std::string text;
  for (const std::string& token : tokens->front()) {
    const auto id = tokenizer.lookup(token);
    if (id && tokenizer.is_special(*id)) continue;
    text += (c.model.checkpoint.present() || text.empty() ? "" : " ") + readable_token(c.model, token);
  }
  std::vector<std::string> words;
  std::string word;
  static const std::string kSpaceMark = "\xE2\x90\xA3";  // ␣, display_piece's leading space
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool space = i == text.size() || text[i] == ' ' || text.compare(i, kSpaceMark.size(), kSpaceMark) == 0;
    if (!space) {
      word += text[i];
      continue;
    }
    if (!word.empty()) words.push_back(word);
    word.clear();
    if (i < text.size() && text[i] != ' ') i += kSpaceMark.size() - 1;
  }
  return words;
}
}  // namespace

void print_token_ids(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.leave_layer();
  // A checkpoint's tokenizer cuts words into pieces and never makes <UNK>: its own "why".
  const char* why = c.model.checkpoint.present() ? "subword_tokenize" : explanation_of(e.id.kind);
  c.page.begin_step(page_of(e.id.kind), is_target(e) ? "Target tokens and ids" : "Tokens and ids", why,
                    is_target(e) ? "target_tokens" : "tokens");
  c.page.formula("ids = each token's row in the vocabulary");
  c.page.shapes(shape_with_axes(t));
  if (const auto* tokens = c.trace.tokens(e.id.sequence)) {
    for (std::size_t b = 0; b < tokens->size(); ++b) {
      if (!shown_item(c, b)) continue;
      std::string row = c.trace.drops_batch_axis() ? "" : fmt::format("[{}] ", b);
      for (std::size_t s = 0; s < (*tokens)[b].size(); ++s)
        row += fmt::format("{}\"{}\"→{}", s ? "  " : "", readable_token(c.model, (*tokens)[b][s]),
                           static_cast<long long>(t.data[b * (*tokens)[b].size() + s]));
      c.page.line(row);
    }
  }
  const bool listed = c.trace.tokens(e.id.sequence) != nullptr;
  if (listed) print_special_tokens(*c.trace.tokens(e.id.sequence), c);
  if (is_target(e) && c.input.target_tokens.from_bos) {
    const auto& ends = c.input.target_tokens.predicts_end;
    const bool all_ended = !ends.empty() && std::find(ends.begin(), ends.end(), false) == ends.end();
    c.page.line(all_ended ? "(no target given: the decoder reads <BOS>, then its greedy picks to <EOS>)"
                          : "(no target given: the decoder reads <BOS>, then its greedy picks, cut at the length "
                            "limit before it predicted <EOS>)");
  }
  // The line above already gives every id; --full (or no token list) prints the array too.
  if (!listed || c.options.full) c.page.tensor(display_name(e.id), t, true);
}

void print_padding_mask(const TraceEntry& e, PrintContext& c) {
  c.page.begin_step(page_of(e.id.kind), is_target(e) ? "Target padding mask" : "Padding mask",
                    explanation_of(e.id.kind));
  c.page.formula(
      "padding = 1 at every <PAD>   (added to even out the lengths of a batch, or written in the "
      "input; those keys get -inf below)");
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.tensor(display_name(e.id), e.tensor, true);
}

void print_embedding_lookup(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step(page_of(e.id.kind), is_target(e) ? "Target embedding lookup" : "Embedding lookup",
                    explanation_of(e.id.kind));
  c.page.formula("emb = E[ids]   (row ids[s] of E; one_hot(ids) @ E without multiplying)");
  if (e.operands.size() == 2)
    c.page.shapes(fmt::format("{} ids into E {} -> {}", shape_with_axes(e.operands[0].shape, e.operands[0].axes),
                              shape_with_axes(e.operands[1].shape, e.operands[1].axes), shape_with_axes(t)));
  const auto* tokens = c.trace.tokens(e.id.sequence);
  const std::size_t N = c.model.config.d_model, B = batch_count(t), S = t.shape[t.rank() - 2];
  // E is vocabulary-sized, like the logits: past a small table only the rows looked up matter.
  if (c.page.detailed() && (c.options.full || c.model.embedding.size() <= c.options.wide_threshold))
    c.page.weight("E", c.model.embedding);
  else if (c.page.detailed() && c.options.show_weights)
    c.page.line(fmt::format("(E: V={} rows; the {} looked up {}; --full prints E whole)", c.model.embedding.shape[0],
                            B * S, tokens && B * S <= kTokenRowsListed ? "follow" : "are emb"));
  if (!tokens || B * S > kTokenRowsListed) {
    c.page.tensor(display_name(e.id), t);
    return;
  }
  // Each row with the token it is the embedding of, for every sentence of the batch.
  for (std::size_t b = 0; b < B; ++b) {
    if (!shown_item(c, b)) continue;
    for (std::size_t s = 0; s < S; ++s) {
      const std::string& token = (*tokens)[b][s];  // row b*S+s of emb (B*S,N)
      const auto id = c.model.vocab.find(token);
      Tensor row({N}, {"N"});
      std::copy(t.data.begin() + static_cast<std::ptrdiff_t>((b * S + s) * N),
                t.data.begin() + static_cast<std::ptrdiff_t>((b * S + s + 1) * N), row.data.begin());
      c.page.labeled_vector(fmt::format("emb{}[{}] = E[{}] (\"{}\")", c.item(t, b), s,
                                        id ? std::to_string(*id) : "<UNK>", readable_token(c.model, token)),
                            row);
    }
  }
}

void print_scaled_embedding(const TraceEntry& e, PrintContext& c) {
  const std::size_t N = c.model.config.d_model;
  c.page.begin_step(page_of(e.id.kind), "Scale the embeddings", explanation_of(e.id.kind));
  c.page.formula(fmt::format("emb_scaled = emb · √{} = emb · {}   (times √d_model, as in the paper)", N,
                             plain_number(std::sqrt(double(N)))));
  c.page.shapes(shape_with_axes(e.tensor) + " · scalar -> " + shape_with_axes(e.tensor));
  c.page.tensor(display_name(e.id), e.tensor);
}

void print_token_type_embedding(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step(page_of(e.id.kind), "Token types (segments)", explanation_of(e.id.kind));
  c.page.formula(
      "T = T_table[type_ids]   (type 0 for every token of one sentence: row 0 of the table at each "
      "position)");
  if (e.operands.size() == 1)
    c.page.shapes(fmt::format("type ids (all 0) into T_table {} -> {}",
                              shape_with_axes(e.operands[0].shape, e.operands[0].axes), shape_with_axes(t)));
  if (c.page.detailed()) c.page.weight("T_table", c.model.token_types);
  c.page.tensor(display_name(e.id), t);
  if (!c.page.detailed() || t.rank() < 2) return;
  // The worked element: emb + T at --cell's position and feature, as the input adds them.
  const std::size_t row = std::min(c.cell_row(), t.shape[t.rank() - 2] - 1);
  const std::size_t col = std::min(c.cell_column(), t.shape.back() - 1);
  c.page.worked(fmt::format("T[{}][{}] = T_table[0][{}] = {}   (every position of one sentence adds the same row)\n",
                            row, col, col, plain_number(c.model.token_types.at({0, col}), c.options.array.precision)));
}

void print_token_type_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Token types (segments)",
                       {"emb + T: dL/dT = dL/d(the sum), unchanged",
                        "T = T_table[type_ids]:  dL/dT_table[type] += dL/dT[b][s] for every position of that type "
                        "(one sentence: every position's gradient summed into row 0; row 1 gets nothing)"},
                       "dL/dT"});
  if (e.id.sequence == Sequence::Source) print_weight_gradients(e, c, WeightKind::TokenTypes);
}

void print_positional_encoding(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const bool sinusoidal = c.model.config.positional_encoding == PositionalEncoding::Sinusoidal;
  if (!sinusoidal) c.page.cite_order(sentence_words(e, c));  // the run's sentence, not the built-in model's
  if (c.model.config.positional_encoding == PositionalEncoding::SinusoidalTable) {
    c.page.begin_step(page_of(e.id.kind), "Sinusoidal positions, from the model's table", "sinusoidal_table");
    c.page.formula(
        "PE = P[0:S]   (P(pos, k) = sin(pos / 10000^(2k/d_model)) in the first half of the dimensions, "
        "cos of the same in the second, stored as float32)");
    if (c.page.detailed()) c.page.weight("P", c.model.positions);
  } else if (!sinusoidal) {
    c.page.begin_step(page_of(e.id.kind), "Learned positions", "learned_positions");
    c.page.formula("PE = P[0:S]   (the first S rows of the learned position table P)");
    if (c.page.detailed()) c.page.weight("P", c.model.positions);
  } else {
    c.page.begin_step(page_of(e.id.kind), "Sinusoidal positional encoding", explanation_of(e.id.kind));
    c.page.formula(
        "PE = sines and cosines of the position   (PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), "
        "PE(pos, 2i+1) = cos of the same)");
  }
  c.page.shapes(shape_with_axes(t));
  c.page.tensor(display_name(e.id), t);
  if (!sinusoidal || t.rank() != 2) return;
  // Default: PE(1, 2), the element seed 004 works out; --cell i,j picks (pos, dim).
  const std::size_t pos = c.options.cell_given ? c.options.cell[2] : std::min<std::size_t>(1, t.shape[0] - 1);
  const std::size_t dim = c.options.cell_given ? c.options.cell[3] : std::min<std::size_t>(2, t.shape[1] - 1);
  if (pos < t.shape[0] && dim < t.shape[1])
    c.page.worked(worked_positional_encoding(pos, dim, c.model.config.d_model, c.worked_options()));
}

void print_input(const TraceEntry& e, PrintContext& c) {
  const bool target = is_target(e);
  StepId lookup = e.id;
  lookup.kind = StepKind::EmbeddingLookup;
  const bool from_tokens = c.trace.find(lookup) != nullptr;
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), target ? "Decoder input" : "Input X", explanation_of(e.id.kind));
  const std::string emb = std::string(c.model.config.scale_embeddings ? "emb_scaled" : "emb") +
                          (c.model.token_types.has_values() ? " + T" : "");
  const PositionalEncoding pe = c.model.config.positional_encoding;
  if (from_tokens && pe == PositionalEncoding::RoPE)
    c.page.formula(fmt::format("{} = {}   (no positions added: RoPE turns the queries and keys inside attention)",
                               display_name(e.id), emb));
  else if (from_tokens && pe != PositionalEncoding::None)
    c.page.formula(fmt::format("{} = {} + PE   (each token's embedding plus its position)", display_name(e.id), emb));
  else if (from_tokens)
    c.page.formula(fmt::format("{} = {}   (no positional encoding)", display_name(e.id), emb));
  else
    c.page.formula(display_name(e.id) + " as given   (one row of d_model numbers per position)");
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.key_tensor(display_name(e.id), e.tensor);
}

// The additive masks, as added to the scores: -inf where a query may not see a key.
void print_mask(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const bool encoder = e.id.stack == Stack::Encoder;
  const bool cross = e.id.block == Block::CrossAttention;
  const bool self = !encoder && !cross;
  const bool causal = self || (encoder && c.model.config.causal);
  // the window's own mask (GPT-Neo's local layers), or the stack's mask with the window of
  // every layer (Mistral's)
  const bool local = e.id.kind == StepKind::WindowMask;
  const ModelConfig& config = c.model.config;
  const std::size_t window = local                                      ? config.sliding_window
                             : causal && config.windowed_layers.empty() ? config.sliding_window
                                                                        : 0;
  const char* why = local ? "local_attention" : window ? "sliding_window" : causal ? "causal_mask" : "padding_mask";
  c.page.leave_layer();
  if (local)
    c.page.begin_step(page_of(e.id.kind), fmt::format("Local attention mask (causal, window W = {})", window), why);
  else if (cross)
    c.page.begin_step(page_of(e.id.kind), "Cross-attention mask (source padding)", why);
  else if (self && !c.model.decoder_only())
    c.page.begin_step(page_of(e.id.kind),
                      window ? fmt::format("Decoder self-attention mask (causal, sliding window W = {})", window)
                             : std::string("Decoder self-attention mask (causal)"),
                      why);
  else if (self)
    c.page.begin_step(
        page_of(e.id.kind),
        window ? fmt::format("Causal mask with a sliding window of W = {}", window) : std::string("Causal mask"), why);
  else
    c.page.begin_step(page_of(e.id.kind),
                      window                  ? fmt::format("Causal mask with a sliding window of W = {}", window)
                      : c.model.config.causal ? std::string("Causal mask")
                                              : std::string("Padding mask for self-attention"),
                      why);
  if (window)
    c.page.formula(
        fmt::format("query i sees the keys i-{} .. i   (the last W = {} positions, itself included; "
                    "nothing from the future)",
                    window - 1, window));
  else if (causal)
    c.page.formula("query i sees the keys j <= i   (nothing from the future)");
  if (t.rank() == 3 || cross) c.page.formula("padded keys (<PAD>) are hidden from every query");
  if (c.page.detailed()) c.page.formula("mask = -inf where a query (row) may not see a key (column), else 0");
  c.page.shapes(shape_with_axes(t));
  c.page.tensor(display_name(e.id), t);
}

}  // namespace attn

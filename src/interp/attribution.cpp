// Direct logit attribution: one run of the model's program; the final residual at the last
// position taken apart along the tape (a residual add is its two operands, a layer's output
// what it read, an attention block its heads' context through their rows of W_o plus its
// bias), each part through the final norm with the scale frozen at the whole residual's,
// projected on the unembedding direction u.
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/step_roles.h"
#include "forward/program.h"

namespace attn {

namespace {

// The last row of every record of one sequence-shaped run: (1,S,X) -> (X,), (1,H,S,d) -> (H,d).
class LastRows {
 public:
  void keep(const TraceRecord& r) {
    if (r.id.gradient || (r.shape.size() != 3 && r.shape.size() != 4)) return;
    const bool heads = r.shape.size() == 4;
    const std::size_t H = heads ? r.shape[1] : 1, S = r.shape[heads ? 2 : 1], X = r.shape.back();
    Tensor row = Tensor::uninitialized(heads ? Shape{H, X} : Shape{X});
    for (std::size_t h = 0; h < H; ++h)
      std::copy_n(r.data + (h * S + S - 1) * X, X, row.data.begin() + static_cast<std::ptrdiff_t>(h * X));
    for (auto& [id, t] : rows_)
      if (id == r.id) {
        t = std::move(row);
        return;
      }
    rows_.emplace_back(r.id, std::move(row));
  }
  const Tensor& at(const StepId& id) const {
    for (const auto& [kept, t] : rows_)
      if (kept == id) return t;
    throw InternalError("attn attribute: no last row of " + trace_name(id));
  }

 private:
  std::vector<std::pair<StepId, Tensor>> rows_;
};

const TapeEntry* made(const std::vector<TapeEntry>& tape, const StepId& id) {
  for (auto it = tape.rbegin(); it != tape.rend(); ++it)
    if (it->result == id) return &*it;
  return nullptr;
}

// The parts of the final residual, each an (N,) row and its name.
struct Parts {
  const std::vector<TapeEntry>& tape;
  const LastRows& rows;
  std::vector<std::pair<std::string, Tensor>> list;

  // The layer's prefix: "L3", or "encoder.L3" outside a decoder-only model's one stack.
  static std::string layer_name(const StepId& id) { return fmt::format("L{}", id.layer); }

  void residual(const StepId& id) {
    const TapeEntry* e = made(tape, id);
    if (e && e->op == TapeOp::Residual) {
      residual(e->x);
      written(e->x2);
    } else if (e && e->op == TapeOp::LayerOutput) {
      residual(e->x);
    } else {
      list.emplace_back(e && e->op == TapeOp::Input ? "embed" : trace_name(id), rows.at(id));
    }
  }

  // What a sub-layer wrote: an attention block as its heads and its bias.
  void written(const StepId& id) {
    const TapeEntry* e = made(tape, id);
    if (!e || e->op != TapeOp::Attention) {
      list.emplace_back(e && e->op == TapeOp::FeedForward ? layer_name(id) + ".mlp" : trace_name(id), rows.at(id));
      return;
    }
    const StepId context_id = heads_context_of(id);
    const Tensor& context = rows.at(context_id);  // (H,d)
    const AttentionWeights& w = *e->attention;
    const Tensor W_o = widened(w.W_o);  // (H*d,N)
    const std::size_t H = context.shape[0], d = context.shape[1], N = rows.at(id).size();
    const std::string prefix = layer_name(id) + (id.block == Block::CrossAttention ? ".cross." : "");
    for (std::size_t h = 0; h < H; ++h) {
      Tensor part({N}, {"N"});
      // head h's context row (d,) @ its rows of W_o (d,N); without W_o its slice of the concat
      for (std::size_t n = 0; n < N; ++n) {
        if (!w.has_output_projection()) {
          part.data[n] = n / d == h ? context.data[h * d + n % d] : 0.0;
          continue;
        }
        double sum = 0;
        for (std::size_t j = 0; j < d; ++j) sum += context.data[h * d + j] * W_o.data[(h * d + j) * N + n];
        part.data[n] = sum;
      }
      list.emplace_back(fmt::format("{}H{}", prefix, h), std::move(part));
    }
    if (w.b_o.has_values()) {
      Tensor bias({N}, {"N"});
      for (std::size_t n = 0; n < N; ++n) bias.data[n] = w.b_o.at({n});
      list.emplace_back(prefix + (prefix.back() == '.' ? "attn_bias" : ".attn_bias"), std::move(bias));
    }
  }
};

double column(const Model& model, std::size_t id, std::size_t n) {
  return model.output.tied ? model.embedding.at({id, n}) : model.output.W.at({n, id});
}

void refuse_unless_prenorm(const Model& model) {
  if (!model.output.present)
    throw InputError("attn attribute", "", "this model has no output head, so it has no logits to attribute");
  if (!model.config.norm_first)
    throw InputError("attn attribute", "",
                     "this model is post-norm (a LayerNorm after every residual add), so its last residual is a "
                     "norm of the sum, not a sum of what each block wrote: nothing to attribute directly");
}

}  // namespace

Attribution attribute(const Model& model, const RunInput& input, const Metric& metric) {
  refuse_unless_prenorm(model);
  const std::vector<std::size_t> ids = metric.ids();
  Trace trace(false);
  trace.keep_entries(false);
  LastRows rows;
  std::vector<double> logits;
  trace.set_sink([&](const TraceRecord& r) {
    if (is_output_logits(r.id.kind) && !r.id.gradient) logits.assign(r.data, r.data + element_count(r.shape));
    rows.keep(r);
  });
  RunContext context;
  context.head_ids = &ids;
  run_program(model, input, trace, context);

  // the final residual: what the last stack's final norm read, or its last layer's output
  const std::vector<TapeEntry>& tape = trace.tape();
  StepId residual = tape.back().result;
  for (const TapeEntry& e : tape)
    if (e.op == TapeOp::Norm && is_final_norm(e.result.kind)) residual = e.x;
  Parts parts{tape, rows, {}};
  parts.residual(residual);

  const NormWeights& norm = model.has_decoder() ? model.decoder_norm : model.encoder_norm;
  const bool has_norm = norm.gamma.has_values();
  const Tensor& R = rows.at(residual);
  const std::size_t N = R.size();
  Attribution out;
  out.rms = root_mean_square(model.config.norm);
  const bool plus_one = model.config.norm == Norm::RMSNormPlusOne;  // Gemma's x̂ · (1 + gamma)
  const double mean = out.rms || !has_norm ? 0.0 : pairwise_sum(R.data.data(), N) / static_cast<double>(N);
  std::vector<double> centered(N), squares(N);
  for (std::size_t n = 0; n < N; ++n) {
    centered[n] = R.data[n] - mean;
    squares[n] = centered[n] * centered[n];
  }
  out.scale =
      has_norm ? 1.0 / std::sqrt(pairwise_sum(squares.data(), N) / static_cast<double>(N) + model.config.layer_norm_eps)
               : 1.0;
  // u = W_U[answer] - W_U[wrong], each coordinate through the frozen norm's gamma
  std::vector<double> u(N);
  for (std::size_t n = 0; n < N; ++n) {
    const double gamma = has_norm ? (plus_one ? 1.0 + norm.gamma.at({n}) : norm.gamma.at({n})) : 1.0;
    u[n] = gamma * (column(model, metric.answer, n) - (metric.wrong ? column(model, *metric.wrong, n) : 0.0));
  }
  for (auto& [name, c] : parts.list) {
    const double c_mean = out.rms || !has_norm ? 0.0 : pairwise_sum(c.data.data(), N) / static_cast<double>(N);
    double value = 0;
    for (std::size_t n = 0; n < N; ++n) value += (c.data[n] - c_mean) * out.scale * u[n];
    out.components.push_back({name, value});
  }
  if (has_norm && norm.beta.has_values()) {
    double value = 0;
    for (std::size_t n = 0; n < N; ++n)
      value += norm.beta.at({n}) *
               (column(model, metric.answer, n) - (metric.wrong ? column(model, *metric.wrong, n) : 0.0));
    out.components.push_back({"final_norm_bias", value});
  }
  if (!model.output.tied && model.output.b.has_values())
    out.components.push_back({"output_bias", model.output.b.at({metric.answer}) -
                                                 (metric.wrong ? model.output.b.at({*metric.wrong}) : 0.0)});
  out.total = ids.size() == 2 ? logits.at(0) - logits.at(1) : logits.at(0);
  for (const Sequence s : {Sequence::Target, Sequence::Source})
    if (const auto* tokens = trace.tokens(s); tokens && out.tokens.empty()) out.tokens = tokens->front();
  return out;
}

}  // namespace attn

// The whole backward pass: the forward's tape (attn/trace.h) replayed from the loss down to
// the embeddings, each block by its own backward, the last block first.
#include "attn/backward.h"

#include <optional>
#include <utility>
#include <vector>

#include "attn/model_file.h"
#include "backward/grad_scope.h"
#include "backward/layers_backward.h"
#include "backward/weight_gradients.h"
#include "core/require.h"
#include "steps/embedding.h"
#include "steps/loss.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"
#include "steps/projection.h"
#include "steps/residual.h"

namespace attn {

namespace {

// Records the loss, a scalar (shape []), and returns it.
double record_loss(Trace& trace, double loss) {
  Tensor t(Shape{}, AxisNames{});
  t.data[0] = loss;
  StepId id;
  id.kind = StepKind::Loss;
  trace.record(id, t);
  return loss;
}

// The output head backward from the cross-entropy of the labels: records the loss (into
// *loss too), grad.output.probabilities and grad.output.logits; returns dL/d(the head's
// input).
Tensor output_head_backward(const Model& model, const Tensor& labels, const StepId& hidden, const GradScope& at,
                            double* loss) {
  const Tensor logits = at.value(StepKind::Logits);
  const Tensor p = at.value(StepKind::Probabilities);
  const auto ignore = model.vocab.pad_id();
  *loss = record_loss(at.trace(), cross_entropy(logits, labels, ignore));
  // L = mean -log p[label]: dL/dp = -1 / (n p[label]); through the softmax, (p - onehot) / n
  at.record(StepKind::Probabilities, cross_entropy_probabilities_gradient(p, labels, ignore));
  const Tensor dlogits = cross_entropy_backward(p, labels, ignore);
  at.record(StepKind::Logits, dlogits, {at.kept(StepKind::Probabilities), at.kept_gradient(StepKind::Probabilities)});
  const Tensor x = at.value(hidden);
  if (model.output.tied) {
    // a tied head's own bias (BERT's, Marian's and BART's final_logits_bias): the sum of
    // dlogits over the positions
    if (model.output.b.has_values())
      at.weights().add(ParameterId{WeightKind::OutputB}, add_bias_backward(dlogits, "V"));
    return tied_vocabulary_logits_backward(x, model.embedding, dlogits,
                                           at.weights().accumulator(ParameterId{WeightKind::Embedding}));
  }
  ProjectionGradients g = vocabulary_logits_backward(x, model.output.W, !model.output.b.data.empty(), dlogits);
  at.weights().add(ParameterId{WeightKind::OutputW}, std::move(g.dW));
  if (!model.output.b.data.empty()) at.weights().add(ParameterId{WeightKind::OutputB}, std::move(g.db));
  return std::move(g.dx);
}

// dinput is dL/d(a sequence's input), E[ids] (· √N) + PE: records the positions', the
// scaled and the looked-up embeddings' gradients; adds into the table's (and the learned
// positions') gradient.
void embed_sequence_backward(const Model& model, const GradScope& at, const Tensor& dinput) {
  if (model.config.positional_encoding != PositionalEncoding::None &&
      model.config.positional_encoding != PositionalEncoding::RoPE) {
    // PE (S,N) was added to every sentence: its gradient sums the batch's
    const Tensor dpe = add_positions_backward(dinput);
    at.record(StepKind::PositionalEncoding, dpe, {at.kept_gradient(StepKind::Input)});
    if (model.config.positional_encoding == PositionalEncoding::Learned) {
      // the decoder's own table when it has one (BART)
      const bool own = at.sequence() == Sequence::Target && model.decoder_positions.has_values();
      learned_positions_backward(
          dpe, at.weights().accumulator(ParameterId{WeightKind::Positions, own ? Stack::Decoder : Stack::None}));
    }
  }
  if (model.token_types.has_values()) {
    // the type rows were added to every position (type 0 for one sentence): dL/d(them) is
    // dinput, scattered into the type table's rows
    at.record(StepKind::TokenTypeEmbedding, dinput, {at.kept_gradient(StepKind::Input)});
    const Tensor ids = at.value(StepKind::TokenIds);
    token_type_rows_backward(Tensor(ids.shape, ids.axes), dinput,
                             at.weights().accumulator(ParameterId{WeightKind::TokenTypes}));
  }
  Tensor d = dinput;
  if (model.config.scale_embeddings) {
    at.record(StepKind::ScaledEmbedding, d, {at.kept_gradient(StepKind::Input)});
    d = scale_embedding_backward(d);
  }
  at.record(StepKind::EmbeddingLookup, d, {at.kept_gradient(StepKind::Input)});
  embedding_lookup_backward(at.value(StepKind::TokenIds), d,
                            at.weights().accumulator(ParameterId{WeightKind::Embedding}));
}

// The head's transform backward (BERT's MLM head): d is dL/d(act(x W_t + b_t)) (B,T,N);
// records grad.output.transform, adds dW_t and db_t, returns dL/dx.
Tensor head_transform_step_backward(const StepId& x, const OutputWeights& o, const ModelConfig& config,
                                    const GradScope& at, const Tensor& d) {
  at.record(StepKind::HeadTransform, d, {at.kept_gradient(StepKind::HeadTransformNorm, kTransformNormNumber)});
  ProjectionGradients g = head_transform_backward(at.value(x), o.transform_W, o.transform_b, config.activation,
                                                  at.value(StepKind::HeadTransform), d);
  at.weights().add(ParameterId{WeightKind::TransformW}, std::move(g.dW));
  at.weights().add(ParameterId{WeightKind::TransformB}, std::move(g.db));
  return std::move(g.dx);
}

// The gradients waiting for the block that made their entry: dL/d(the entry), summed over
// every block that read it, in the order the replay reaches those blocks.
class PendingGradients {
 public:
  void add(const StepId& id, Tensor d) {
    for (auto& [at, sum] : pending_)
      if (at == id) {
        sum = gradient_sum(sum, d);
        return;
      }
    pending_.emplace_back(id, std::move(d));
  }
  // The whole gradient of `id`, or nullopt when no path from the loss reached it.
  std::optional<Tensor> take(const StepId& id) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->first == id) {
        Tensor d = std::move(it->second);
        pending_.erase(it);
        return d;
      }
    return std::nullopt;
  }

 private:
  std::vector<std::pair<StepId, Tensor>> pending_;
};

// The backward of one block of the tape: `d` is dL/d(its result); records its gradients and
// hands dL/d(what it read) to `pending`. `next` is the block after it in the forward (a
// post-norm residual is read by its add & norm), or nullptr.
void block_backward(const Model& model, const TapeEntry& e, const TapeEntry* next, const GradScope& at, Tensor d,
                    PendingGradients& pending) {
  // the block's configuration: the decoder's own heads when it has them
  const ModelConfig config = model.config.stack_config(e.result.stack == Stack::Decoder);
  const int n = e.result.number;
  switch (e.op) {
    case TapeOp::Input:
      // X = E[ids] (· √N) + PE: the embeddings learn, when the input was tokens
      at.record(StepKind::Input, d);
      if (e.from_tokens) embed_sequence_backward(model, at, d);
      return;
    case TapeOp::LayerOutput:
      at.record(StepKind::LayerOutput, d);
      pending.add(e.x, std::move(d));
      return;
    case TapeOp::Residual: {
      // x + f: the gradient reaches x and f unchanged (after a post-norm's add & norm)
      const bool post_norm = next && next->op == TapeOp::Norm && next->x == e.result;
      at.record(StepKind::Residual, residual_add_backward(d),
                post_norm ? std::vector<Operand>{at.kept_gradient(next->result.kind, n)} : std::vector<Operand>{}, n);
      pending.add(e.x, d);
      pending.add(e.x2, std::move(d));
      return;
    }
    case TapeOp::Norm:
      pending.add(e.x, layer_norm_step_backward(e.x, *e.norm, e.result.kind, n, config, at, d));
      return;
    case TapeOp::FeedForward:
      pending.add(e.x, feed_forward_backward(e.x, *e.ffn, config, at, d));
      return;
    case TapeOp::Attention: {
      AttentionInputGradients g =
          multi_head_attention_backward(e.x, e.x2, *e.attention, e.mask ? &*e.mask : nullptr, config, at, d);
      if (e.x == e.x2) return pending.add(e.x, gradient_sum(g.dx_q, g.dx_kv));
      pending.add(e.x, std::move(g.dx_q));  // cross-attention: the memory's share from every layer
      pending.add(e.x2, std::move(g.dx_kv));
      return;
    }
    case TapeOp::HeadTransform:
      pending.add(e.x, head_transform_step_backward(e.x, *e.output, config, at, d));
      return;
    case TapeOp::Head:  // the loss's, read first (run_backward)
      return;
  }
}

}  // namespace

double run_backward(const Model& model, const RunInput& input, Trace& trace) {
  check_loss_defined(model, input);
  require(!trace.entries().empty(), "run_backward: the forward trace is empty (keep its entries)");
  const std::vector<TapeEntry>& tape = trace.tape();
  require(!tape.empty(), "run_backward: the forward run left no tape");
  WeightGradients weights(model);
  // The scope of an entry's place, for the block that made it.
  const auto scope_of = [&](const StepId& id) {
    return GradScope(trace, weights, id.sequence, &input.ablation).layer(id.stack, id.layer).block(id.block);
  };

  // 1. the loss and dL/d(what the output head read), or of the final output without a head
  PendingGradients pending;
  double loss = 0;
  std::size_t last = tape.size();
  if (tape.back().op == TapeOp::Head) {
    const TapeEntry& head = tape.back();
    pending.add(head.x, output_head_backward(model, input.labels, head.x, scope_of(head.result), &loss));
    --last;
  } else {
    // L = sum(output ⊙ output_grad): dL/doutput = output_grad
    const StepId final_output = trace.entries().back().id;  // what run_model returned
    loss = record_loss(trace, output_grad_loss(scope_of(final_output).value(final_output), input.output_grad));
    pending.add(final_output, input.output_grad);
  }

  // 2. every block, the last first, each by its own backward
  for (std::size_t i = last; i-- > 0;) {
    std::optional<Tensor> d = pending.take(tape[i].result);
    if (!d) continue;
    block_backward(model, tape[i], i + 1 < tape.size() ? &tape[i + 1] : nullptr, scope_of(tape[i].result),
                   std::move(*d), pending);
  }

  // 3. every weight's gradient
  weights.record(trace);
  return loss;
}

}  // namespace attn

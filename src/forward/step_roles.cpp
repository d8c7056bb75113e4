// The roles of the step kinds (attn/step_roles.h): the one place outside a kind's forward,
// backward and printers that says which kind plays which part.
#include "attn/step_roles.h"

#include "attn/model.h"

namespace attn {

bool is_output_logits(StepKind kind) { return kind == StepKind::Logits; }

bool is_output_probabilities(StepKind kind) { return kind == StepKind::Probabilities; }

bool is_model_output(StepKind kind) { return is_output_logits(kind) || is_output_probabilities(kind); }

bool in_output_head(StepKind kind) {
  return is_model_output(kind) || kind == StepKind::HeadTransform || kind == StepKind::HeadTransformNorm;
}

bool is_final_norm(StepKind kind) { return kind == StepKind::FinalNorm; }

bool is_token_ids(StepKind kind) { return kind == StepKind::TokenIds; }

bool is_attention_pattern(StepKind kind) { return kind == StepKind::AttentionWeights; }

bool is_heads_context(StepKind kind) { return kind == StepKind::Context; }

bool is_embedding_or_head_norm(StepKind kind) {
  return kind == StepKind::EmbeddingNorm || kind == StepKind::HeadTransformNorm;
}

bool is_attention_output(StepKind kind) { return kind == StepKind::OutputProjection; }

bool is_layer_output(StepKind kind) { return kind == StepKind::LayerOutput; }

bool is_block_result(StepKind kind) {
  return is_layer_output(kind) || is_attention_output(kind) || kind == StepKind::FfnOutput ||
         kind == StepKind::MergedHeads;
}

bool may_hold_masked_infinity(StepKind kind) {
  return kind == StepKind::Mask || kind == StepKind::WindowMask || kind == StepKind::MaskedScores;
}

bool is_projection(StepKind kind) {
  return kind == StepKind::Query || kind == StepKind::Key || kind == StepKind::Value;
}

const char* projection_letter(StepKind kind) {
  if (kind == StepKind::Query || kind == StepKind::QueryHeads) return "q";
  if (kind == StepKind::Key || kind == StepKind::KeyHeads) return "k";
  return "v";
}

bool in_logit_lens(StepKind kind) { return step_kind_row(kind).place == EntryPlace::Lens; }

EntryValues entry_values(StepKind kind) {
  if (kind == StepKind::TokenIds) return EntryValues::Integer;
  if (kind == StepKind::PaddingMask) return EntryValues::Boolean;
  return EntryValues::Real;
}

StepId output_logits_id(Sequence sequence) {
  StepId id;
  id.kind = StepKind::Logits;
  id.sequence = sequence;
  return id;
}

StepId output_probabilities_like(StepId id) {
  id.kind = StepKind::Probabilities;
  return id;
}

StepId heads_context_of(StepId in_block) {
  in_block.kind = StepKind::Context;
  in_block.number = 0;
  return in_block;
}

const NormWeights* norm_weights_of(const Model& model, const StepId& id) {
  if (id.kind == StepKind::FinalNorm) return id.stack == Stack::Decoder ? &model.decoder_norm : &model.encoder_norm;
  if (id.kind == StepKind::EmbeddingNorm && id.stack != Stack::None)  // a stack's own (BART's)
    return id.sequence == Sequence::Target ? &model.decoder_embedding_norm : &model.encoder_embedding_norm;
  if (id.kind == StepKind::EmbeddingNorm) return &model.embedding_norm;
  if (id.kind == StepKind::HeadTransformNorm || id.kind == StepKind::LensTransformNorm)
    return &model.output.transform_norm;
  const auto layer = static_cast<std::size_t>(id.layer);
  if (id.stack == Stack::Encoder && layer < model.encoder.size())
    return id.number == 1 ? &model.encoder[layer].norm1 : &model.encoder[layer].norm2;
  if (id.stack == Stack::Decoder && layer < model.decoder.size())
    return id.number == 1   ? &model.decoder[layer].norm1
           : id.number == 2 ? &model.decoder[layer].norm2
                            : &model.decoder[layer].norm3;
  return nullptr;
}

namespace {

// The kind of the entry that the forward step `kind` of id's block read as its operand i,
// or `otherwise` when that entry is not in the trace.
StepKind operand_kind(const Trace& trace, StepId id, StepKind kind, std::size_t i, StepKind otherwise) {
  if (kind != id.kind) id.number = 0;
  id.kind = kind;
  id.gradient = false;
  const TraceEntry* e = trace.find(id);
  return e && i < e->operands.size() && e->operands[i].entry ? e->operands[i].entry->kind : otherwise;
}

}  // namespace

StepKind attending_queries(const Trace& trace, const StepId& id) {
  return operand_kind(trace, id, StepKind::Scores, 0, StepKind::QueryHeads);
}

StepKind attended_keys(const Trace& trace, const StepId& id) {
  return operand_kind(trace, id, StepKind::TransposedKeys, 0, StepKind::KeyHeads);
}

StepKind attended_values(const Trace& trace, const StepId& id) {
  return operand_kind(trace, id, StepKind::Context, 1, StepKind::ValueHeads);
}

bool masks_scores(const Trace& trace, const StepId& of) {
  StepId id = of;
  if (id.kind != StepKind::MaskedScores) id.number = 0;
  id.kind = StepKind::MaskedScores;
  id.gradient = false;
  return trace.find(id) != nullptr;
}

}  // namespace attn

// attn heads' report (docs/heads.md), as the session measured it (session/head_scores_run.h):
// the sequence, one table per block of each head's strongest role (layers by heads), and with
// --ablate each position's next token without and with the ablation; or all of it as JSON.
#ifndef ATTN_PRESENT_PRINT_HEADS_H_
#define ATTN_PRESENT_PRINT_HEADS_H_

#include <ostream>
#include <string>

#include "attn/model.h"
#include "session/head_scores_run.h"

namespace attn {

// The report as text: `source` names the model ("example trained_induction").
void print_heads_report(std::ostream& out, const Model& model, const std::string& source, const HeadsReport& report);
// Every score of every head (and the ablation's changes) as one JSON object on a line.
void print_heads_json(std::ostream& out, const Model& model, const HeadsReport& report);

}  // namespace attn

#endif  // ATTN_PRESENT_PRINT_HEADS_H_

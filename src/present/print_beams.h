// The walkthrough of attn generate --beams after the prompt's run: each step's best
// candidates as a table (which beam, which token, its log-probability, the running score, and
// what became of it: the next beam, a finished hypothesis, skipped, not needed), the beams
// kept, and at the end the hypotheses with their length-penalized scores and the answer.
// --quiet and --json print the answer alone.
#ifndef ATTN_PRESENT_PRINT_BEAMS_H_
#define ATTN_PRESENT_PRINT_BEAMS_H_

#include <ostream>
#include <string>

#include "attn/model.h"
#include "attn/walkthrough.h"
#include "session/beam_search.h"

namespace attn {

// How the search chooses, for the heading: "beam search (3 beams, length penalty 1, early
// stopping false)".
std::string beam_search_text(const BeamRules& rules);

// One step of the search, after the beams of the previous one.
void print_beam_step(std::ostream& out, const BeamStep& step, const BeamSearch& search, const Model& model,
                     const WalkthroughOptions& options);

// The hypotheses kept, best first, each score worked out, and the answer's text.
void print_beam_result(std::ostream& out, const BeamSearch& search, const Model& model,
                       const WalkthroughOptions& options);

// The answer alone: its decoded text (--quiet), or with `json` {"ids": [...], "text": "...",
// "score": s, "hypotheses": [{"ids", "text", "score", "ended"}]}.
void print_beam_result_alone(std::ostream& out, const BeamSearch& search, bool json);

}  // namespace attn

#endif  // ATTN_PRESENT_PRINT_BEAMS_H_

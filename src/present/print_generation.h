// The walkthrough of attn generate after its first token (whose run the ordinary
// walkthrough shows in full): what is new for each token (its row's q, k and v in each
// layer, the KV cache grown by one row, the new query's scores and weights against every
// cached key), and how the next token is chosen (the distribution as a labelled table,
// temperature, top-k and top-p applied, the draw and where it fell). It prints with the
// walkthrough's own pieces: NumPy-style arrays and labelled tables, on the terminal (`out`)
// and, for attn generate --html, on the lesson's page (`page`, drawn through the
// PageRenderer: headers, lines, tensors, tables as tables); either may be null.
#ifndef ATTN_PRESENT_PRINT_GENERATION_H_
#define ATTN_PRESENT_PRINT_GENERATION_H_

#include <ostream>
#include <string>
#include <vector>

#include "attn/generate.h"
#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "present/page_renderer.h"
#include "session/generation.h"

namespace attn {

// The cache after the prompt's run: each layer's K and V shapes.
void print_cache_after_prompt(std::ostream* out, PageRenderer* page, const KvCacheDecoder& decoder, const Model& model,
                              const WalkthroughOptions& options);

// One token after the first: `step` is its KvCacheDecoder::step trace, `tokens` the
// decoder's sequence with the new token last.
void print_generation_step(std::ostream* out, PageRenderer* page, const Trace& step, const KvCacheDecoder& decoder,
                           const Model& model, const std::vector<std::string>& tokens, std::size_t number,
                           const WalkthroughOptions& options);

// The choice of token `number` (1 the first) after the sequence `tokens`: `draws` how many
// random numbers the run had drawn before this one.
void print_choice(std::ostream* out, PageRenderer* page, const SamplingResult& choice, const SamplingOptions& sampling,
                  const Model& model, const std::vector<std::string>& tokens, std::size_t number, std::size_t draws,
                  std::uint32_t seed, const WalkthroughOptions& options);

// What attn generate starts from, before the prompt's walkthrough: the model, the tokens to
// start from, -n, greedy or sampled, where it stops, the ablation (on the terminal), then the
// first token's heading (on both).
// `choice`, when given, says how tokens are chosen instead ("beam search (3 beams, ...)").
// The heading is wrapped to `width` columns like every other line (a long folder's path).
void print_generation_start(std::ostream* out, PageRenderer* page, const Generation& generation, const Model& model,
                            const Ablation& ablation, std::size_t width, const std::string& choice = "");

// Why generation ended before -n: "note: the position table has 8 rows: no room for more".
void print_generation_note(std::ostream* out, PageRenderer* page, const std::string& note);

// What was generated (the text as the walkthrough shows it, a checkpoint's in quotes) and
// the multiply-adds the cache saved.
void print_generated(std::ostream* out, PageRenderer* page, const Generation& generation, const Model& model);
// The generated text alone, as the tokenizer decodes it (--quiet), or with `json` its ids and
// text as {"ids": [...], "text": "..."}: what a script reads.
void print_generated_alone(std::ostream& out, const Generation& generation, bool json);

}  // namespace attn

#endif  // ATTN_PRESENT_PRINT_GENERATION_H_

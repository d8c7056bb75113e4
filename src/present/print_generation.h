// The walkthrough of attn generate after its first token (whose run the ordinary
// walkthrough shows in full): what is new for each token (its row's q, k and v in each
// layer, the KV cache grown by one row, the new query's scores and weights against every
// cached key), and how the next token is chosen (the distribution as a labelled table,
// temperature, top-k and top-p applied, the draw and where it fell). It prints with the
// walkthrough's own pieces: NumPy-style arrays and labelled tables.
#ifndef ATTN_PRESENT_PRINT_GENERATION_H_
#define ATTN_PRESENT_PRINT_GENERATION_H_

#include <ostream>
#include <string>
#include <vector>

#include "attn/generate.h"
#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"

namespace attn {

// The cache after the prompt's run: each layer's K and V shapes.
void print_cache_after_prompt(std::ostream& out, const KvCacheDecoder& decoder, const Model& model,
                              const WalkthroughOptions& options);

// One token after the first: `step` is its KvCacheDecoder::step trace, `tokens` the
// decoder's sequence with the new token last.
void print_generation_step(std::ostream& out, const Trace& step, const KvCacheDecoder& decoder, const Model& model,
                           const std::vector<std::string>& tokens, std::size_t number,
                           const WalkthroughOptions& options);

// The choice of token `number` (1 the first) after the sequence `tokens`: `draws` how many
// random numbers the run had drawn before this one.
void print_choice(std::ostream& out, const SamplingResult& choice, const SamplingOptions& sampling, const Model& model,
                  const std::vector<std::string>& tokens, std::size_t number, std::size_t draws, std::uint32_t seed,
                  const WalkthroughOptions& options);

}  // namespace attn

#endif  // ATTN_PRESENT_PRINT_GENERATION_H_

#include "arch/checkpoint.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "arch/family.h"
#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/locate.h"
#include "model/byte_size.h"
#include "model/hf_weights.h"
#include "model/memory_estimate.h"
#include "model/weight_panels.h"

namespace attn {

namespace {

// Whether the weight matrices stay in the mapped files: options.weights_as_stored, unless
// the run differentiates them (options.backward) or ATTN_WIDEN_WEIGHTS is set to anything
// but "" or "0" (docs/real-models.md: the tests compare every run both ways with it).
bool keeps_weights_stored(const LoadOptions& options) {
  const char* widen = std::getenv("ATTN_WIDEN_WEIGHTS");
  const bool forced = widen && *widen && std::string(widen) != "0";
  return options.weights_as_stored && !options.backward && !forced;
}

// How the estimate counts the weights and how the refusal says so: every number as
// float64; or some kept as stored, their numbers and the bytes they take in the files.
// Before the headers say which dtypes, `at_least` asks only for a quarter of the float64
// estimate: no stored number takes fewer than 2 bytes, and the numbers kept as stored are
// among those the float64 estimate counts at 8 (so a quarter is never more than the count
// the headers will give).
struct WeightBytes {
  std::uint64_t stored_numbers = 0;
  std::uint64_t stored_bytes = 0;
  bool at_least = false;
  std::string words = "as float64";
};

// The model's memory with its weights counted as `weights` says, from config.json:
// InputError at the number of layers when it is past the limit.
void check_memory(const CheckpointConfig& c, const std::string& file, const LoadOptions& options,
                  const WeightBytes& weights) {
  ModelConfig m = c.model;
  m.d_ff = std::max(m.d_ff, c.decoder_d_ff);  // an encoder-decoder's wider stack, for both (an upper bound)
  m.num_heads = std::max(m.num_heads, m.decoder_config().num_heads);  // likewise its heads
  RunSize size;
  // an encoder's layers (BERT's), a decoder-only model's, or an encoder-decoder's both (Marian, BART)
  const bool encoder = m.architecture == Architecture::Encoder;
  size.encoder_layers = encoder ? c.num_layers : c.num_encoder_layers;
  size.decoder_layers = encoder ? 0 : c.num_layers;
  size.target_len = 1;
  size.vocab = c.vocab_size;
  size.position_rows = m.max_len;
  size.trace_kept = options.trace_kept;
  // attn grad's gradients (one per weight, per kept tensor) are counted before a weight is
  // widened, not found too big after 1.4 GiB of widening.
  size.backward = options.backward;
  size.untied_head = !c.tie_word_embeddings;
  size.stored_numbers = weights.stored_numbers;
  size.stored_bytes = weights.stored_bytes;
  std::uint64_t need = estimate_run_bytes(m, size);
  if (weights.at_least) need /= 4;
  const std::uint64_t limit = memory_limit(options);
  if (need <= limit) return;
  throw InputError(
      file, c.layers_field,
      fmt::format("this model's weights alone would need about {} {} (layers={}, d_model={}, d_ff={}, "
                  "vocab={}), more than the limit of {}; use a smaller model or raise --max-memory",
                  byte_size_text(static_cast<double>(need), ByteStyle::Memory), weights.words,
                  c.num_encoder_layers ? fmt::format("{}+{}", c.num_encoder_layers, c.num_layers)
                                       : std::to_string(c.num_layers),
                  m.d_model, m.d_ff, c.vocab_size, byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

}  // namespace

CheckpointModel load_hf_model(const std::string& source, const LoadOptions& options) {
  CheckpointModel result;
  result.folder = locate_model(source, HubEnvironment::from_process());
  // config.json names the architecture, whose file reads the rest of it
  const CheckpointConfig c = read_checkpoint_config(result.folder);
  Model& model = result.model;
  model.source = source;
  model.config = c.model;
  model.program = c.family->forward;
  const bool stored = keeps_weights_stored(options);
  // from config.json alone, before any other file is opened: 10^9 layers or a vocabulary
  // of 2^24 rows are refused here, in no time
  WeightBytes before_headers;
  if (options.backward) before_headers.words = "as float64, with their gradients";
  if (stored) {
    before_headers.at_least = true;
    before_headers.words = "or more (its matrices kept as stored, at least 2 bytes a number)";
  }
  check_memory(c, c.file, options, before_headers);

  // every header, no weight; kept open by the weights when they stay as stored
  const auto opened = std::make_shared<const CheckpointFiles>(result.folder);
  const CheckpointFiles& files = *opened;
  std::vector<WeightRead> plan;
  WeightPlanner planner{plan};
  c.family->map_weights(c, files, model, planner);
  plan_check(plan, files, c.hf_class);  // every tensor found, float, of its shape
  // and every tensor of the files read, or known to the architecture as unused
  check_every_tensor_used(plan, files, c.family->known_tensors(c, files), c.hf_class);
  // the matrices at their dtypes' bytes, as the headers give them, before any is read
  if (stored) {
    const StoredSize kept = stored_size(plan);
    // in panels: a copy of the matrices beside the mapped files (counted twice)
    const std::uint64_t copies = options.weights_in_panels ? 2 : 1;
    check_memory(c, c.file, options,
                 {kept.numbers, copies * kept.bytes, false,
                  fmt::format("with its matrices as stored ({}{})", kept.dtypes,
                              options.weights_in_panels ? ", and in panels" : "")});
  }
  plan_read(plan, result.checkpoint_names, stored ? opened : nullptr);
  if (stored && options.weights_in_panels) put_weights_in_panels(model);

  result.architecture = c.hf_class;
  result.reading_bytes = files.reading_bytes();
  result.vocab_size = c.vocab_size;
  result.max_positions = c.max_positions;
  result.eos_token_ids = c.eos_token_ids;
  result.decoder_start_id = c.decoder_start_id;
  result.never_generated = c.never_generated;
  return result;
}

}  // namespace attn

// The one door models come in by: load_model(source) finds the format, hands the source to
// that format's reader, and checks what was loaded the same way whatever the format. A new
// format is a reader returning a LoadedModel and a case here. A checkpoint is read by the
// file of the architecture its config.json names (arch/checkpoint.h, arch/family.h).
#include <sys/stat.h>

#include <memory>
#include <string>

#include <fmt/format.h>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "attn/load_model.h"
#include "attn/model_file.h"
#include "attn/tokenizer_files.h"
#include "checkpoint/locate.h"
#include "core/memory_budget.h"

namespace attn {

namespace {

bool is_folder(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool is_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// What every loaded model is checked for, whatever its format: the run on the input it came
// with fits in the memory limit (a JSON file's "randn" is refused before it is drawn, by its
// reader; this holds for the description as loaded).
void check_loaded(const LoadedModel& loaded, const LoadOptions& options) {
  const RunInput& input = loaded.input;
  if (input.has_tokens() || !input.X.data.empty()) check_run_memory(loaded.model, input, options);
}

// The embedding's rows as the tokenizer names them: its pieces, then "<row N>" for the
// rows no token has (Qwen pads 151669 tokens to 151936 rows): scored, never decoded.
Vocabulary row_names(const Tokenizer& tokenizer, std::size_t rows, const std::string& config) {
  if (tokenizer.size() > rows)
    throw InputError(config, "vocab_size",
                     fmt::format("expected at least the tokenizer's {} tokens (one embedding row each), found {}",
                                 tokenizer.size(), rows));
  std::vector<std::string> names;
  names.reserve(rows);
  for (std::size_t id = 0; id < tokenizer.size(); ++id) names.push_back(tokenizer.piece(id));
  for (std::size_t id = tokenizer.size(); id < rows; ++id) {
    names.push_back(fmt::format("<row {}>", id));
    if (tokenizer.find(names.back()))
      throw InputError(
          config, "vocab_size",
          fmt::format("the tokenizer has a piece spelled \"{}\", the name of row {} no token has", names.back(), id));
  }
  return Vocabulary(std::move(names));
}

}  // namespace

LoadedModel load_checkpoint(const std::string& source, const LoadOptions& options) {
  // The side files' JSON (tokenizer.json, config.json, the index, each header) is counted
  // against the limit before it is parsed, each file once.
  set_memory_limit(options.max_memory_bytes);
  // The tokenizer first: its files are small, and a folder without them is refused before
  // any weight is read.
  const std::string folder = locate_model(source, HubEnvironment::from_process());
  std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer(folder);
  CheckpointModel checkpoint = load_hf_model(folder, options);
  LoadedModel loaded;
  Model& model = loaded.model;
  model = std::move(checkpoint.model);
  model.source = source;
  model.vocab = row_names(*tokenizer, checkpoint.vocab_size, folder + "/config.json");
  model.tokenizer = std::move(tokenizer);
  CheckpointSource& origin = model.checkpoint;
  origin.folder = folder;
  origin.architecture = checkpoint.architecture;
  origin.tensor_names = std::move(checkpoint.checkpoint_names);
  origin.eos_token_ids = checkpoint.eos_token_ids;
  origin.decoder_start_id = checkpoint.decoder_start_id;
  origin.never_generated = checkpoint.never_generated;
  origin.max_positions = checkpoint.max_positions;
  origin.reading_bytes = checkpoint.reading_bytes;
  origin.tokenizer_size = model.tokenizer->size();
  return loaded;
}

ModelFormat model_format_of(const std::string& source) {
  // Anything else is read as a model file, which names what it found instead (a folder
  // without config.json: "expected a file, found a directory").
  if (source != "-" && is_folder(source) && is_file(source + "/config.json")) return ModelFormat::HuggingFaceFolder;
  return ModelFormat::ModelFile;
}

LoadedModel load_model(const std::string& source, const LoadOptions& options) {
  LoadedModel loaded;
  switch (model_format_of(source)) {
    case ModelFormat::ModelFile:
      loaded = load_model_file(source, options);
      break;
    case ModelFormat::HuggingFaceFolder:
      loaded = load_checkpoint(source, options);
      break;
  }
  check_loaded(loaded, options);
  return loaded;
}

}  // namespace attn

// The one door models come in by: load_model(source) finds the format, hands the source to
// that format's reader, and checks what was loaded the same way whatever the format. A new
// format is a reader returning a LoadedModel and a case here.
#include <sys/stat.h>

#include <string>

#include "attn/error.h"
#include "attn/model_file.h"

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

}  // namespace

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
      // The reader of Hugging Face checkpoints (config.json, safetensors, the tokenizer's
      // files) plugs in here.
      throw InputError(source + "/config.json", "",
                       "a Hugging Face model folder: not yet supported (attn reads its own JSON model files)");
  }
  check_loaded(loaded, options);
  return loaded;
}

}  // namespace attn

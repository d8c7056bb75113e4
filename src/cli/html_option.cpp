#include "html_option.h"

#include <algorithm>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/same_file.h"
#include "html/html_canvas.h"
#include "io/output_file.h"
#include "present/model_overview.h"
#include "validators.h"

namespace attn::cli {

void add_html_option(CLI::App& command, std::string& path) {
  command
      .add_option("--html", path,
                  "Also write the walkthrough to FILE as one self-contained web page: every step, tensors as tables, "
                  "attention heatmaps per head; written whole or not at all")
      ->check(non_empty("a file name, such as lesson.html"));
}

namespace {

// What the page is titled by: the sentence, else the example or the model file.
std::string lesson_subject(const ModelChoice& choice) {
  if (!choice.text.empty()) return "\"" + choice.text + "\"";
  if (!choice.example.empty()) return "example " + choice.example;
  if (!choice.checkpoint.empty()) return choice.checkpoint;
  return choice.model_file.empty() ? "the built-in model" : choice.model_file;
}

}  // namespace

std::unique_ptr<HtmlLesson> open_html_lesson(const OutputChoice& output, const ModelChoice& choice, const char* command,
                                             const Model& model, const WalkthroughOptions& walkthrough) {
  if (output.html_path.empty()) return nullptr;
  if (!output.dump_path.empty() && same_file(output.html_path, output.dump_path))
    throw InputError("--html", "", "expected another file than --dump's, found the same: " + output.html_path);
  return std::make_unique<HtmlLesson>(output.html_path, std::vector<std::string>{choice.model_file}, model, walkthrough,
                                      LessonInfo{command, lesson_subject(choice)});
}

std::uint64_t check_html_memory(const std::string& html_path, const Model& model, const WalkthroughOptions& walkthrough,
                                const PageSize& page, const LoadOptions& load) {
  if (html_path.empty() || !page.input) return 0;
  RunSize size = run_size_of(model, *page.input);
  const long double n = static_cast<long double>(page.generated);
  if (page.generated > 0) {  // the run the prompt grows to
    if (model.decoder_only())
      size.seq_len = size.target_len = size.seq_len + page.generated;
    else
      size.target_len += page.generated;
  }
  size.trace_kept = true;
  size.backward = page.backward;
  const long double B = size.batch, H = model.config.num_heads, S = size.seq_len, T = size.target_len;
  // One heatmap cell per attention weight (the map and its overview thumbnail): encoder
  // self-attention over S, the decoder's over T and its cross-attention over T x S.
  const long double cells =
      B * H * (size.encoder_layers * S * S + size.decoder_layers * (T * T + (model.decoder_only() ? 0.0L : T * S)));
  // Numbers printed: every one of the trace's with --full or a threshold above it, else at
  // most the threshold per tensor (about 40 tensors a layer).
  const long double trace_numbers = static_cast<long double>(estimate_run_bytes(model.config, size)) / 8;
  const long double tensors = 40.0L * (size.encoder_layers + size.decoder_layers) + 10;
  long double numbers =
      walkthrough.full
          ? trace_numbers
          : std::min(trace_numbers,
                     tensors * static_cast<long double>(std::max<std::size_t>(walkthrough.array.threshold, 64)));
  // attn generate: each new token's section has its query's scores and weights against
  // every key so far, per head and layer (quadratic in -n).
  numbers += 2 * H * size.decoder_layers * n * (T + (model.decoder_only() ? 0.0L : S));
  // Measured (attn explain on the built-in model, 15 to 63 tokens): about 300 bytes per SVG
  // cell and 16 per number, and 4 times the page's bytes in memory while it is built; a map
  // drawn on a canvas (a big model's, a long text's) takes under 3 bytes a cell.
  const long double longest = std::max({S, T, 1.0L});
  const bool canvas =
      drawn_on_canvas(static_cast<std::size_t>(longest), static_cast<std::size_t>(longest), is_big_model(model));
  const long double page_bytes = 512.0L * 1024 + page_bytes_per_cell(canvas) * cells + 16 * numbers;
  const long double need = 4 * page_bytes;
  const std::uint64_t limit = load.max_memory_bytes ? load.max_memory_bytes : default_memory_limit();
  if (need <= static_cast<long double>(limit)) return static_cast<std::uint64_t>(need) + OutputFile::kBufferHeapBytes;
  throw InputError("--html", "",
                   fmt::format("the page would need about {:.1f} GiB while it is built (about {:.0f} heatmap cells "
                               "and {:.0f} numbers), more than the limit of {:.1f} GiB; draw less (a shorter text, "
                               "--steps, --layer, fewer new tokens) or raise --max-memory",
                               static_cast<double>(need / 1073741824.0L), static_cast<double>(cells),
                               static_cast<double>(numbers), static_cast<double>(limit) / 1073741824.0));
}

std::unique_ptr<StreamingWalkthrough> start_walkthrough(std::ostream& out, Trace& trace, const Model& model,
                                                        const RunInput& input, const WalkthroughOptions& walkthrough,
                                                        bool quiet, bool forget, HtmlLesson* lesson) {
  std::unique_ptr<StreamingWalkthrough> printer;
  if (!quiet)
    printer = std::make_unique<StreamingWalkthrough>(out, trace, model, input, walkthrough, forget);
  else if (lesson)
    printer = std::make_unique<StreamingWalkthrough>(trace, model, input, walkthrough, forget);
  if (lesson) lesson->attach(*printer);
  return printer;
}

void draw_lesson(HtmlLesson& lesson, Trace& trace, const Model& model, const RunInput& input,
                 const WalkthroughOptions& walkthrough) {
  StreamingWalkthrough pages(trace, model, input, walkthrough, /*forget=*/false);
  lesson.attach(pages);
  for (const auto& entry : trace.entries()) pages.add(entry);
  pages.finish();
}

}  // namespace attn::cli

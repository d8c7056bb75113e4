// `attn patch`: activation patching (docs/experiments.md). The corrupted text run again with
// one activation at a time replaced by the clean text's; the normalised effect of each site
// on the metric, as heatmaps, JSON or a web page.
#ifndef ATTN_CLI_PATCH_COMMAND_H_
#define ATTN_CLI_PATCH_COMMAND_H_

#include <string>

#include <CLI/CLI.hpp>

#include "experiment_options.h"

namespace attn::cli {

struct PatchOptions {
  ExperimentOptions run;   // the model, the answer and the wrong token
  std::string corrupt;     // --corrupt TEXT
  std::string sites;       // --sites resid_pre,head (default: every kind)
  std::string positions;   // --positions A-B
  std::string site;        // --site KIND,LAYER,INDEX: that site's arithmetic in full
  std::string html_path;   // --html FILE
  bool no_resume = false;  // --no-resume: every patched run from the embeddings (bench/patch)
};

void setup_patch(CLI::App& app, PatchOptions& options);
int run_patch(const PatchOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_PATCH_COMMAND_H_

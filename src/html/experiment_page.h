// attn patch --html: the patching experiment as one self-contained web page, the same numbers
// the terminal shows: the metric of both runs, a coloured table per site kind of the
// normalised effect (each cell's exact value in its tooltip), the strongest sites, and one
// site's arithmetic with --site.
#ifndef ATTN_HTML_EXPERIMENT_PAGE_H_
#define ATTN_HTML_EXPERIMENT_PAGE_H_

#include <string>

#include "attn/experiments.h"
#include "attn/model.h"

namespace attn {

std::string patch_page(const Model& model, const PatchResult& result, const std::string& title);

}  // namespace attn

#endif  // ATTN_HTML_EXPERIMENT_PAGE_H_

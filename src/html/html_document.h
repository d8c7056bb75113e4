// The HTML lesson's document around its steps: one self-contained file, its style and its
// small script inline (no network, no external scripts or fonts). Everything but the hover
// readout works with JavaScript off.
#ifndef ATTN_HTML_HTML_DOCUMENT_H_
#define ATTN_HTML_HTML_DOCUMENT_H_

#include <cstddef>
#include <string>

namespace attn {

struct LessonParts {
  std::string title;      // of the browser's tab
  std::string header;     // <header>: what was run
  std::string map;        // <nav>: the stages of the run, linked to their steps; may be empty
  std::string overview;   // every layer's heads, small; may be empty
  std::string body;       // the steps
  std::size_t heads = 0;  // the most heads a heatmap group has (for the selectors' CSS)
};

std::string lesson_document(const LessonParts& parts);

}  // namespace attn

#endif  // ATTN_HTML_HTML_DOCUMENT_H_

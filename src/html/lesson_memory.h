// What the lesson's page (html_lesson.h) takes in memory while it is built, estimated before
// the run from what it will draw: the run's memory plan counts it (RunPlan::lesson_bytes).
#ifndef ATTN_HTML_LESSON_MEMORY_H_
#define ATTN_HTML_LESSON_MEMORY_H_

#include <cstddef>

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/walkthrough.h"

namespace attn {

// What a page is built from: the run's input (its sentences, after a greedy target was
// added), whether the backward's gradients are drawn too, and for attn generate the new
// tokens (-n) whose sections follow the prompt's walkthrough.
struct PageSize {
  const RunInput* input = nullptr;
  bool backward = false;
  std::size_t generated = 0;
};

// The page's heatmap cells and printed numbers, and the bytes it takes while it is built:
// each cell and number about the bytes measured per cell and per number, four times over.
struct PageMemory {
  long double cells = 0, numbers = 0, bytes = 0;
};
PageMemory lesson_page_memory(const Model& model, const WalkthroughOptions& walkthrough, const PageSize& page);

}  // namespace attn

#endif  // ATTN_HTML_LESSON_MEMORY_H_

// Tests look trace entries up by their documented names (docs/trace-names.md): that the
// names are right is part of what they check. The library itself never compares names.
#ifndef ATTN_TESTS_TRACE_LOOKUP_H_
#define ATTN_TESTS_TRACE_LOOKUP_H_

#include <string>

#include "attn/trace.h"

// The kept entry called `name`, or nullptr.
inline const attn::TraceEntry* find_entry(const attn::Trace& trace, const std::string& name) {
  for (const auto& e : trace.entries())
    if (e.name == name) return &e;
  return nullptr;
}

#endif  // ATTN_TESTS_TRACE_LOOKUP_H_

#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizers/pcre_regex.h"

#include <pcre2.h>

#include "attn/error.h"
#include "tokenizers/utf8.h"

namespace attn {

struct PcreRegex::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

PcreRegex::PcreRegex(const std::string& pattern, bool literal, const std::string& file, const std::string& json_path)
    : compiled_(std::make_unique<Compiled>()), file_(file), json_path_(json_path) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  // PCRE2_LITERAL takes no UCP (a literal has no classes to widen).
  const uint32_t options = literal ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error_code,
                                  &error_offset, nullptr);
  if (compiled_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    throw InputError(file, json_path,
                     "expected a regular expression, found one PCRE2 rejects at offset " +
                         std::to_string(error_offset) + ": " + reinterpret_cast<const char*>(message));
  }
  // The JIT makes long texts several times faster; without it (no JIT on this CPU) the
  // interpreter gives the same matches.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

PcreRegex::~PcreRegex() = default;

std::vector<std::pair<std::size_t, std::size_t>> PcreRegex::find_all(const std::string& text) const {
  std::vector<std::pair<std::size_t, std::size_t>> matches;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(compiled_->code, nullptr);
  if (data == nullptr) throw EnvironmentError("attn: out of memory for a regular expression match");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  while (start <= text.size()) {
    // The text was checked to be UTF-8 before: PCRE2_NO_UTF_CHECK spares checking it again
    // at every match (which would make the loop quadratic).
    const int found = pcre2_match(compiled_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (found == PCRE2_ERROR_NOMATCH) break;
    if (found < 0) {
      pcre2_match_data_free(data);
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(found, message, sizeof message);
      // A pattern of no file is ByteLevel's own, GPT-2's (pipeline_json.cpp).
      const std::string which =
          file_.empty() ? "the ByteLevel pre-tokenizer's GPT-2 pattern" : "the regular expression";
      throw InputError(file_, json_path_,
                       which + " failed on the text at byte " + std::to_string(start) + ": " +
                           reinterpret_cast<const char*>(message) + " (PCRE2 error " + std::to_string(found) + ")");
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const std::size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      matches.emplace_back(begin, end);
      start = end;
    } else {
      // An empty match splits nothing: step over one character and look again.
      if (begin >= text.size()) break;
      const std::size_t length = utf8_sequence_length(text, begin);
      start = begin + (length == 0 ? 1 : length);
    }
  }
  pcre2_match_data_free(data);
  return matches;
}

}  // namespace attn

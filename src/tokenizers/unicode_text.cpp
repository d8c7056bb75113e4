// ICU is loaded the first time a tokenizer needs it (dlopen), not linked: linked, its two
// libraries (and the C++ library they pull in) were mapped and relocated at every start,
// a few milliseconds of attn's 12 ms `explain "I love AI"` on this project's machines,
// where most runs never normalize or lowercase Unicode text (docs/performance.md).
#include "tokenizers/unicode_text.h"

#include <dlfcn.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/uvernum.h>

#include <vector>

#include "attn/error.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// ICU's C functions carry its version in their names (u_charType is u_charType_72):
// the header's macros give the name to look up.
#define ATTN_ICU_TEXT(x) #x
#define ATTN_ICU_NAME(x) ATTN_ICU_TEXT(x)
constexpr const char* kIcuLibrary = "libicuuc.so." ATTN_ICU_NAME(U_ICU_VERSION_MAJOR_NUM);

// The ICU functions attn calls, from the library the build was compiled against.
struct Icu {
  decltype(&u_strFromUTF8) strFromUTF8;
  decltype(&u_strToUTF8) strToUTF8;
  decltype(&u_errorName) errorName;
  decltype(&unorm2_getNFCInstance) nfc;
  decltype(&unorm2_getNFDInstance) nfd;
  decltype(&unorm2_getNFKCInstance) nfkc;
  decltype(&unorm2_getNFKDInstance) nfkd;
  decltype(&unorm2_normalize) normalize;
  decltype(&u_strToLower) strToLower;
  decltype(&u_hasBinaryProperty) hasBinaryProperty;
  decltype(&u_charType) charType;
  decltype(&ubrk_open) breakOpen;
  decltype(&ubrk_next) breakNext;
  decltype(&ubrk_close) breakClose;
};

template <class Function>
void find(void* library, const char* name, Function& out) {
  void* address = dlsym(library, name);
  if (address == nullptr)
    throw EnvironmentError(std::string("attn: ") + kIcuLibrary + " has no " + name +
                           " (another ICU than attn was built with?)");
  out = reinterpret_cast<Function>(address);
}

Icu load_icu() {
  void* library = dlopen(kIcuLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    throw EnvironmentError(std::string("attn: cannot load ICU, which Unicode normalization and lowercasing need: ") +
                           dlerror() + " (Debian: apt-get install libicu" ATTN_ICU_NAME(U_ICU_VERSION_MAJOR_NUM) ")");
  Icu icu{};
#define ATTN_ICU_FIND(field, function) find(library, ATTN_ICU_NAME(function), icu.field)
  ATTN_ICU_FIND(strFromUTF8, u_strFromUTF8);
  ATTN_ICU_FIND(strToUTF8, u_strToUTF8);
  ATTN_ICU_FIND(errorName, u_errorName);
  ATTN_ICU_FIND(nfc, unorm2_getNFCInstance);
  ATTN_ICU_FIND(nfd, unorm2_getNFDInstance);
  ATTN_ICU_FIND(nfkc, unorm2_getNFKCInstance);
  ATTN_ICU_FIND(nfkd, unorm2_getNFKDInstance);
  ATTN_ICU_FIND(normalize, unorm2_normalize);
  ATTN_ICU_FIND(strToLower, u_strToLower);
  ATTN_ICU_FIND(hasBinaryProperty, u_hasBinaryProperty);
  ATTN_ICU_FIND(charType, u_charType);
  ATTN_ICU_FIND(breakOpen, ubrk_open);
  ATTN_ICU_FIND(breakNext, ubrk_next);
  ATTN_ICU_FIND(breakClose, ubrk_close);
#undef ATTN_ICU_FIND
  return icu;  // the library stays loaded for the rest of the process
}

// Loaded once, on first use (thread-safe: a function-local static).
const Icu& icu() {
  static const Icu loaded = load_icu();
  return loaded;
}

std::vector<UChar> to_utf16(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  icu().strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  icu().strFromUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU: UTF-8 to UTF-16 failed: ") + icu().errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

std::string to_utf8(const std::vector<UChar>& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  icu().strToUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  std::string out(static_cast<std::size_t>(length) + 1, '\0');
  status = U_ZERO_ERROR;
  icu().strToUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU: UTF-16 to UTF-8 failed: ") + icu().errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

const UNormalizer2* normalizer_for(UnicodeForm form, UErrorCode& status) {
  switch (form) {
    case UnicodeForm::Nfc:
      return icu().nfc(&status);
    case UnicodeForm::Nfd:
      return icu().nfd(&status);
    case UnicodeForm::Nfkc:
      return icu().nfkc(&status);
    case UnicodeForm::Nfkd:
      return icu().nfkd(&status);
  }
  return nullptr;
}

}  // namespace

std::string unicode_normalize(const std::string& text, UnicodeForm form) {
  if (text.empty()) return text;
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = normalizer_for(form, status);
  if (U_FAILURE(status)) throw EnvironmentError(std::string("attn: ICU has no normalizer: ") + icu().errorName(status));
  const std::vector<UChar> source = to_utf16(text);
  // Normalization grows a text by at most a factor of 18 (NFKD of U+FDFA); ask ICU for the size.
  int32_t length = icu().normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), nullptr, 0, &status);
  if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status))
    throw InternalError(std::string("ICU normalize: ") + icu().errorName(status));
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  length =
      icu().normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), out.data(), length + 1, &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU normalize: ") + icu().errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return to_utf8(out);
}

std::string unicode_lowercase(const std::string& text) {
  if (text.empty()) return text;
  const std::vector<UChar> source = to_utf16(text);
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = icu().strToLower(nullptr, 0, source.data(), static_cast<int32_t>(source.size()), "", &status);
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  length = icu().strToLower(out.data(), length + 1, source.data(), static_cast<int32_t>(source.size()), "", &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU lowercase: ") + icu().errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return to_utf8(out);
}

bool is_unicode_alphanumeric(char32_t c) {
  const auto code_point = static_cast<UChar32>(c);
  if (icu().hasBinaryProperty(code_point, UCHAR_ALPHABETIC)) return true;
  const int8_t type = icu().charType(code_point);
  return type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER || type == U_OTHER_NUMBER;
}

bool is_unicode_other(char32_t c) {
  const int8_t type = icu().charType(static_cast<UChar32>(c));
  return type == U_CONTROL_CHAR || type == U_FORMAT_CHAR || type == U_UNASSIGNED || type == U_PRIVATE_USE_CHAR ||
         type == U_SURROGATE;
}

bool is_unicode_nonspacing_mark(char32_t c) { return icu().charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK; }

bool is_unicode_punctuation(char32_t c) {
  switch (icu().charType(static_cast<UChar32>(c))) {
    case U_CONNECTOR_PUNCTUATION:
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

std::string unicode_lowercase_each(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    if (byte < 0x80) {  // ASCII: no need to ask ICU
      out += static_cast<char>(byte >= 'A' && byte <= 'Z' ? byte + ('a' - 'A') : byte);
      ++pos;
      continue;
    }
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) throw InternalError("unicode_lowercase_each: text that is not UTF-8");
    out += unicode_lowercase(text.substr(pos, length));
    pos += length;
  }
  return out;
}

std::vector<std::size_t> grapheme_ends(const std::string& text) {
  std::vector<std::size_t> ends;
  if (text.empty()) return ends;
  // UTF-16 for ICU, and where each UTF-16 unit's character starts in the UTF-8 text.
  std::vector<UChar> units;
  std::vector<std::size_t> utf8_offset;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) throw InternalError("grapheme_ends: text that is not UTF-8");
    const char32_t c = utf8_code_point(text, pos);
    if (c >= 0x10000) {
      units.push_back(static_cast<UChar>(0xD800 + ((c - 0x10000) >> 10)));
      utf8_offset.push_back(pos);
      units.push_back(static_cast<UChar>(0xDC00 + ((c - 0x10000) & 0x3FF)));
    } else {
      units.push_back(static_cast<UChar>(c));
    }
    utf8_offset.push_back(pos);
    pos += length;
  }
  utf8_offset.push_back(text.size());
  UErrorCode status = U_ZERO_ERROR;
  UBreakIterator* breaks =
      icu().breakOpen(UBRK_CHARACTER, "", units.data(), static_cast<int32_t>(units.size()), &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU ubrk_open: ") + icu().errorName(status));
  for (int32_t end = icu().breakNext(breaks); end != UBRK_DONE; end = icu().breakNext(breaks))
    ends.push_back(utf8_offset[static_cast<std::size_t>(end)]);
  icu().breakClose(breaks);
  return ends;
}

}  // namespace attn

#include "tokenizers/unicode_text.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

#include "attn/error.h"

namespace attn {

namespace {

std::vector<UChar> to_utf16(const std::string& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU: UTF-8 to UTF-16 failed: ") + u_errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

std::string to_utf8(const std::vector<UChar>& text) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strToUTF8(nullptr, 0, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  std::string out(static_cast<std::size_t>(length) + 1, '\0');
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), length + 1, &length, text.data(), static_cast<int32_t>(text.size()), &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU: UTF-16 to UTF-8 failed: ") + u_errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return out;
}

const UNormalizer2* normalizer_for(UnicodeForm form, UErrorCode& status) {
  switch (form) {
    case UnicodeForm::Nfc:
      return unorm2_getNFCInstance(&status);
    case UnicodeForm::Nfd:
      return unorm2_getNFDInstance(&status);
    case UnicodeForm::Nfkc:
      return unorm2_getNFKCInstance(&status);
    case UnicodeForm::Nfkd:
      return unorm2_getNFKDInstance(&status);
  }
  return nullptr;
}

}  // namespace

std::string unicode_normalize(const std::string& text, UnicodeForm form) {
  if (text.empty()) return text;
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = normalizer_for(form, status);
  if (U_FAILURE(status)) throw EnvironmentError(std::string("attn: ICU has no normalizer: ") + u_errorName(status));
  const std::vector<UChar> source = to_utf16(text);
  // Normalization grows a text by at most a factor of 18 (NFKD of U+FDFA); ask ICU for the size.
  int32_t length =
      unorm2_normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), nullptr, 0, &status);
  if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status))
    throw InternalError(std::string("ICU normalize: ") + u_errorName(status));
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  length =
      unorm2_normalize(normalizer, source.data(), static_cast<int32_t>(source.size()), out.data(), length + 1, &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU normalize: ") + u_errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return to_utf8(out);
}

std::string unicode_lowercase(const std::string& text) {
  if (text.empty()) return text;
  const std::vector<UChar> source = to_utf16(text);
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = u_strToLower(nullptr, 0, source.data(), static_cast<int32_t>(source.size()), "", &status);
  std::vector<UChar> out(static_cast<std::size_t>(length) + 1);
  status = U_ZERO_ERROR;
  length = u_strToLower(out.data(), length + 1, source.data(), static_cast<int32_t>(source.size()), "", &status);
  if (U_FAILURE(status)) throw InternalError(std::string("ICU lowercase: ") + u_errorName(status));
  out.resize(static_cast<std::size_t>(length));
  return to_utf8(out);
}

bool is_unicode_alphanumeric(char32_t c) {
  const auto code_point = static_cast<UChar32>(c);
  if (u_hasBinaryProperty(code_point, UCHAR_ALPHABETIC)) return true;
  const int8_t type = u_charType(code_point);
  return type == U_DECIMAL_DIGIT_NUMBER || type == U_LETTER_NUMBER || type == U_OTHER_NUMBER;
}

}  // namespace attn

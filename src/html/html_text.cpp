#include "html/html_text.h"

#include <fmt/format.h>

namespace attn {

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string element(const char* tag, const char* css_class, std::string_view text) {
  return fmt::format("<{0} class=\"{1}\">{2}</{0}>\n", tag, css_class, escaped(text));
}

std::string formula_html(std::string_view formula) {
  const std::size_t comment = formula.find("   (");
  if (comment == std::string_view::npos || formula.back() != ')') return escaped(formula);
  return escaped(formula.substr(0, comment)) + " <span class=\"comment\">" + escaped(formula.substr(comment + 3)) +
         "</span>";
}

std::string preformatted(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return escaped(text);
}

}  // namespace attn

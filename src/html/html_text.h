// Text into HTML: escaping, and the small pieces every part of the lesson writes.
#ifndef ATTN_HTML_HTML_TEXT_H_
#define ATTN_HTML_HTML_TEXT_H_

#include <string>
#include <string_view>

namespace attn {

// `text` with &, <, > and both quotes escaped: safe in an element and in an attribute value.
std::string escaped(std::string_view text);

// <tag class="css_class">escaped text</tag>
std::string element(const char* tag, const char* css_class, std::string_view text);

// A formula, its comment ("   (...)" at the end) set apart in a span.
std::string formula_html(std::string_view formula);

// Text a renderer wraps in <pre>: its trailing newlines removed, escaped.
std::string preformatted(std::string_view text);

}  // namespace attn

#endif  // ATTN_HTML_HTML_TEXT_H_

// The reference ids of tests/reference/tokenizers/<name>.json (make_tokenizer_references.sh:
// gpt-3-encoder and transformers.js's tokenizers, from the npm registry) compared with what
// attn's tokenizer makes of every text: every id of every text, and decode's text.
#ifndef ATTN_TESTS_TOKENIZERS_REFERENCE_IDS_H_
#define ATTN_TESTS_TOKENIZERS_REFERENCE_IDS_H_

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/tokenizer.h"

namespace attn_test {

struct ReferenceComparison {
  std::size_t texts = 0;
  std::size_t id_mismatches = 0;      // texts whose ids differ anywhere
  std::size_t decode_mismatches = 0;  // texts whose decode differs
  std::string first_failure;
};

inline nlohmann::json read_reference(const std::string& name) {
  const std::string path = std::string(ATTN_SOURCE_DIR) + "/tests/reference/tokenizers/" + name + ".json";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

inline std::string show_ids(const std::vector<std::size_t>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

inline ReferenceComparison compare_with_reference(const attn::Tokenizer& tokenizer, const nlohmann::json& reference) {
  ReferenceComparison result;
  for (const auto& item : reference.at("cases")) {
    const std::string text = item.at("text").get<std::string>();
    const auto expected = item.at("ids").get<std::vector<std::size_t>>();
    const std::string expected_text = item.at("decoded").get<std::string>();
    ++result.texts;
    const attn::Encoding encoding = tokenizer.encode(text, reference.at("add_special_tokens").get<bool>());
    if (encoding.ids != expected) {
      ++result.id_mismatches;
      if (result.first_failure.empty())
        result.first_failure =
            attn::printable(text) + ": ids " + show_ids(encoding.ids) + ", expected " + show_ids(expected);
    }
    const std::string decoded = tokenizer.decode(expected, true);
    if (decoded != expected_text) {
      ++result.decode_mismatches;
      if (result.first_failure.empty())
        result.first_failure = attn::printable(text) + ": decoded \"" + attn::printable(decoded) + "\", expected \"" +
                               attn::printable(expected_text) + "\"";
    }
  }
  return result;
}

// Every text of the corpus (at least 200), no id and no decoded text different.
inline void check_against_reference(const attn::Tokenizer& tokenizer, const std::string& name) {
  const nlohmann::json reference = read_reference(name);
  const ReferenceComparison result = compare_with_reference(tokenizer, reference);
  INFO(name << ": " << result.texts << " texts; first difference: " << result.first_failure);
  CHECK(result.texts >= 200);
  CHECK(result.id_mismatches == 0);
  CHECK(result.decode_mismatches == 0);
}

}  // namespace attn_test

#endif  // ATTN_TESTS_TOKENIZERS_REFERENCE_IDS_H_

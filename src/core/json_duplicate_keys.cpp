#include "core/json_duplicate_keys.h"

#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"

namespace attn {

namespace {

// A pass of nlohmann's SAX parser before the real one: each object's keys, to refuse one
// named twice (the document parser would keep the last value silently), and the JSON path
// of where the parser is, to name it. (The document parser's own callback does the same
// five times slower: 15 s for an object of two million keys.)
class DuplicateKeyCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}

  bool start_object(std::size_t) override { return enter_container(true); }
  bool start_array(std::size_t) override { return enter_container(false); }
  bool end_object() override { return leave_container(); }
  bool end_array() override { return leave_container(); }
  bool key(string_t& key) override {
    Frame& object = frames_.back();
    object.key = key;
    if (!object.keys.insert(key).second)
      throw InputError(file_, path(), fmt::format("duplicate key \"{}\": a JSON object names each key once", key));
    return true;
  }
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  // Syntax errors are the document parser's to report, with its message.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    bool object;
    std::unordered_set<std::string> keys;
    std::string key;    // the member being read
    std::size_t index;  // of an array: the next element's index + 1
  };
  // An array's element begins: count it.
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool enter_container(bool object) {
    value();
    frames_.push_back({object, {}, "", 0});
    return true;
  }
  bool leave_container() {
    frames_.pop_back();
    return true;
  }
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_)
      out = f.object ? (out.empty() ? f.key : out + "." + f.key) : out + "[" + std::to_string(f.index - 1) + "]";
    return out;
  }

  std::string file_;
  std::vector<Frame> frames_;
};

}  // namespace

void refuse_duplicate_keys(const std::string& text, const std::string& file) {
  DuplicateKeyCheck check(file);
  nlohmann::json::sax_parse(text, &check);
}

}  // namespace attn

#include "tokenizers/vocabulary_json.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "attn/error.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

constexpr const char* kRoleKeys[] = {"pad_token", "unk_token", "bos_token", "eos_token"};  // SpecialRole order

// A merge's two pieces and the piece they make, as ids; InputError(file, where, ...) when
// the vocabulary lacks one.
// Looks up the merge of `left` and `right` into `merge`: which of its pieces (0 the first, 1
// the second, 2 the result) the vocabulary lacks, or -1 when it has them all.
int missing_merge_piece(const std::string& left, const std::string& right, const BpeVocabulary& vocabulary,
                        Merge& merge) {
  const std::string pieces[] = {left, right, left + right};
  std::size_t* slots[] = {&merge.left, &merge.right, &merge.result};
  for (int i = 0; i < 3; ++i) {
    const auto id = vocabulary.find(pieces[i]);
    if (!id) return i;
    *slots[i] = *id;
  }
  return -1;
}

Merge resolve_merge(const std::string& left, const std::string& right, const BpeVocabulary& vocabulary,
                    const std::string& file, const std::string& where) {
  Merge merge;
  const int i = missing_merge_piece(left, right, vocabulary, merge);
  if (i < 0) return merge;
  const std::string pieces[] = {left, right, left + right};
  throw InputError(file, where,
                   "expected a merge of pieces in the vocabulary, found \"" + left + " " + right + "\", whose " +
                       (i == 0   ? "first piece"
                        : i == 1 ? "second piece"
                                 : "result") +
                       " \"" + pieces[i] + "\" the vocabulary lacks");
}

// "a b" as two pieces; false unless exactly one space separates two non-empty pieces.
bool split_merge(const std::string& line, std::string& left, std::string& right) {
  const std::size_t space = line.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 >= line.size()) return false;
  if (line.find(' ', space + 1) != std::string::npos) return false;
  left = line.substr(0, space);
  right = line.substr(space + 1);
  return true;
}

// A token in tokenizer_config.json: "<s>", or {"content": "<s>", ...} (an AddedToken).
std::optional<std::string> config_token(const JsonField& config, const char* key) {
  if (!config.has(key)) return std::nullopt;
  const JsonField field = config[key];
  if (field.value.is_object()) return field["content"].string();
  return field.string();
}

// vocab.json as GPT-2's is: one object of pieces and ids, nothing else. Any other value,
// and a syntax error, stop the reading (the document then names what is wrong).
class PlainVocabulary : public nlohmann::json_sax<Json> {
 public:
  std::vector<std::pair<std::string, std::uint64_t>> entries;

  bool start_object(std::size_t) override { return depth_++ == 0; }
  bool end_object() override { return --depth_ == 0; }
  bool key(string_t& piece) override {
    piece_ = std::move(piece);
    return true;
  }
  bool number_unsigned(number_unsigned_t id) override {
    entries.emplace_back(std::move(piece_), id);
    return depth_ == 1;
  }
  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t) override { return false; }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool string(string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool start_array(std::size_t) override { return false; }
  bool end_array() override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  int depth_ = 0;
  std::string piece_;
};

// The vocabulary of `text` when it is an object of distinct pieces whose ids are 0..n-1,
// each once: what read_vocabulary makes of its document, without the document (whose tree
// of GPT-2's 50257 members took as long to build and free as everything else the tokenizer
// reads). Anything else, nullopt: the document is read, and read_vocabulary names the fault.
std::optional<BpeVocabulary> plain_vocabulary(const std::string& text) {
  PlainVocabulary reader;
  if (!Json::sax_parse(text, &reader) || reader.entries.empty()) return std::nullopt;
  const std::size_t n = reader.entries.size();
  BpeVocabulary vocabulary;
  vocabulary.pieces.resize(n);
  vocabulary.ids.reserve(n);
  std::vector<bool> spelled(n);
  for (auto& [piece, id] : reader.entries) {
    if (id >= n || spelled[id]) return std::nullopt;
    spelled[id] = true;
    // (a piece given twice: the document keeps its last id, and its count of members is less)
    if (!vocabulary.ids.emplace(piece, static_cast<std::size_t>(id)).second) return std::nullopt;
    vocabulary.pieces[id] = std::move(piece);
  }
  return vocabulary;
}

}  // namespace

BpeVocabulary read_vocabulary(const JsonField& field) {
  const Json& members = field.object();
  if (members.empty()) throw InputError(field.file, field.path, "expected a vocabulary, found an empty object");
  BpeVocabulary vocabulary;
  // Ids index a vector: each must be below the number of entries, so that a hostile id
  // (2^40) cannot ask for more memory than the file's size accounts for.
  const std::uint64_t largest = members.size() - 1;
  vocabulary.pieces.resize(members.size());
  vocabulary.ids.reserve(members.size());
  std::vector<bool> spelled(members.size());
  for (auto it = members.begin(); it != members.end(); ++it) {
    // The entry's path is spelled only for an error: GPT-2's 50257 paths took a quarter of
    // reading vocab.json.
    const auto path = [&] {
      return field.path.empty() ? "\"" + it.key() + "\"" : field.path + ".\"" + it.key() + "\"";
    };
    const Json& value = it.value();
    // (an id as JsonField::count reads it; anything else, count names)
    const std::size_t id = value.is_number_unsigned() && value.get<std::uint64_t>() <= largest
                               ? static_cast<std::size_t>(value.get<std::uint64_t>())
                               : static_cast<std::size_t>(JsonField{value, path(), field.file}.count(largest));
    if (spelled[id]) {
      throw InputError(
          field.file, path(),
          "expected each id once, found id " + std::to_string(id) + " also given to \"" + vocabulary.pieces[id] + "\"");
    }
    spelled[id] = true;
    vocabulary.pieces[id] = it.key();
    vocabulary.ids[it.key()] = id;
  }
  return vocabulary;
}

BpeVocabulary read_vocabulary_file(const std::string& path) {
  const std::string text = read_json_text(path);
  if (auto vocabulary = plain_vocabulary(text)) return std::move(*vocabulary);
  const Json document = parse_json_text(path, text);
  return read_vocabulary(JsonField{document, "", path});
}

std::vector<AddedToken> read_added_tokens(const JsonField& field, BpeVocabulary& vocabulary) {
  std::vector<AddedToken> tokens;
  if (field.is_null()) return tokens;
  const std::size_t count = field.array().size();
  std::vector<AddedToken> appended;
  for (std::size_t i = 0; i < count; ++i) {
    const JsonField entry = field.at(i);
    AddedToken token;
    token.content = entry["content"].string();
    token.id = static_cast<std::size_t>(entry["id"].count(vocabulary.pieces.size() + count - 1));
    token.special = entry.flag("special", false);
    token.single_word = entry.flag("single_word", false);
    token.lstrip = entry.flag("lstrip", false);
    token.rstrip = entry.flag("rstrip", false);
    token.normalized = entry.flag("normalized", !token.special);
    if (token.content.empty()) entry["content"].fail("a non-empty token");
    const auto known = vocabulary.find(token.content);
    if (known && *known != token.id) {
      entry["id"].fail("the vocabulary's id of \"" + token.content + "\", " + std::to_string(*known));
    }
    if (!known) appended.push_back(token);
    tokens.push_back(token);
  }
  // The new tokens take the ids after the vocabulary's, each once, none left out.
  const std::size_t total = vocabulary.pieces.size() + appended.size();
  vocabulary.pieces.resize(total);
  std::vector<bool> spelled(total, false);
  for (std::size_t id = 0; id < total - appended.size(); ++id) spelled[id] = true;
  for (const AddedToken& token : appended) {
    if (token.id >= total || spelled[token.id]) {
      throw InputError(field.file, field.path,
                       "expected the added tokens the vocabulary lacks to take ids " +
                           std::to_string(total - appended.size()) + ".." + std::to_string(total - 1) + ", found \"" +
                           token.content + "\" with id " + std::to_string(token.id));
    }
    spelled[token.id] = true;
    vocabulary.pieces[token.id] = token.content;
    vocabulary.ids[token.content] = token.id;
  }
  return tokens;
}

std::vector<Merge> read_merges(const JsonField& field, const BpeVocabulary& vocabulary) {
  std::vector<Merge> merges;
  const std::size_t count = field.array().size();
  merges.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const JsonField entry = field.at(i);
    std::string left, right;
    if (entry.value.is_array()) {
      if (entry.value.size() != 2) entry.fail("a pair of pieces [\"a\", \"b\"]");
      left = entry.at(0).string();
      right = entry.at(1).string();
    } else if (!split_merge(entry.string(), left, right)) {
      entry.fail("two pieces separated by one space (\"a b\")");
    }
    merges.push_back(resolve_merge(left, right, vocabulary, field.file, entry.path));
  }
  return merges;
}

namespace {

// The merge on line `number` of merges.txt, `path`; InputError naming what is wrong with it.
Merge read_merge_line(const std::string& line, std::size_t number, const std::string& path,
                      const BpeVocabulary& vocabulary) {
  const std::string where = "line " + std::to_string(number);
  std::string left, right;
  if (!split_merge(line, left, right)) {
    std::string shown = line.size() > 60 ? line.substr(0, 60) + "..." : line;
    throw InputError(path, where, "expected two pieces separated by one space (\"a b\"), found \"" + shown + "\"");
  }
  return resolve_merge(left, right, vocabulary, path, where);
}

// Whether `line` is a merge read_merge_line reads without a fault: then `merge` is it.
bool merge_of(const std::string& line, const BpeVocabulary& vocabulary, Merge& merge) {
  std::string left, right;
  return split_merge(line, left, right) && missing_merge_piece(left, right, vocabulary, merge) < 0;
}

}  // namespace

std::vector<Merge> read_merges_txt(const std::string& path, const BpeVocabulary& vocabulary) {
  const std::string text = read_tokenizer_file(path);
  if (const auto bad = first_invalid_utf8(text)) {
    throw InputError(
        path, "", "expected UTF-8 text, found a byte that starts no UTF-8 character at offset " + std::to_string(*bad));
  }
  // GPT-2's 50000 merges take three lookups each: a batch of lines is read on the threads
  // at once, each line alone; the first that fails, in order, is read again to name its
  // fault. (Batches: a file of 256 MiB of empty lines is refused at its first line, as
  // before, without holding them all.)
  constexpr std::size_t kBatch = 8192;
  std::vector<Merge> merges;
  std::vector<std::string> lines;  // the batch's, without their line breaks ("\n", "\r\n")
  std::vector<Merge> read(kBatch);
  std::vector<char> is_merge(kBatch);  // (not a "#version" line)
  std::size_t first_number = 1;        // the batch's first line's number
  for (std::size_t pos = 0; pos < text.size(); first_number += lines.size()) {
    lines.clear();
    while (pos < text.size() && lines.size() < kBatch) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      lines.push_back(text.substr(pos, end - pos));
      if (!lines.back().empty() && lines.back().back() == '\r') lines.back().pop_back();
      pos = end + 1;
    }
    std::size_t first_fault = lines.size();
#pragma omp parallel for schedule(static) reduction(min : first_fault) if (lines.size() >= 1024)
    for (std::size_t i = 0; i < lines.size(); ++i) {
      is_merge[i] = lines[i].rfind("#version", 0) != 0;
      if (is_merge[i] && !merge_of(lines[i], vocabulary, read[i])) first_fault = std::min(first_fault, i);
    }
    if (first_fault < lines.size())  // throws
      read_merge_line(lines[first_fault], first_number + first_fault, path, vocabulary);
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (is_merge[i]) merges.push_back(read[i]);
  }
  return merges;
}

namespace {

// BpeParts and PipelineParts name these members alike.
template <class Parts>
void read_config_into(const std::string& path, Parts& parts, bool declares_specials) {
  const Json document = read_json_file(path);
  const JsonField config{document, "", path};
  config.object();
  for (std::size_t role = 0; role < 4; ++role) {
    const auto content = config_token(config, kRoleKeys[role]);
    if (!content) continue;
    const auto id = parts.vocabulary.find(*content);
    if (!id) config[kRoleKeys[role]].fail("a token of the vocabulary");
    parts.roles[role] = *id;
    if (declares_specials) parts.added_tokens.push_back({*content, *id, true, false, false, false, false});
  }
  if (declares_specials && config.has("additional_special_tokens")) {
    const JsonField extra = config["additional_special_tokens"];
    for (std::size_t i = 0; i < extra.array().size(); ++i) {
      const JsonField item = extra.at(i);
      const std::string content = item.value.is_object() ? item["content"].string() : item.string();
      const auto id = parts.vocabulary.find(content);
      if (!id) item.fail("a token of the vocabulary");
      parts.added_tokens.push_back({content, *id, true, false, false, false, false});
    }
  }
  const auto begin = parts.roles[static_cast<std::size_t>(SpecialRole::Begin)];
  if (declares_specials && config.flag("add_bos_token", false) && begin) parts.prefix_ids = {*begin};
  parts.clean_up_tokenization_spaces = config.flag("clean_up_tokenization_spaces", false);
}

}  // namespace

void read_tokenizer_config(const std::string& path, BpeParts& parts, bool declares_specials) {
  read_config_into(path, parts, declares_specials);
}

void read_tokenizer_config(const std::string& path, PipelineParts& parts) { read_config_into(path, parts, false); }

}  // namespace attn

#include "tokenizers/marian_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sys/stat.h>

#include <array>
#include <fstream>

#include "attn/error.h"
#include "core/read_files.h"
#include "tokenizers/added_vocabulary.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/piece_text.h"
#include "tokenizers/spm_charsmap_check.h"
#include "tokenizers/text_steps.h"
#include "tokenizers/utf8.h"
#include "tokenizers/vocabulary_json.h"

namespace attn {

// A .spm larger than this is refused before it is read: Marian's are under 1 MiB, the
// largest multilingual ones a few MiB, and the parsed model takes a few times the file.
constexpr std::uint64_t kMaxSpmBytes = 64ULL << 20;

// How far libsentencepiece's normalization can grow a text (tokenize's memory estimate,
// text_steps.h): nmt_nfkc's NFKC up to 12 bytes a byte (U+FDFA, counted as text_growth
// counts NFKC), and each space then the 3 bytes of "▁".
constexpr TextGrowth kSentencePieceGrowth{36, 3};

struct MarianShared {
  BpeVocabulary vocabulary;                                  // vocab.json
  std::array<sentencepiece::SentencePieceProcessor, 2> spm;  // by TokenizerSide
  std::vector<AddedToken> specials;                          // matched in the text
  std::vector<bool> special;                                 // by id
  std::array<std::optional<std::size_t>, 4> roles;           // by SpecialRole
  std::size_t unk_id = 0, eos_id = 0;
  bool clean_up_tokenization_spaces = false;
};

namespace {

std::size_t side_index(TokenizerSide side) { return side == TokenizerSide::Target ? 1 : 0; }

// Python's str.strip(): the whitespace of str.isspace (Unicode's, and \x1c..\x1f).
bool python_space(char32_t c) { return (c >= 0x1C && c <= 0x1F) || is_unicode_whitespace(c); }

std::string python_strip(const std::string& text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end) {
    const std::size_t length = utf8_sequence_length(text, begin);
    if (length == 0 || !python_space(utf8_code_point(text, begin))) break;
    begin += length;
  }
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!python_space(utf8_code_point(text, start))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

// The matches of MarianTokenizer's language_code_re, ">>.+<<", as Python's re.sub finds
// them, left to right, none overlapping: ">>", then the last "<<" on the same line at least
// one character further (".+" is greedy and stops at a newline).
std::vector<std::pair<std::size_t, std::size_t>> language_codes(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> codes;
  for (std::size_t begin = text.find(">>"); begin != std::string::npos;) {
    const std::size_t line_end = std::min(text.find('\n', begin + 2), text.size());
    const std::size_t close = line_end >= begin + 5 ? text.rfind("<<", line_end - 2) : std::string::npos;
    if (close == std::string::npos || close < begin + 3) {
      begin = text.find(">>", begin + 1);
      continue;
    }
    codes.push_back({begin, close + 2});
    begin = text.find(">>", close + 2);
  }
  return codes;
}

std::string read_spm_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw InputError(path, "", "expected a SentencePiece model, found no such file");
  if (!S_ISREG(info.st_mode)) throw InputError(path, "", "expected a SentencePiece model, found no regular file");
  if (static_cast<std::uint64_t>(info.st_size) > kMaxSpmBytes)
    throw InputError(
        path, "", "expected a SentencePiece model of at most 64 MiB, found " + std::to_string(info.st_size) + " bytes");
  std::ifstream in(path, std::ios::binary);
  note_read_file(path);  // no output of the run may replace it (core/read_files.h)
  std::string bytes(static_cast<std::size_t>(info.st_size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw InputError(path, "", "expected a readable SentencePiece model, found one that cannot be read whole");
  return bytes;
}

void load_spm(const std::string& path, sentencepiece::SentencePieceProcessor& processor) {
  const std::string bytes = read_spm_file(path);
  const auto status = processor.LoadFromSerializedProto(bytes);
  if (status.ok()) {
    if (const auto problem = unsafe_spm_charsmap(bytes))
      throw InputError(
          path, "", "expected a SentencePiece model whose normalization table stays inside itself, found " + *problem);
    return;
  }
  // The library's messages name its own source line ("./src/x.cc(232) [check] detail").
  std::string why = status.message();
  if (why.find("ParseFromArray") != std::string::npos) {
    why = "bytes that do not parse as its protobuf";
  } else {
    if (const std::size_t bracket = why.rfind("] "); bracket != std::string::npos) why = why.substr(bracket + 2);
    why = "a model it refuses (" + python_strip(why) + ")";
  }
  throw InputError(path, "", "expected a SentencePiece model (the protobuf libsentencepiece reads), found " + why);
}

std::string config_token(const JsonField& config, const char* key, const std::string& fallback) {
  if (!config.has(key)) return fallback;
  const JsonField field = config[key];
  return field.value.is_object() ? field["content"].string() : field.string();
}

// tokenizer_config.json's unk, eos and pad tokens (MarianTokenizer's defaults otherwise) and
// additional_special_tokens, each a piece of vocab.json.
void read_marian_config(const std::string& path, const std::string& vocab_json, MarianShared& shared) {
  Json document = Json::object();
  if (!path.empty()) document = read_json_file(path);
  const JsonField config{document, "", path};
  config.object();
  if (config.flag("separate_vocabs", false))
    config["separate_vocabs"].fail("false (attn reads one vocab.json for both sides, not target_vocab.json)");
  shared.clean_up_tokenization_spaces = config.flag("clean_up_tokenization_spaces", false);
  const char* const keys[] = {"unk_token", "eos_token", "pad_token"};
  const char* const defaults[] = {"<unk>", "</s>", "<pad>"};
  const SpecialRole roles[] = {SpecialRole::Unknown, SpecialRole::End, SpecialRole::Pad};
  std::vector<std::string> tokens;
  for (int i = 0; i < 3; ++i) tokens.push_back(config_token(config, keys[i], defaults[i]));
  if (config.has("additional_special_tokens")) {
    const JsonField extra = config["additional_special_tokens"];
    for (std::size_t i = 0; i < extra.array().size(); ++i)
      tokens.push_back(extra.at(i).value.is_object() ? extra.at(i)["content"].string() : extra.at(i).string());
  }
  shared.special.assign(shared.vocabulary.pieces.size(), false);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto id = shared.vocabulary.find(tokens[i]);
    if (!id)
      throw InputError(vocab_json, "",
                       "expected the special token \"" + tokens[i] + "\" (" + (i < 3 ? keys[i] : "additional") +
                           ") among the pieces, found no such piece");
    if (i < 3) shared.roles[static_cast<std::size_t>(roles[i])] = *id;
    shared.special[*id] = true;
    shared.specials.push_back({tokens[i], *id, true, false, false, false, false});
  }
  shared.unk_id = *shared.roles[static_cast<std::size_t>(SpecialRole::Unknown)];
  shared.eos_id = *shared.roles[static_cast<std::size_t>(SpecialRole::End)];
}

}  // namespace

MarianTokenizer::MarianTokenizer(std::shared_ptr<const MarianShared> shared, TokenizerSide side)
    : shared_(std::move(shared)), side_(side) {}

MarianTokenizer::~MarianTokenizer() = default;

std::string MarianTokenizer::kind() const {
  return side_ == TokenizerSide::Target ? "SentencePiece target.spm" : "SentencePiece source.spm";
}

std::size_t MarianTokenizer::size() const { return shared_->vocabulary.pieces.size(); }

const std::string& MarianTokenizer::piece(std::size_t id) const {
  if (id >= size()) throw InternalError("MarianTokenizer::piece: id " + std::to_string(id) + " past the vocabulary");
  return shared_->vocabulary.pieces[id];
}

std::string MarianTokenizer::display_piece(std::size_t id) const {
  return is_special(id) ? piece(id) : display_metaspace_piece(piece(id));
}

std::optional<std::size_t> MarianTokenizer::find(const std::string& piece) const {
  return shared_->vocabulary.find(piece);
}

std::optional<std::size_t> MarianTokenizer::special_id(SpecialRole role) const {
  return shared_->roles[static_cast<std::size_t>(role)];
}

bool MarianTokenizer::is_special(std::size_t id) const { return id < size() && shared_->special[id]; }

void MarianTokenizer::encode_part(const std::string& text, Encoding& encoding) const {
  const auto push = [&](std::size_t id) {
    encoding.ids.push_back(id);
    encoding.pieces.push_back(shared_->vocabulary.pieces[id]);
    encoding.unknown.push_back(id == shared_->unk_id);
  };
  // _tokenize: a code the part opens with is a token; every code is cut from the text.
  const auto codes = language_codes(text);
  if (!codes.empty() && codes[0].first == 0) push(find(text.substr(0, codes[0].second)).value_or(shared_->unk_id));
  std::string rest;
  std::size_t pos = 0;
  for (const auto& [begin, end] : codes) {
    rest.append(text, pos, begin - pos);
    pos = end;
  }
  rest.append(text, pos, std::string::npos);
  std::vector<std::string> pieces;
  const auto status = shared_->spm[side_index(side_)].Encode(rest, &pieces);
  if (!status.ok()) throw InternalError("libsentencepiece Encode: " + std::string(status.message()));
  for (const std::string& piece : pieces) push(find(piece).value_or(shared_->unk_id));
}

Encoding MarianTokenizer::encode(const std::string& text, bool add_special_tokens) const {
  if (const auto bad = first_invalid_utf8(text)) {
    throw InputError("text", "",
                     "expected UTF-8, found byte " + std::to_string(static_cast<unsigned char>(text[*bad])) +
                         " at offset " + std::to_string(*bad) + " that starts no UTF-8 character");
  }
  Encoding encoding;
  const std::vector<TextSection> sections = AddedTokenMatcher(shared_->specials).split(text);
  check_tokenize_memory(text, sections, kSentencePieceGrowth);
  for (const TextSection& section : sections) {
    if (section.id) {
      encoding.ids.push_back(*section.id);
      encoding.pieces.push_back(shared_->vocabulary.pieces[*section.id]);
      encoding.unknown.push_back(false);
    } else {
      encode_part(section.text, encoding);
    }
  }
  if (add_special_tokens) {
    encoding.ids.push_back(shared_->eos_id);
    encoding.pieces.push_back(shared_->vocabulary.pieces[shared_->eos_id]);
    encoding.unknown.push_back(false);
  }
  return encoding;
}

std::string MarianTokenizer::decode(const std::vector<std::size_t>& ids, bool skip_special_tokens) const {
  const sentencepiece::SentencePieceProcessor& spm = shared_->spm[side_index(side_)];
  std::string text;
  std::vector<std::string> run;
  for (const std::size_t id : ids) {
    // Ids past the vocabulary (a model's padded rows) stand for no text.
    if (id >= size() || (skip_special_tokens && is_special(id))) continue;
    if (is_special(id)) {
      text += spm.DecodePieces(run) + piece(id) + " ";
      run.clear();
    } else {
      run.push_back(piece(id));
    }
  }
  text += spm.DecodePieces(run);
  text = python_strip(utf8_lossy(text));
  return shared_->clean_up_tokenization_spaces ? clean_up_tokenization(std::move(text)) : text;
}

std::unique_ptr<Tokenizer> load_marian_tokenizer(const std::string& folder, TokenizerSide side) {
  auto shared = std::make_shared<MarianShared>();
  const std::string vocab_json = folder + "/vocab.json";
  const Json document = read_json_file(vocab_json);
  shared->vocabulary = read_vocabulary(JsonField{document, "", vocab_json});
  const std::string config = folder + "/tokenizer_config.json";
  struct stat info {};
  read_marian_config(stat(config.c_str(), &info) == 0 ? config : "", vocab_json, *shared);
  load_spm(folder + "/source.spm", shared->spm[0]);
  load_spm(folder + "/target.spm", shared->spm[1]);
  return std::make_unique<MarianTokenizer>(std::move(shared), side);
}

}  // namespace attn

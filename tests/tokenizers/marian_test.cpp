// Marian's tokenizer (source.spm, target.spm, vocab.json) against the ids transformers'
// MarianTokenizer rules give over python3-sentencepiece (make_sentencepiece_references.py),
// and the hostile files that end in one InputError.
#include <catch2/catch.hpp>

#include <filesystem>

#include "attn/tokenizer_files.h"
#include "error_message.h"
#include "tokenizers/reference_ids.h"
#include "tokenizers/spm_charsmap_check.h"
#include "tokenizers/temp_folder.h"

namespace {

const std::string kMarian = std::string(ATTN_SOURCE_DIR) + "/tests/reference/sentencepiece/marian";

// A NormalizerSpec (ModelProto field 3) holding a precompiled_charsmap (field 2): a
// little-endian uint32 trie size, the trie's 32-bit units, the mapped strings.
std::string normalizer_spec(const std::vector<std::uint32_t>& units, const std::string& strings) {
  std::string blob;
  const auto put32 = [&blob](std::uint32_t value) {
    for (int i = 0; i < 4; ++i) blob += static_cast<char>((value >> (8 * i)) & 0xFF);
  };
  put32(static_cast<std::uint32_t>(units.size() * 4));
  for (const std::uint32_t unit : units) put32(unit);
  blob += strings;
  const auto length = [](std::size_t size) {  // a varint
    std::string out;
    for (; size >= 0x80; size >>= 7) out += static_cast<char>((size & 0x7F) | 0x80);
    return out + static_cast<char>(size);
  };
  const std::string charsmap = "\x12" + length(blob.size()) + blob;
  return "\x1A" + length(charsmap.size()) + charsmap;
}

std::vector<std::string> pieces_of(const attn::Tokenizer& tokenizer, const std::vector<std::size_t>& ids) {
  std::vector<std::string> pieces;
  for (const std::size_t id : ids) pieces.push_back(tokenizer.piece(id));
  return pieces;
}

}  // namespace

TEST_CASE("Marian's source side gives MarianTokenizer's ids over libsentencepiece", "[tokenizers][marian]") {
  const auto tokenizer = attn::load_tokenizer(kMarian, attn::TokenizerSide::Source);
  CHECK(tokenizer->kind() == "SentencePiece source.spm");
  attn_test::check_against_reference(*tokenizer, "marian_source");
  // </s> ends the text; <unk>, </s> and <pad> are the roles (no begin token).
  CHECK(tokenizer->special_id(attn::SpecialRole::End) == tokenizer->find("</s>"));
  CHECK(tokenizer->special_id(attn::SpecialRole::Unknown) == tokenizer->find("<unk>"));
  CHECK(tokenizer->special_id(attn::SpecialRole::Pad) == tokenizer->find("<pad>"));
  CHECK_FALSE(tokenizer->special_id(attn::SpecialRole::Begin));
  const attn::Encoding encoding = tokenizer->encode("Hello world");
  REQUIRE_FALSE(encoding.ids.empty());
  CHECK(encoding.ids.back() == *tokenizer->find("</s>"));
  CHECK(tokenizer->encode("Hello world", false).ids.size() == encoding.ids.size() - 1);
}

TEST_CASE("A piece vocab.json lacks becomes <unk>, a language code is one token", "[tokenizers][marian]") {
  const auto tokenizer = attn::load_tokenizer(kMarian);
  const nlohmann::json reference = attn_test::read_reference("marian_source");
  const std::size_t unk = *tokenizer->find("<unk>");
  // The reference left two source pieces out of vocab.json: neither is a piece here, and a
  // text the source model splits into them gets <unk> where they stand.
  for (const auto& left_out : reference.at("left_out")) CHECK_FALSE(tokenizer->find(left_out.get<std::string>()));
  const attn::Encoding in = tokenizer->encode("in", false);
  CHECK(in.ids == std::vector<std::size_t>{unk});
  CHECK(in.unknown == std::vector<bool>{true});
  // ">>fr<<" opens the text: a token of vocab.json, cut from what the model splits.
  const attn::Encoding coded = tokenizer->encode(">>fr<< The cat", false);
  const attn::Encoding plain = tokenizer->encode(" The cat", false);
  REQUIRE(coded.ids.size() == plain.ids.size() + 1);
  CHECK(coded.ids[0] == *tokenizer->find(">>fr<<"));
  CHECK(std::vector<std::size_t>(coded.ids.begin() + 1, coded.ids.end()) == plain.ids);
  // Decoding keeps it: the SentencePiece model knows no such piece and writes it as spelled.
  CHECK(tokenizer->decode(coded.ids) == ">>fr<< The cat");
}

TEST_CASE("Marian's target side: target.spm's pieces, decoded back to the text", "[tokenizers][marian]") {
  const auto target = attn::load_tokenizer(kMarian, attn::TokenizerSide::Target);
  CHECK(target->kind() == "SentencePiece target.spm");
  attn_test::check_against_reference(*target, "marian_target");
  const auto source = attn::load_tokenizer(kMarian, attn::TokenizerSide::Source);
  // Both sides share vocab.json; each splits with its own model.
  CHECK(target->size() == source->size());
  const std::string french = "Le chat est assis sur le tapis.";
  CHECK(pieces_of(*target, target->encode(french, false).ids) != pieces_of(*source, source->encode(french, false).ids));
  const std::vector<std::size_t> ids = target->encode(french).ids;
  CHECK(target->decode(ids) == french);
  // Kept, a special token is its text and a space; then the whole is stripped.
  CHECK(target->decode(ids, false) == french + "</s>");
}

TEST_CASE("Hostile Marian files end in one line naming the file", "[tokenizers][marian]") {
  attn_test::TempFolder folder("marian");
  folder.copy_from(kMarian);
  SECTION("a .spm that is not a protobuf") {
    folder.write("source.spm", "this is not a SentencePiece model\n");
    const std::string message = attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); });
    CHECK(message == folder.str() +
                         "/source.spm: expected a SentencePiece model (the protobuf libsentencepiece "
                         "reads), found bytes that do not parse as its protobuf");
  }
  SECTION("an empty .spm") {
    folder.write("target.spm", "");
    const std::string message = attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); });
    INFO(message);
    CHECK_THAT(message,
               Catch::StartsWith(folder.str() + "/target.spm: expected a SentencePiece model (the "
                                                "protobuf libsentencepiece reads), found a model it refuses ("));
  }
  SECTION("a .spm past 64 MiB, refused before it is read") {
    std::filesystem::resize_file(folder.path / "source.spm", (64u << 20) + 1);
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() + "/source.spm: expected a SentencePiece model of at most 64 MiB, found 67108865 bytes");
  }
  SECTION("a normalization table that would make libsentencepiece read past it") {
    // A second normalizer_spec appended: protobuf merges the two, and its charsmap, the
    // last, is the one the library uses. One unit: the root's children (at 0 ^ byte) lie
    // past the trie, where the library would read for any byte but 0.
    const std::string real = attn_test::read_text(kMarian + "/source.spm");
    CHECK_FALSE(attn::unsafe_spm_charsmap(real));
    folder.write("source.spm", real + normalizer_spec({0}, std::string(1, '\0')));
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() +
              "/source.spm: expected a SentencePiece model whose normalization table stays inside itself, "
              "found normalizer_spec.precompiled_charsmap: a trie node whose children lie past the trie");
  }
  SECTION("a vocab.json id out of range") {
    folder.write("vocab.json", R"({"</s>": 0, "<unk>": 1, "<pad>": 7})");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() + "/vocab.json: \"<pad>\": expected an integer at most 2, found the number 7");
  }
  SECTION("a vocab.json without <unk>") {
    folder.write("vocab.json", R"({"</s>": 0, "<pad>": 1})");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() +
              "/vocab.json: expected the special token \"<unk>\" (unk_token) among the pieces, found no "
              "such piece");
  }
  SECTION("target.spm missing") {
    std::filesystem::remove(folder.path / "target.spm");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() + "/target.spm: expected a SentencePiece model, found no such file");
  }
  SECTION("separate vocabularies") {
    folder.write("tokenizer_config.json", R"({"separate_vocabs": true})");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() +
              "/tokenizer_config.json: separate_vocabs: expected false (attn reads one vocab.json for "
              "both sides, not target_vocab.json), found true");
  }
}

TEST_CASE("A normalization table is walked as darts-clone reads it", "[tokenizers][marian]") {
  // 256 units: the root (offset 0: children at 0 ^ byte) has one child, for byte 'a' (97):
  // a unit labelled 97 with a leaf (bit 8) whose offset (bits 10..) leads to unit 97 ^ 1 = 96,
  // the leaf, holding the value (an index into the strings).
  const auto model = [](std::uint32_t leaf_value, const std::string& strings) {
    std::vector<std::uint32_t> units(256, 0xFFFFFFFF);  // labels that match no byte
    units[0] = 0;
    units[97] = 97 | (1u << 8) | (1u << 10);
    units[96] = (1u << 31) | leaf_value;
    return normalizer_spec(units, strings);
  };
  // Unit 0 is its own child for byte 0 and matches label 0: fine, it is inside the trie.
  CHECK_FALSE(attn::unsafe_spm_charsmap(model(0, std::string("b\0", 2))));
  CHECK(attn::unsafe_spm_charsmap(model(5, std::string("b\0", 2))) ==
        "normalizer_spec.precompiled_charsmap: a mapped string past the table");
  CHECK(attn::unsafe_spm_charsmap(model(0, "b")) ==
        "normalizer_spec.precompiled_charsmap: mapped strings that do not end in a NUL byte");
}

// Normalizers, pre-tokenizers and decoders, on the examples of Hugging Face's tokenizers'
// own tests (split.rs, metaspace.rs, byte_fallback.rs, strip.rs) and hand-worked ones.
#include <catch2/catch.hpp>

#include "tokenizers/text_steps.h"

namespace {

using Words = std::vector<std::string>;

Words split(const std::string& pattern, attn::SplitBehavior behavior, const std::string& text, bool invert = false) {
  attn::PreTokenizerStep step;
  step.kind = attn::PreTokenizerStep::Kind::Split;
  step.pattern = std::make_shared<attn::PcreRegex>(pattern, false, "", "");
  step.behavior = behavior;
  step.invert = invert;
  return attn::pre_tokenize({step}, text, true);
}

}  // namespace

TEST_CASE("Split keeps or folds the delimiters as each behavior says", "[tokenizers]") {
  using B = attn::SplitBehavior;
  const std::string text = "How are you doing?";
  CHECK(split(R"(\s+)", B::Removed, text) == Words{"How", "are", "you", "doing?"});
  CHECK(split(R"(\s+)", B::Isolated, text) == Words{"How", " ", "are", " ", "you", " ", "doing?"});
  CHECK(split(R"(\s+)", B::MergedWithPrevious, text) == Words{"How ", "are ", "you ", "doing?"});
  CHECK(split(R"(\s+)", B::MergedWithNext, text) == Words{"How", " are", " you", " doing?"});
  CHECK(split("-", B::Contiguous, "a--b-c") == Words{"a", "--", "b", "-", "c"});
  // Inverted: the words are the matches.
  CHECK(split(R"(\s+)", B::Removed, text, true) == Words{" ", " ", " "});
}

TEST_CASE("The ByteLevel pre-tokenizer splits with GPT-2's pattern and spells bytes", "[tokenizers]") {
  attn::PreTokenizerStep step;
  step.kind = attn::PreTokenizerStep::Kind::ByteLevel;
  step.pattern = std::make_shared<attn::PcreRegex>(
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", false, "", "");
  // Two spaces: the first stands alone (\s+(?!\S)), the second begins " world".
  CHECK(attn::pre_tokenize({step}, "Hello  world's é", true) == Words{"Hello", "Ġ", "Ġworld", "'s", "ĠÃ©"});
  step.add_prefix_space = true;
  CHECK(attn::pre_tokenize({step}, "Hi", true) == Words{"ĠHi"});
}

TEST_CASE("Metaspace replaces spaces and splits before each ▁", "[tokenizers]") {
  attn::PreTokenizerStep step;
  step.kind = attn::PreTokenizerStep::Kind::Metaspace;
  step.replacement = "▁";
  CHECK(attn::pre_tokenize({step}, "Hey   friend!", true) == Words{"▁Hey", "▁", "▁", "▁friend!"});
  step.prepend = attn::PreTokenizerStep::Prepend::First;
  CHECK(attn::pre_tokenize({step}, "Hey", false) == Words{"Hey"});
  step.split = false;
  CHECK(attn::pre_tokenize({step}, "a b", true) == Words{"▁a▁b"});
}

TEST_CASE("Normalizers: Prepend only non-empty text, Replace, NFC", "[tokenizers]") {
  attn::NormalizerStep prepend;
  prepend.kind = attn::NormalizerStep::Kind::Prepend;
  prepend.text = "▁";
  attn::NormalizerStep replace;
  replace.kind = attn::NormalizerStep::Kind::Replace;
  replace.pattern = std::make_shared<attn::PcreRegex>(" ", true, "", "");
  replace.text = "▁";
  CHECK(attn::normalize({prepend, replace}, "Hey friend") == "▁Hey▁friend");
  CHECK(attn::normalize({prepend, replace}, "").empty());
  attn::NormalizerStep nfc;
  nfc.kind = attn::NormalizerStep::Kind::Nfc;
  CHECK(attn::normalize({nfc}, "cafe\xCC\x81") == "caf\xC3\xA9");  // e + U+0301 -> é
}

TEST_CASE("Decoders: ByteFallback, Metaspace, Strip, Replace and Fuse", "[tokenizers]") {
  using Kind = attn::DecoderStep::Kind;
  attn::DecoderStep fallback{};
  fallback.kind = Kind::ByteFallback;
  // byte_fallback.rs: bytes that are UTF-8 become their text; bytes that are not, one
  // U+FFFD each (E2 82 is two, not the one maximal subpart).
  CHECK(attn::decode_pieces({fallback}, {"<0xE2>", "<0x82>", "<0xAC>", "a"}) == "€a");
  CHECK(attn::decode_pieces({fallback}, {"<0xE2>", "<0x82>", "a"}) ==
        "\xEF\xBF\xBD\xEF\xBF\xBD"
        "a");
  attn::DecoderStep metaspace{};
  metaspace.kind = Kind::Metaspace;
  metaspace.replacement = "▁";
  CHECK(attn::decode_pieces({metaspace}, {"▁Hey", "▁friend!"}) == "Hey friend!");
  attn::DecoderStep replace{};
  replace.kind = Kind::Replace;
  replace.from = "▁";
  replace.to = " ";
  attn::DecoderStep fuse{};
  fuse.kind = Kind::Fuse;
  attn::DecoderStep strip{};
  strip.kind = Kind::Strip;
  strip.content = " ";
  strip.start = 1;
  // Llama 2's chain: ▁ to space, fuse, one leading space off.
  CHECK(attn::decode_pieces({replace, fallback, fuse, strip}, {"▁Hello", "▁", "▁world"}) == "Hello  world");
  CHECK(attn::decode_pieces({}, {"a", "b"}) == "a b");  // no decoder: joined by spaces
}

TEST_CASE("A text's growth through the steps is bounded from tokenizer.json alone", "[tokenizers]") {
  // Issue 31: a Replace of "a" by 200 bytes took 2 GB for 1,000 characters; the bound is what
  // the memory estimate counts (bpe_tokenizer.cpp), each step's worst case worked by hand.
  attn::NormalizerStep prepend;
  prepend.kind = attn::NormalizerStep::Kind::Prepend;
  prepend.text = "▁";  // 3 bytes
  attn::NormalizerStep replace;
  replace.kind = attn::NormalizerStep::Kind::Replace;
  replace.text = "▁";
  // Llama 2's normalizer: Prepend "▁" (out <= in + 3), then " " -> "▁" (a byte to 3):
  // out <= 3 in + 9.
  attn::TextGrowth g = attn::text_growth({prepend, replace}, {});
  CHECK(g.factor == 3);
  CHECK(g.added == 9);
  replace.text = std::string(200, 'b');
  g = attn::text_growth({replace}, {});
  CHECK(g.factor == 200);
  CHECK(g.added == 0);
  attn::NormalizerStep nfkc;
  nfkc.kind = attn::NormalizerStep::Kind::Nfkc;
  attn::NormalizerStep lowercase;
  lowercase.kind = attn::NormalizerStep::Kind::Lowercase;
  CHECK(attn::text_growth({nfkc, lowercase}, {}).factor == 24);
  // GPT-2's ByteLevel (no prefix space): a byte to a character of up to 2 bytes.
  attn::PreTokenizerStep byte_level;
  byte_level.kind = attn::PreTokenizerStep::Kind::ByteLevel;
  g = attn::text_growth({}, {byte_level});
  CHECK(g.factor == 2);
  CHECK(g.added == 0);
  byte_level.add_prefix_space = true;  // one space before the section: (in + 1) x 2
  g = attn::text_growth({}, {byte_level});
  CHECK(g.factor == 2);
  CHECK(g.added == 2);
  // Metaspace "▁": a space to 3 bytes, and a "▁" before the section; after a Split, before
  // every word (a word has at least one byte): 3 x (1 + 3).
  attn::PreTokenizerStep metaspace;
  metaspace.kind = attn::PreTokenizerStep::Kind::Metaspace;
  metaspace.replacement = "▁";
  g = attn::text_growth({}, {metaspace});
  CHECK(g.factor == 3);
  CHECK(g.added == 3);
  attn::PreTokenizerStep split;
  split.kind = attn::PreTokenizerStep::Kind::Split;
  CHECK(attn::text_growth({}, {split, metaspace}).factor == 12);
}

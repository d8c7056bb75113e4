#include "tokenizers/pipeline_json.h"

#include "attn/error.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// GPT-2's pre-tokenizer pattern, which the ByteLevel pre-tokenizer applies (byte_level.rs).
const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::shared_ptr<PcreRegex> gpt2_pattern() {
  static const auto pattern = std::make_shared<PcreRegex>(kGpt2Pattern, false, "", "");
  return pattern;
}

// A {"String": "..."} or {"Regex": "..."} pattern.
std::shared_ptr<PcreRegex> read_pattern(const JsonField& field) {
  if (field.has("String"))
    return std::make_shared<PcreRegex>(field["String"].string(), true, field.file, field.path + ".String");
  if (field.has("Regex"))
    return std::make_shared<PcreRegex>(field["Regex"].string(), false, field.file, field.path + ".Regex");
  field.fail("a pattern {\"String\": ...} or {\"Regex\": ...}");
}

[[noreturn]] void refuse(const JsonField& type, const std::string& what, const std::string& known) {
  throw InputError(type.file, type.path,
                   "expected a " + what + " attn knows (" + known + "), found " + describe_json_found(type.value));
}

void add_normalizer(const JsonField& field, std::vector<NormalizerStep>& steps) {
  const JsonField type = field["type"];
  const std::string name = type.string();
  NormalizerStep step;
  if (name == "Sequence") {
    const JsonField list = field["normalizers"];
    for (std::size_t i = 0; i < list.array().size(); ++i) add_normalizer(list.at(i), steps);
    return;
  } else if (name == "Prepend") {
    step.kind = NormalizerStep::Kind::Prepend;
    step.text = field["prepend"].string();
  } else if (name == "Replace") {
    step.kind = NormalizerStep::Kind::Replace;
    step.pattern = read_pattern(field["pattern"]);
    step.text = field["content"].string();
  } else if (name == "NFC" || name == "NFD" || name == "NFKC" || name == "NFKD") {
    step.kind = name == "NFC"    ? NormalizerStep::Kind::Nfc
                : name == "NFD"  ? NormalizerStep::Kind::Nfd
                : name == "NFKC" ? NormalizerStep::Kind::Nfkc
                                 : NormalizerStep::Kind::Nfkd;
  } else if (name == "Lowercase") {
    step.kind = NormalizerStep::Kind::Lowercase;
  } else if (name == "Strip") {
    step.kind = NormalizerStep::Kind::Strip;
    step.left = field.flag("strip_left", true);
    step.right = field.flag("strip_right", true);
  } else {
    refuse(type, "normalizer", "Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD, Lowercase, Strip");
  }
  steps.push_back(std::move(step));
}

SplitBehavior read_behavior(const JsonField& field) {
  const std::string name = field.string();
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  field.fail("Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
}

PreTokenizerStep read_metaspace(const JsonField& field) {
  PreTokenizerStep step;
  step.kind = PreTokenizerStep::Kind::Metaspace;
  const JsonField replacement = field["replacement"];
  step.replacement = replacement.string();
  // tokenizers holds it as one char (metaspace.rs): "" would be found at every position of
  // a word and never passed; two characters are not a Metaspace tokenizers can read.
  const std::size_t length = step.replacement.empty() ? 0 : utf8_sequence_length(step.replacement, 0);
  if (length == 0 || length != step.replacement.size()) replacement.fail("one character, such as \"\u2581\"");
  step.split = field.flag("split", true);
  if (field.has("prepend_scheme")) {
    const JsonField scheme = field["prepend_scheme"];
    const std::string name = scheme.string();
    if (name == "always")
      step.prepend = PreTokenizerStep::Prepend::Always;
    else if (name == "first")
      step.prepend = PreTokenizerStep::Prepend::First;
    else if (name == "never")
      step.prepend = PreTokenizerStep::Prepend::Never;
    else
      scheme.fail("\"always\", \"first\" or \"never\"");
  } else {
    // Files older than prepend_scheme say add_prefix_space.
    step.prepend =
        field.flag("add_prefix_space", true) ? PreTokenizerStep::Prepend::Always : PreTokenizerStep::Prepend::Never;
  }
  return step;
}

void add_pre_tokenizer(const JsonField& field, std::vector<PreTokenizerStep>& steps) {
  const JsonField type = field["type"];
  const std::string name = type.string();
  PreTokenizerStep step;
  if (name == "Sequence") {
    const JsonField list = field["pretokenizers"];
    for (std::size_t i = 0; i < list.array().size(); ++i) add_pre_tokenizer(list.at(i), steps);
    return;
  } else if (name == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::ByteLevel;
    step.add_prefix_space = field.flag("add_prefix_space", true);
    step.use_regex = field.flag("use_regex", true);
    step.pattern = gpt2_pattern();
  } else if (name == "Split") {
    step.kind = PreTokenizerStep::Kind::Split;
    step.pattern = read_pattern(field["pattern"]);
    step.behavior = read_behavior(field["behavior"]);
    step.invert = field.flag("invert", false);
  } else if (name == "Metaspace") {
    step = read_metaspace(field);
  } else {
    refuse(type, "pre-tokenizer", "Sequence, ByteLevel, Split, Metaspace");
  }
  steps.push_back(std::move(step));
}

void add_decoder(const JsonField& field, std::vector<DecoderStep>& steps) {
  const JsonField type = field["type"];
  const std::string name = type.string();
  DecoderStep step;
  if (name == "Sequence") {
    const JsonField list = field["decoders"];
    for (std::size_t i = 0; i < list.array().size(); ++i) add_decoder(list.at(i), steps);
    return;
  } else if (name == "ByteLevel") {
    step.kind = DecoderStep::Kind::ByteLevel;
  } else if (name == "Replace") {
    step.kind = DecoderStep::Kind::Replace;
    step.from = field["pattern"]["String"].string();
    step.to = field["content"].string();
  } else if (name == "ByteFallback") {
    step.kind = DecoderStep::Kind::ByteFallback;
  } else if (name == "Fuse") {
    step.kind = DecoderStep::Kind::Fuse;
  } else if (name == "Strip") {
    step.kind = DecoderStep::Kind::Strip;
    step.content = field["content"].string();
    step.start = field["start"].count(1u << 20);
    step.stop = field["stop"].count(1u << 20);
  } else if (name == "Metaspace") {
    const PreTokenizerStep metaspace = read_metaspace(field);
    step.kind = DecoderStep::Kind::Metaspace;
    step.replacement = metaspace.replacement;
    step.drop_first_replacement = metaspace.prepend != PreTokenizerStep::Prepend::Never;
  } else {
    refuse(type, "decoder", "Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace");
  }
  steps.push_back(std::move(step));
}

std::size_t token_id(const JsonField& field, const BpeVocabulary& vocabulary) {
  const std::string piece = field.string();
  const auto id = vocabulary.find(piece);
  if (!id) field.fail("a token of the vocabulary");
  return *id;
}

// TemplateProcessing's "single": [{"SpecialToken": {"id": "<s>"}}, {"Sequence": {"id": "A"}}].
void read_template(const JsonField& field, const BpeVocabulary& vocabulary, std::vector<std::size_t>& prefix,
                   std::vector<std::size_t>& suffix) {
  const JsonField single = field["single"];
  const JsonField specials = field["special_tokens"];
  bool seen_sequence = false;
  for (std::size_t i = 0; i < single.array().size(); ++i) {
    const JsonField item = single.at(i);
    if (item.has("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const std::string name = item["SpecialToken"]["id"].string();
    const JsonField ids = specials[name.c_str()]["ids"];
    for (std::size_t k = 0; k < ids.array().size(); ++k) {
      const auto id = ids.at(k).count(vocabulary.pieces.size() - 1);
      (seen_sequence ? suffix : prefix).push_back(id);
    }
  }
}

}  // namespace

std::vector<NormalizerStep> read_normalizer(const JsonField& field) {
  std::vector<NormalizerStep> steps;
  if (!field.is_null()) add_normalizer(field, steps);
  return steps;
}

std::vector<PreTokenizerStep> read_pre_tokenizer(const JsonField& field) {
  std::vector<PreTokenizerStep> steps;
  if (!field.is_null()) add_pre_tokenizer(field, steps);
  return steps;
}

std::vector<DecoderStep> read_decoder(const JsonField& field) {
  std::vector<DecoderStep> steps;
  if (!field.is_null()) add_decoder(field, steps);
  return steps;
}

void read_post_processor(const JsonField& field, const BpeVocabulary& vocabulary, std::vector<std::size_t>& prefix,
                         std::vector<std::size_t>& suffix) {
  if (field.is_null()) return;
  const JsonField type = field["type"];
  const std::string name = type.string();
  if (name == "ByteLevel") return;  // trims offsets; adds no token
  if (name == "TemplateProcessing") return read_template(field, vocabulary, prefix, suffix);
  if (name == "RobertaProcessing" || name == "BertProcessing") {
    prefix.push_back(token_id(field["cls"].at(0), vocabulary));
    suffix.push_back(token_id(field["sep"].at(0), vocabulary));
    return;
  }
  if (name == "Sequence") {
    const JsonField list = field["processors"];
    for (std::size_t i = 0; i < list.array().size(); ++i) read_post_processor(list.at(i), vocabulary, prefix, suffix);
    return;
  }
  refuse(type, "post-processor", "ByteLevel, TemplateProcessing, RobertaProcessing, BertProcessing, Sequence");
}

}  // namespace attn

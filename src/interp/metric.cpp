// The metric of an experiment, the tokens it names, the site kinds and the normalised effect.
#include <fmt/format.h>

#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/tokenizer.h"

namespace attn {

std::size_t single_token(const Model& model, const std::string& text, const std::string& option) {
  if (!model.tokenizer)
    throw InputError(option, "", "this model has no vocabulary, so it names no token; its input is numbers");
  if (text.empty()) throw InputError(option, "", "expected one token of the model's vocabulary, found an empty text");
  const Tokenizer& tokenizer = *model.tokenizer;
  const Encoding encoding = tokenizer.encode(text, false);
  if (encoding.ids.size() != 1) {
    std::string pieces;
    for (const std::size_t id : encoding.ids) pieces += (pieces.empty() ? "" : " ") + tokenizer.display_piece(id);
    throw InputError(option, "",
                     fmt::format("expected one token of the model's vocabulary, found \"{}\", {} tokens: {}", text,
                                 encoding.ids.size(), pieces));
  }
  if (!encoding.unknown.empty() && encoding.unknown[0])
    throw InputError(option, "", fmt::format("\"{}\" is not in the model's vocabulary ('attn vocab' lists it)", text));
  return encoding.ids[0];
}

std::vector<std::size_t> Metric::ids() const {
  std::vector<std::size_t> out = {answer};
  if (wrong) out.push_back(*wrong);
  return out;
}

const std::vector<SiteKind>& site_kinds() {
  static const std::vector<SiteKind> kinds = {SiteKind::ResidPre, SiteKind::AttnOut, SiteKind::MlpOut, SiteKind::Head};
  return kinds;
}

const char* site_kind_name(SiteKind kind) {
  switch (kind) {
    case SiteKind::ResidPre:
      return "resid_pre";
    case SiteKind::AttnOut:
      return "attn_out";
    case SiteKind::MlpOut:
      return "mlp_out";
    case SiteKind::Head:
      return "head";
  }
  return "";
}

std::optional<SiteKind> site_kind_named(const std::string& name) {
  for (const SiteKind kind : site_kinds())
    if (name == site_kind_name(kind)) return kind;
  return std::nullopt;
}

double normalised_effect(double value, double clean, double corrupt) {
  const double span = clean - corrupt;
  return span == 0 ? 0 : (value - corrupt) / span;
}

}  // namespace attn

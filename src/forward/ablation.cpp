#include "forward/ablation.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {

const char* stack_name(Stack stack) { return stack == Stack::Encoder ? "encoder" : "decoder"; }

// A non-negative integer of at most 9 digits, without a leading zero.
bool read_index(const std::string& text, std::size_t* value) {
  if (text.empty() || text.size() > 9 || (text.size() > 1 && text[0] == '0') ||
      text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *value = static_cast<std::size_t>(std::stoul(text));
  return true;
}

[[noreturn]] void refuse(const std::string& message) { throw InputError("--ablate", "", message); }

// The stack a plain "L.H" names: the model's one self-attention stack.
Stack default_stack(const Model& model, const std::string& item) {
  if (model.decoder_only() || (model.encoder.empty() && !model.decoder.empty())) return Stack::Decoder;
  if (model.has_target())
    refuse(fmt::format("this model has an encoder and a decoder: name the stack, encoder.{0} or decoder.{0}", item));
  return Stack::Encoder;
}

HeadAblation parse_item(const std::string& item, const Model& model) {
  std::vector<std::string> parts;
  std::stringstream in(item);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  const bool named = parts.size() == 3 && (parts[0] == "encoder" || parts[0] == "decoder");
  std::size_t layer = 0, head = 0;
  const std::size_t at = named ? 1 : 0;
  if (!(parts.size() == 2 || named) || !read_index(parts[at], &layer) || !read_index(parts[at + 1], &head))
    refuse(
        fmt::format("expected heads as L.H, encoder.L.H or decoder.L.H (layer and head numbers, comma-separated), "
                    "found \"{}\"",
                    printable(item)));
  const Stack stack = named ? (parts[0] == "encoder" ? Stack::Encoder : Stack::Decoder) : default_stack(model, item);
  const bool decoder_only = model.decoder_only();
  const std::size_t layers = stack == Stack::Encoder ? (decoder_only ? 0 : model.encoder.size()) : model.decoder.size();
  if (layers == 0) refuse(fmt::format("this model has no {} layers, found \"{}\"", stack_name(stack), item));
  if (layer >= layers)
    refuse(fmt::format("expected a layer below {} (the {} has {} layer{}), found \"{}\"", layers, stack_name(stack),
                       layers, layers == 1 ? "" : "s", item));
  const std::size_t H = model.config.stack_config(stack == Stack::Decoder).num_heads;
  if (head >= H) refuse(fmt::format("expected a head below {} (H={}), found \"{}\"", H, H, item));
  return HeadAblation{stack, static_cast<int>(layer), head};
}

}  // namespace

Ablation parse_ablation(const std::string& text, bool mean, const Model& model) {
  Ablation ablation;
  ablation.mean = mean;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const HeadAblation head = parse_item(item, model);
    if (std::find(ablation.heads.begin(), ablation.heads.end(), head) == ablation.heads.end())
      ablation.heads.push_back(head);
  }
  if (ablation.heads.empty()) refuse(fmt::format("expected at least one head, as L.H, found \"{}\"", printable(text)));
  return ablation;
}

std::string ablation_label(const Ablation& ablation) {
  std::string heads;
  for (const HeadAblation& h : ablation.heads)
    heads += fmt::format("{}{}.{}.{}", heads.empty() ? "" : ", ", stack_name(h.stack), h.layer, h.head);
  const bool one = ablation.heads.size() == 1;
  return heads +
         (ablation.mean ? (one ? " set to its mean over positions" : " set to their means over positions") : " zeroed");
}

}  // namespace attn

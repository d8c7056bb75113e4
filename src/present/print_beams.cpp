#include "present/print_beams.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "present/terminal.h"

namespace attn {

namespace {

constexpr std::size_t kShownTokens = 4;   // a beam's last tokens in the step tables (the rest "…")
constexpr std::size_t kShownAnswer = 16;  // a hypothesis' last tokens in the final table

std::string number(double x, int precision) {
  if (x == -std::numeric_limits<double>::infinity()) return "-inf";
  return fmt::format("{:.{}f}", x, precision);
}

// A beam's tokens as the tables show them: the last `shown`, readable, "…" before them.
std::string sequence_text(const std::vector<std::size_t>& ids, const Model& model, std::size_t shown = kShownTokens) {
  if (ids.empty()) return "(prompt)";
  std::string out = ids.size() > shown ? "… " : "";
  for (std::size_t i = ids.size() > shown ? ids.size() - shown : 0; i < ids.size(); ++i)
    out += readable_token(model, ids[i]) + (i + 1 < ids.size() ? " " : "");
  return out;
}

std::string fate_text(const BeamCandidate& c, const BeamStep& step, const BeamRules& rules, int precision) {
  switch (c.fate) {
    case BeamCandidate::Fate::Kept:
      return fmt::format("beam {}", c.kept_as);
    case BeamCandidate::Fate::Finished:
      return fmt::format("ends: {} / {}^{} = {}", number(c.score, precision), step.number, rules.length_penalty,
                         number(c.score / std::pow(static_cast<double>(step.number), rules.length_penalty), precision));
    case BeamCandidate::Fate::Skipped:
      return fmt::format("end token ranked below {}: dropped", rules.beams);
    case BeamCandidate::Fate::Unused:
      return "not needed";
  }
  return "";
}

// Plain text wrapped to the width, no hanging indent.
std::string paragraph(const std::string& text, std::size_t width) {
  std::string out;
  for (const std::string& line : wrap_line(text, width, 0)) out += (out.empty() ? "" : "\n") + line;
  return out;
}

// Columns left-aligned (numbers right-aligned), two spaces apart, as wide as their widest cell.
void print_text_table(std::ostream& out, const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& numeric) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = display_width(header[c]);
    for (const auto& row : rows) width[c] = std::max(width[c], display_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      text += (c ? "  " : "") + (numeric[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : ""));
    }
    out << text << "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
}

}  // namespace

std::string beam_search_text(const BeamRules& rules) {
  const char* early = rules.early_stopping == EarlyStopping::AtOnce  ? "true"
                      : rules.early_stopping == EarlyStopping::Never ? "never"
                                                                     : "false";
  return fmt::format("beam search ({} beams, length penalty {}, early stopping {})", rules.beams, rules.length_penalty,
                     early);
}

void print_beam_step(std::ostream& out, const BeamStep& step, const BeamSearch& search, const Model& model,
                     const WalkthroughOptions& options) {
  const BeamRules& rules = search.rules();
  const int precision = options.array.precision;
  const std::size_t V = model.vocab.size();
  out << fmt::format("\n══ Token {}: {} beams, each followed by every token: the {} best of {} candidates ══\n",
                     step.number, rules.beams, step.candidates.size(), rules.beams * V);
  const std::size_t width = options.array.line_width;
  if (options.explanations && step.number == 1) {
    const std::string others = rules.beams == 2 ? "beam 1 starts" : fmt::format("beams 1 to {} start", rules.beams - 1);
    out << paragraph(fmt::format("Every beam is the prompt itself at the first token, so {} at -1e9 and only beam 0's "
                                 "candidates lead.",
                                 others),
                     width)
        << "\n"
        << paragraph(fmt::format("score = the beam's score + log p(token), the log_softmax of its logits. Read best "
                                 "first: an end token among the first {} ends a hypothesis (score / length^{}); the "
                                 "others become the next beams until {} are kept.",
                                 rules.beams, rules.length_penalty, rules.beams),
                     width)
        << "\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < step.candidates.size(); ++r) {
    const BeamCandidate& c = step.candidates[r];
    rows.push_back({std::to_string(r + 1), std::to_string(c.beam), sequence_text(step.from[c.beam].ids, model),
                    readable_token(model, c.token), number(c.log_p, precision), number(c.score, precision),
                    fate_text(c, step, rules, precision)});
  }
  print_text_table(out, {"rank", "beam", "sequence", "+ token", "log p", "score", "what it becomes"}, rows,
                   {true, true, false, false, true, true, false});
  if (step.done) return;
  out << "Beams now:";
  for (std::size_t b = 0; b < search.beams().size(); ++b)
    out << fmt::format("  {} \"{}\" {}", b, sequence_text(search.beams()[b].ids, model),
                       number(search.beams()[b].score, precision));
  out << "\n";
}

void print_beam_result(std::ostream& out, const BeamSearch& search, const Model& model,
                       const WalkthroughOptions& options) {
  const BeamRules& rules = search.rules();
  const int precision = options.array.precision;
  out << fmt::format("\n══ The {} hypotheses kept, best first: score = sum of log p / length^{} ══\n",
                     search.hypotheses().size(), rules.length_penalty);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < search.hypotheses().size(); ++i) {
    const BeamHypothesis& h = search.hypotheses()[i];
    rows.push_back({std::to_string(i + 1), sequence_text(h.ids, model, kShownAnswer),
                    h.ended ? "end token" : "open at -n",
                    fmt::format("{} / {}^{} = {}", number(h.sum, precision), h.length, rules.length_penalty,
                                number(h.score, precision))});
  }
  print_text_table(out, {"", "sequence", "ended by", "score"}, rows, {true, false, false, false});
  const std::string decoded = search.decoded_text();
  const std::string text = model.checkpoint.present() ? printable("\"" + decoded + "\"") : decoded;
  const std::size_t n = search.best().ids.size();
  out << fmt::format("\nGenerated {} token{} by {}: {}\n", n, n == 1 ? "" : "s", beam_search_text(rules), text);
}

void print_beam_result_alone(std::ostream& out, const BeamSearch& search, bool json) {
  if (!json) {
    out << search.decoded_text() << "\n";
    return;
  }
  nlohmann::json hypotheses = nlohmann::json::array();
  for (const BeamHypothesis& h : search.hypotheses())
    hypotheses.push_back({{"ids", h.ids}, {"text", search.text_of(h.ids)}, {"score", h.score}, {"ended", h.ended}});
  const BeamHypothesis& best = search.best();
  out << nlohmann::json{{"ids", best.ids},
                        {"text", search.decoded_text()},
                        {"score", best.score},
                        {"hypotheses", hypotheses}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

}  // namespace attn

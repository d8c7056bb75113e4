#include "tokenizers/word_models.h"

#include <algorithm>
#include <limits>

#include "attn/error.h"
#include "tokenizers/piece_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

std::size_t character_count(const std::string& text) {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// The start of the last character of text[begin, end).
std::size_t last_character_start(const std::string& text, std::size_t begin, std::size_t end) {
  std::size_t start = end - 1;
  while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

// Unigram's K_UNK_PENALTY: an unknown character scores this much below the lowest piece.
constexpr double kUnknownPenalty = 10.0;

}  // namespace

void WordPieceModel::encode_word(const BpeVocabulary& vocabulary, const std::string& word,
                                 std::vector<std::size_t>& ids, std::vector<bool>& unknown) const {
  const auto whole_word_unknown = [&] {
    ids.push_back(options_.unk_id);
    unknown.push_back(true);
  };
  if (character_count(word) > options_.max_input_chars_per_word) return whole_word_unknown();
  std::vector<std::size_t> pieces;
  for (std::size_t start = 0; start < word.size();) {
    std::optional<std::size_t> found;
    // The longest piece first: shorten by one character until the vocabulary has it. (Ends
    // past the longest piece's bytes find nothing, so the search starts there; an end inside
    // a character spells no piece and steps back to that character's start.)
    std::size_t end = std::min(word.size(), start + options_.longest_piece_bytes);
    for (; end > start; end = last_character_start(word, start, end)) {
      const std::string piece = (start > 0 ? options_.continuing_subword_prefix : "") + word.substr(start, end - start);
      if ((found = vocabulary.find(piece))) break;
    }
    if (!found) return whole_word_unknown();
    pieces.push_back(*found);
    start = end;
  }
  ids.insert(ids.end(), pieces.begin(), pieces.end());
  unknown.insert(unknown.end(), pieces.size(), false);
}

UnigramModel::UnigramModel(const std::vector<UnigramPiece>& pieces, std::optional<std::size_t> unk_id,
                           bool byte_fallback)
    : unk_id_(unk_id), byte_fallback_(byte_fallback) {
  double lowest = std::numeric_limits<double>::infinity();
  pieces_.reserve(pieces.size());
  scores_.reserve(pieces.size());
  for (const UnigramPiece& piece : pieces) {
    pieces_.push_back(piece.piece);
    scores_.push_back(piece.score);
    lowest = std::min(lowest, piece.score);
  }
  unk_score_ = lowest - kUnknownPenalty;
  sorted_.resize(pieces_.size());
  for (std::size_t i = 0; i < sorted_.size(); ++i) sorted_[i] = static_cast<std::uint32_t>(i);
  std::sort(sorted_.begin(), sorted_.end(),
            [this](std::uint32_t a, std::uint32_t b) { return pieces_[a] < pieces_[b]; });
}

void UnigramModel::prefixes_at(const std::string& text, std::size_t pos, std::vector<Match>& matches) const {
  matches.clear();
  // [lo, hi): the pieces spelled text[pos, pos + length) and longer. In byte order, the one
  // of exactly that length comes first; the longer ones follow, ordered by their next byte.
  auto lo = sorted_.begin(), hi = sorted_.end();
  for (std::size_t length = 1; pos + length <= text.size() && lo != hi; ++length) {
    const auto byte = static_cast<unsigned char>(text[pos + length - 1]);
    const auto byte_at = [this, length](std::uint32_t id) {
      const std::string& piece = pieces_[id];
      return piece.size() < length ? -1 : static_cast<int>(static_cast<unsigned char>(piece[length - 1]));
    };
    lo = std::lower_bound(lo, hi, byte, [&](std::uint32_t id, unsigned char b) { return byte_at(id) < b; });
    hi = std::upper_bound(lo, hi, byte, [&](unsigned char b, std::uint32_t id) { return b < byte_at(id); });
    if (lo != hi && pieces_[*lo].size() == length) matches.push_back({length, *lo});
  }
}

std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::size_t>> UnigramModel::viterbi(
    const std::string& word) const {
  struct Node {
    std::size_t id = 0;
    double score = 0;  // the best path's score up to here
    std::optional<std::size_t> starts_at;
  };
  std::vector<Node> best(word.size() + 1);
  std::vector<Match> matches;
  for (std::size_t start = 0; start < word.size();) {
    const double score_here = best[start].score;
    const std::size_t character = std::max<std::size_t>(utf8_sequence_length(word, start), 1);
    bool has_single_character = false;
    const auto offer = [&](std::size_t end, std::size_t id, double score) {
      Node& node = best[end];
      // The first path found wins a tie, as in encode_optimized.
      if (!node.starts_at || score_here + score > node.score) node = {id, score_here + score, start};
    };
    prefixes_at(word, start, matches);
    for (const Match& match : matches) {
      offer(start + match.length, match.id, scores_[match.id]);
      has_single_character = has_single_character || match.length == character;
    }
    if (!has_single_character) {
      if (!unk_id_)
        throw InputError("text", "",
                         "expected text the Unigram vocabulary can spell, found \"" + word.substr(start, character) +
                             "\", which no piece spells, and the model has no unknown token (unk_id null)");
      offer(start + character, *unk_id_, unk_score_);
    }
    start += character;
  }
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::size_t>> path;
  for (std::size_t end = word.size(); end > 0;) {
    const Node& node = best[end];
    const std::size_t start = *node.starts_at;
    // fuse_unk: consecutive unknown characters become one span.
    if (unk_id_ && node.id == *unk_id_ && !path.empty() && path.back().second == *unk_id_)
      path.back().first.first = start;
    else
      path.push_back({{start, end}, node.id});
    end = start;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

void UnigramModel::encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                               std::vector<bool>& unknown) const {
  for (const auto& step : viterbi(word)) {
    const auto& span = step.first;
    // tokenizers looks each span's text up (a fused unknown span is not a piece).
    const std::string text = word.substr(span.first, span.second - span.first);
    if (const auto id = vocabulary.find(text)) {
      ids.push_back(*id);
      unknown.push_back(unk_id_ && *id == *unk_id_);
      continue;
    }
    if (byte_fallback_) {
      std::vector<std::size_t> bytes;
      for (const char byte : text)
        if (const auto id = vocabulary.find(bytes_as_pieces(std::string(1, byte)))) bytes.push_back(*id);
      if (bytes.size() == text.size()) {
        ids.insert(ids.end(), bytes.begin(), bytes.end());
        unknown.insert(unknown.end(), bytes.size(), false);
        continue;
      }
    }
    ids.push_back(*unk_id_);
    unknown.push_back(true);
  }
}

}  // namespace attn

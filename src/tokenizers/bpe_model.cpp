#include "tokenizers/bpe_model.h"

#include <cstdio>
#include <queue>

#include "tokenizers/utf8.h"

namespace attn {

namespace {

// A symbol of the word being merged: a doubly linked list over the initial characters,
// as word.rs keeps it; a merged-away symbol has length 0.
struct Symbol {
  std::size_t id;
  std::ptrdiff_t prev, next;
  std::size_t length;
  bool unknown;
};

// A candidate merge in the queue: lowest rank first, then leftmost (word.rs's Merge order).
struct Candidate {
  std::size_t pos;
  std::uint32_t rank;
  std::size_t result;
  bool operator>(const Candidate& other) const { return rank != other.rank ? rank > other.rank : pos > other.pos; }
};

std::string byte_piece(unsigned char byte) {
  char spelled[8];
  std::snprintf(spelled, sizeof spelled, "<0x%02X>", byte);
  return spelled;
}

// The initial symbols of `word` (model.rs's merge_word): each character's id; a character
// the vocabulary lacks as its byte pieces (byte_fallback) or the unknown token (fused
// with a preceding one when fuse_unk); with neither, the character is dropped, as there.
std::vector<Symbol> initial_symbols(const BpeVocabulary& vocabulary, const std::string& word,
                                    const BpeOptions& options) {
  std::vector<Symbol> symbols;
  bool previous_unknown = false;
  for (const std::string& character : utf8_characters(word)) {
    if (const auto id = vocabulary.find(character)) {
      symbols.push_back({*id, 0, 0, character.size(), false});
      previous_unknown = false;
      continue;
    }
    if (options.byte_fallback) {
      std::vector<std::size_t> bytes;
      for (const char byte : character) {
        if (const auto id = vocabulary.find(byte_piece(static_cast<unsigned char>(byte)))) bytes.push_back(*id);
      }
      if (bytes.size() == character.size()) {
        for (const std::size_t id : bytes) symbols.push_back({id, 0, 0, 1, false});
        previous_unknown = false;
        continue;
      }
    }
    if (!options.unk_id) continue;
    if (options.fuse_unk && previous_unknown) {
      symbols.back().length += character.size();
    } else {
      symbols.push_back({*options.unk_id, 0, 0, character.size(), true});
    }
    previous_unknown = true;
  }
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    symbols[i].prev = static_cast<std::ptrdiff_t>(i) - 1;
    symbols[i].next = i + 1 < symbols.size() ? static_cast<std::ptrdiff_t>(i + 1) : -1;
  }
  return symbols;
}

}  // namespace

BpeModel::BpeModel(const std::vector<Merge>& merges_by_rank, BpeOptions options) : options_(options) {
  merges_.reserve(merges_by_rank.size());
  for (std::size_t rank = 0; rank < merges_by_rank.size(); ++rank) {
    const Merge& merge = merges_by_rank[rank];
    // A pair listed twice keeps its last rank, as the HashMap model.rs collects them into.
    merges_[key(merge.left, merge.right)] = {static_cast<std::uint32_t>(rank), merge.result};
  }
}

const BpeModel::RankedMerge* BpeModel::find_merge(std::size_t left, std::size_t right) const {
  const auto it = merges_.find(key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                           std::vector<bool>& unknown) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const auto id = vocabulary.find(word)) {
      ids.push_back(*id);
      unknown.push_back(false);
      return;
    }
  }
  std::vector<Symbol> symbols = initial_symbols(vocabulary, word, options_);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const RankedMerge* merge = find_merge(symbols[i].id, symbols[i + 1].id)) {
      queue.push({i, merge->rank, merge->result});
    }
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.length == 0 || left.next < 0) continue;
    const auto next = static_cast<std::size_t>(left.next);
    const Symbol right = symbols[next];
    // A queued candidate goes stale when either side merged since; word.rs tells by the
    // pair's merge result no longer being the queued one.
    const RankedMerge* current = find_merge(left.id, right.id);
    if (current == nullptr || current->result != top.result) continue;
    left.id = top.result;
    left.length += right.length;
    left.next = right.next;
    left.unknown = false;
    symbols[next].length = 0;
    if (right.next >= 0) symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::ptrdiff_t>(top.pos);
    if (left.prev >= 0) {
      const auto prev = static_cast<std::size_t>(left.prev);
      if (const RankedMerge* merge = find_merge(symbols[prev].id, left.id))
        queue.push({prev, merge->rank, merge->result});
    }
    if (left.next >= 0) {
      if (const RankedMerge* merge = find_merge(left.id, symbols[static_cast<std::size_t>(left.next)].id)) {
        queue.push({top.pos, merge->rank, merge->result});
      }
    }
  }
  for (const Symbol& symbol : symbols) {
    if (symbol.length == 0) continue;
    ids.push_back(symbol.id);
    unknown.push_back(symbol.unknown);
  }
}

}  // namespace attn

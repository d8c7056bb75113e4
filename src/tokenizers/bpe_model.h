// The BPE model of Hugging Face's tokenizers (models/bpe/model.rs and word.rs): a word
// starts as its characters (or, with byte_fallback, the <0xNN> pieces of a character the
// vocabulary lacks); then the merge of lowest rank among adjacent pairs is applied, the
// leftmost first on ties, until no adjacent pair has a merge.
#ifndef ATTN_TOKENIZERS_BPE_MODEL_H_
#define ATTN_TOKENIZERS_BPE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace attn {

// Pieces and ids both ways: ids 0..size()-1, every one spelled.
struct BpeVocabulary {
  std::vector<std::string> pieces;
  std::unordered_map<std::string, std::size_t> ids;

  std::optional<std::size_t> find(const std::string& piece) const {
    const auto it = ids.find(piece);
    if (it == ids.end()) return std::nullopt;
    return it->second;
  }
};

struct BpeOptions {
  bool byte_fallback = false;  // a character the vocabulary lacks becomes its <0xNN> bytes
  bool ignore_merges = false;  // a word the vocabulary has is one token whatever the merges (Llama 3)
  bool fuse_unk = false;       // consecutive unknown characters become one unknown token
  std::optional<std::size_t> unk_id;
};

// One merge: the pair (left, right) of ids becomes `result`; lower rank merges first.
struct Merge {
  std::size_t left = 0, right = 0, result = 0;
};

class BpeModel {
 public:
  BpeModel() = default;
  BpeModel(const std::vector<Merge>& merges_by_rank, BpeOptions options);

  // Appends the ids of one pre-tokenized word; unknown[i] true where the unknown token
  // stands for characters the vocabulary lacks.
  void encode_word(const BpeVocabulary& vocabulary, const std::string& word, std::vector<std::size_t>& ids,
                   std::vector<bool>& unknown) const;

 private:
  struct RankedMerge {
    std::uint32_t rank;
    std::size_t result;
  };
  static std::uint64_t key(std::size_t left, std::size_t right) {
    return (static_cast<std::uint64_t>(left) << 32) | static_cast<std::uint64_t>(right);
  }
  const RankedMerge* find_merge(std::size_t left, std::size_t right) const;

  std::unordered_map<std::uint64_t, RankedMerge> merges_;
  BpeOptions options_;
};

}  // namespace attn

#endif  // ATTN_TOKENIZERS_BPE_MODEL_H_

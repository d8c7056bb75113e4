// libsentencepiece trusts the normalization table a .spm carries (NormalizerSpec's
// precompiled_charsmap: a darts-clone double-array trie and the strings it maps to): a
// crafted table makes it read past the table while it normalizes text (a test that flipped
// bytes of a real .spm crashed it). Before a model is used, attn walks every node the trie
// can reach and checks each read the library would make stays inside the table, and each
// string it points at ends inside it.
#ifndef ATTN_TOKENIZERS_SPM_CHARSMAP_CHECK_H_
#define ATTN_TOKENIZERS_SPM_CHARSMAP_CHECK_H_

#include <optional>
#include <string>

namespace attn {

// What is wrong with the normalization tables (normalizer_spec's and denormalizer_spec's) of
// the serialized ModelProto `model`, if anything; nullopt when they are safe or absent.
std::optional<std::string> unsafe_spm_charsmap(const std::string& model);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_SPM_CHARSMAP_CHECK_H_

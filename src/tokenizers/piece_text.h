// What the tokenizers of Hugging Face's files share in showing pieces and cleaning decoded
// text: the visible marks of display_piece, the <0xNN> spelling of bytes, and
// transformers' clean_up_tokenization.
#ifndef ATTN_TOKENIZERS_PIECE_TEXT_H_
#define ATTN_TOKENIZERS_PIECE_TEXT_H_

#include <string>

namespace attn {

// transformers' clean_up_tokenization: spaces before punctuation and English contractions.
std::string clean_up_tokenization(std::string text);
// Text a learner can read: a space as "␣", a newline, tab or other control byte escaped.
std::string visible(const std::string& text);
// Each byte spelled as a byte-fallback piece: "<0xE2><0x96>".
std::string bytes_as_pieces(const std::string& bytes);
// A SentencePiece-style piece as a learner reads it: "▁" as "␣", a byte piece as it is.
std::string display_metaspace_piece(const std::string& piece);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PIECE_TEXT_H_

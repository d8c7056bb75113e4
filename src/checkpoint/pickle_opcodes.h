// Python's pickle opcodes (Lib/pickletools.py names them), those attn's machine runs and
// those it knows only to name in a refusal.
#ifndef ATTN_CHECKPOINT_PICKLE_OPCODES_H_
#define ATTN_CHECKPOINT_PICKLE_OPCODES_H_

#include <cstdint>
#include <string>

namespace attn {

// Run by attn's machine.
constexpr std::uint8_t kProto = 0x80, kFrame = 0x95, kStop = '.';
constexpr std::uint8_t kMark = '(', kPop = '0', kPopMark = '1';
constexpr std::uint8_t kNone = 'N', kNewTrue = 0x88, kNewFalse = 0x89;
constexpr std::uint8_t kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kLong1 = 0x8a, kBinFloat = 'G';
constexpr std::uint8_t kBinUnicode = 'X', kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d;
constexpr std::uint8_t kShortBinString = 'U', kBinString = 'T';
constexpr std::uint8_t kEmptyTuple = ')', kTuple = 't', kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87;
constexpr std::uint8_t kEmptyList = ']', kAppend = 'a', kAppends = 'e', kList = 'l';
constexpr std::uint8_t kEmptyDict = '}', kSetItem = 's', kSetItems = 'u', kDict = 'd';
constexpr std::uint8_t kBinPut = 'q', kLongBinPut = 'r', kMemoize = 0x94, kBinGet = 'h', kLongBinGet = 'j';
constexpr std::uint8_t kGlobal = 'c', kStackGlobal = 0x93, kReduce = 'R', kBuild = 'b', kBinPersId = 'Q';

// "NEWOBJ (0x81)", "GLOBAL ('c')", "0xff": an opcode as a message names it.
std::string describe_opcode(std::uint8_t op);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_PICKLE_OPCODES_H_

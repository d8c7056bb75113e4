// The opcodes of attn's pickle machine that build plain values: scalars, strings,
// containers, the memo. (The names, persistent ids and calls: pickle_calls.cpp.)
#include <cstring>

#include <fmt/format.h>

#include "checkpoint/pickle_opcodes.h"
#include "checkpoint/pickle_reader.h"

namespace attn {

namespace {

struct OpcodeName {
  std::uint8_t code;
  const char* name;
};
constexpr OpcodeName kOpcodeNames[] = {
    {'I', "INT"},
    {'J', "BININT"},
    {'K', "BININT1"},
    {'M', "BININT2"},
    {'L', "LONG"},
    {0x8a, "LONG1"},
    {0x8b, "LONG4"},
    {'S', "STRING"},
    {'T', "BINSTRING"},
    {'U', "SHORT_BINSTRING"},
    {'B', "BINBYTES"},
    {'C', "SHORT_BINBYTES"},
    {0x8e, "BINBYTES8"},
    {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"},
    {0x98, "READONLY_BUFFER"},
    {'N', "NONE"},
    {0x88, "NEWTRUE"},
    {0x89, "NEWFALSE"},
    {'V', "UNICODE"},
    {0x8c, "SHORT_BINUNICODE"},
    {'X', "BINUNICODE"},
    {0x8d, "BINUNICODE8"},
    {'F', "FLOAT"},
    {'G', "BINFLOAT"},
    {']', "EMPTY_LIST"},
    {'a', "APPEND"},
    {'e', "APPENDS"},
    {'l', "LIST"},
    {')', "EMPTY_TUPLE"},
    {'t', "TUPLE"},
    {0x85, "TUPLE1"},
    {0x86, "TUPLE2"},
    {0x87, "TUPLE3"},
    {'}', "EMPTY_DICT"},
    {'d', "DICT"},
    {'s', "SETITEM"},
    {'u', "SETITEMS"},
    {0x8f, "EMPTY_SET"},
    {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"},
    {'0', "POP"},
    {'2', "DUP"},
    {'(', "MARK"},
    {'1', "POP_MARK"},
    {'g', "GET"},
    {'h', "BINGET"},
    {'j', "LONG_BINGET"},
    {'p', "PUT"},
    {'q', "BINPUT"},
    {'r', "LONG_BINPUT"},
    {0x94, "MEMOIZE"},
    {0x82, "EXT1"},
    {0x83, "EXT2"},
    {0x84, "EXT4"},
    {'c', "GLOBAL"},
    {0x93, "STACK_GLOBAL"},
    {'R', "REDUCE"},
    {'b', "BUILD"},
    {'i', "INST"},
    {'o', "OBJ"},
    {0x81, "NEWOBJ"},
    {0x92, "NEWOBJ_EX"},
    {0x80, "PROTO"},
    {'.', "STOP"},
    {0x95, "FRAME"},
    {'P', "PERSID"},
    {'Q', "BINPERSID"},
};

}  // namespace

std::string describe_opcode(std::uint8_t op) {
  for (const auto& o : kOpcodeNames)
    if (o.code == op) return fmt::format("{} (0x{:02x})", o.name, op);
  return fmt::format("0x{:02x} (no pickle opcode)", op);
}

bool PickleMachine::scalar_op(std::uint8_t op) {
  PickleValue v;
  switch (op) {
    case kProto: {
      const std::uint64_t protocol = take_le(1);
      if (protocol < 2 || protocol > 5) fail(fmt::format("pickle protocol {}, expected 2 to 5", protocol));
      return true;
    }
    case kFrame:  // protocol 4's frames only group the opcodes that follow
      take_le(8);
      return true;
    case kNone:
      break;
    case kNewTrue:
    case kNewFalse:
      v.kind = PickleKind::Bool;
      v.integer = op == kNewTrue;
      break;
    case kBinInt:
      v.kind = PickleKind::Int;
      v.integer = static_cast<std::int32_t>(static_cast<std::uint32_t>(take_le(4)));
      break;
    case kBinInt1:
    case kBinInt2:
      v.kind = PickleKind::Int;
      v.integer = static_cast<std::int64_t>(take_le(op == kBinInt1 ? 1 : 2));
      break;
    case kLong1: {
      const std::size_t n = take_le(1);
      const std::uint8_t* p = take(n);
      v.kind = n <= 8 ? PickleKind::Int : PickleKind::BigInt;
      v.text = std::string_view(reinterpret_cast<const char*>(p), n);
      std::uint64_t bits = (n > 0 && n <= 8 && (p[n - 1] & 0x80)) ? ~std::uint64_t{0} : 0;  // the sign, extended
      for (std::size_t i = std::min<std::size_t>(n, 8); i-- > 0;) bits = (bits << 8) | p[i];
      if (n <= 8) v.integer = static_cast<std::int64_t>(bits);
      break;
    }
    case kBinFloat: {  // 8 bytes, big-endian
      const std::uint8_t* p = take(8);
      std::uint64_t bits = 0;
      for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
      v.kind = PickleKind::Float;
      std::memcpy(&v.number, &bits, 8);
      break;
    }
    default:
      return false;
  }
  push_new(std::move(v));
  return true;
}

bool PickleMachine::string_op(std::uint8_t op) {
  std::uint64_t n = 0;
  switch (op) {
    case kShortBinUnicode:
    case kShortBinString:
      n = take_le(1);
      break;
    case kBinUnicode:
      n = take_le(4);
      break;
    case kBinString: {
      const auto signed_n = static_cast<std::int32_t>(static_cast<std::uint32_t>(take_le(4)));
      if (signed_n < 0) fail(fmt::format("BINSTRING of length {}", signed_n));
      n = static_cast<std::uint64_t>(signed_n);
      break;
    }
    case kBinUnicode8:
      n = take_le(8);
      break;
    default:
      return false;
  }
  PickleValue v;
  v.kind = PickleKind::String;
  const std::uint8_t* p = take(n);  // refuses a length past the pickle's end before anything is made
  v.text = std::string_view(reinterpret_cast<const char*>(p), n);
  push_new(std::move(v));
  return true;
}

bool PickleMachine::container_op(std::uint8_t op) {
  switch (op) {
    case kMark:
      if (marks_.size() >= kMaxPickleMarks)
        fail(fmt::format("more than {} MARKs open at once: a state dict opens 3 (a pickle bomb?)", kMaxPickleMarks));
      marks_.push_back(stack_.size());
      return true;
    case kPop:
      pop();
      return true;
    case kPopMark:
      pop_to_mark();
      return true;
    case kEmptyTuple:
    case kEmptyList:
    case kEmptyDict:
      make_container(op == kEmptyTuple  ? PickleKind::Tuple
                     : op == kEmptyList ? PickleKind::List
                                        : PickleKind::Dict,
                     {});
      return true;
    case kTuple:
    case kList:
      make_container(op == kTuple ? PickleKind::Tuple : PickleKind::List, pop_to_mark());
      return true;
    case kDict: {
      std::vector<std::uint32_t> items = pop_to_mark();
      if (items.size() % 2 != 0) fail(fmt::format("DICT with an odd number of values ({})", items.size()));
      make_container(PickleKind::Dict, std::move(items));
      return true;
    }
    case kTuple1:
    case kTuple2:
    case kTuple3: {
      std::vector<std::uint32_t> items(op - kTuple1 + 1u);
      for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
      make_container(PickleKind::Tuple, std::move(items));
      return true;
    }
    case kAppend:
    case kSetItem: {
      std::vector<std::uint32_t> items(op == kAppend ? 1 : 2);
      for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
      add_items(top(), items);
      return true;
    }
    case kAppends:
    case kSetItems: {
      const std::vector<std::uint32_t> items = pop_to_mark();
      add_items(top(), items);
      return true;
    }
    default:
      return false;
  }
}

bool PickleMachine::memo_op(std::uint8_t op) {
  constexpr std::uint32_t kNoMemo = ~std::uint32_t{0};
  switch (op) {
    case kBinPut:
    case kLongBinPut:
    case kMemoize: {
      const std::uint64_t key = op == kMemoize ? memo_entries_ : op == kBinPut ? take_le(1) : take_le(4);
      if (key >= kMaxPickleMemo)
        fail(fmt::format("memo entry {}: more than {} memo entries (a pickle bomb?)", key, kMaxPickleMemo));
      if (key >= memo_.size()) memo_.resize(key + 1, kNoMemo);
      if (memo_[key] == kNoMemo) ++memo_entries_;
      memo_[key] = top();
      return true;
    }
    case kBinGet:
    case kLongBinGet: {
      const std::uint64_t key = take_le(op == kBinGet ? 1 : 4);
      if (key >= memo_.size() || memo_[key] == kNoMemo)
        fail(fmt::format("{} of memo entry {}, which no PUT made", describe_opcode(op), key));
      stack_.push_back(memo_[key]);  // the same value again: nothing is copied
      if (stack_.size() > kMaxPickleValues)
        fail("a stack of more values than a state dict's pickle holds (a pickle bomb?)");
      return true;
    }
    default:
      return false;
  }
}

}  // namespace attn

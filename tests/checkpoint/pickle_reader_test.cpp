// attn's pickle machine on hand-made byte strings: what torch.save writes is read into
// inert values; every other name, opcode and bomb is one InputError naming the byte.
#include <catch2/catch.hpp>

#include "attn/error.h"
#include "checkpoint/pickle_reader.h"
#include "pickle_bytes.h"

using namespace attn_test;  // NOLINT: the opcode writers
using attn::PersistentIds;
using attn::PickleKind;
using attn::PickleMachine;

namespace {

// data.pkl of torch 1.13.1's torch.save (Debian's python3-torch) of
//   sd = OrderedDict(a.weight=w, b.weight=w, c=torch.ones(3, dtype=torch.float16))
//   sd._metadata = OrderedDict([("", {"version": 1})])
// with w = torch.arange(6.).reshape(2, 3): a tied weight, two storage types, BUILD.
const std::string kTorchStateDict(
    "\x80\x02"
    "ccollections\nOrderedDict\nq\x00)Rq\x01(X\x08\x00\x00\x00"
    "a.weightq\x02"
    "ctorch._utils\n_rebuild_tensor_v2\nq\x03((X\x07\x00\x00\x00storageq\x04"
    "ctorch\nFloatStorage\nq\x05"
    "X\x01\x00\x00\x00"
    "0q\x06X\x03\x00\x00\x00"
    "cpuq\x07K\x06tq\x08QK\x00K\x02K\x03\x86q\tK\x03K\x01\x86q\n\x89"
    "h\x00)Rq\x0btq\x0cRq\rX\x08\x00\x00\x00"
    "b.weightq\x0eh\rX\x01\x00\x00\x00"
    "cq\x0fh\x03((h\x04"
    "ctorch\nHalfStorage\nq\x10X\x01\x00\x00\x00"
    "1q\x11h\x07K\x03tq\x12QK\x00K\x03\x85q\x13K\x01\x85q\x14\x89"
    "h\x00)Rq\x15tq\x16Rq\x17u}q\x18X\t\x00\x00\x00_metadataq\x19h\x00)Rq\x1aX\x00\x00\x00\x00q\x1b}q\x1c"
    "X\x07\x00\x00\x00versionq\x1dK\x01sssb.",
    325);

// data.pkl of torch.save({"p": torch.nn.Parameter(torch.ones(2))}): _rebuild_parameter.
const std::string kTorchParameter(
    "\x80\x02}q\x00X\x01\x00\x00\x00pq\x01"
    "ctorch._utils\n_rebuild_parameter\nq\x02"
    "ctorch._utils\n_rebuild_tensor_v2\nq\x03((X\x07\x00\x00\x00storageq\x04"
    "ctorch\nFloatStorage\nq\x05"
    "X\x01\x00\x00\x00"
    "0q\x06X\x03\x00\x00\x00"
    "cpuq\x07K\x02tq\x08QK\x00K\x02\x85q\tK\x01\x85q\n\x89"
    "ccollections\nOrderedDict\nq\x0b)Rq\x0ctq\rRq\x0e\x88h\x0b)Rq\x0f\x87q\x10Rq\x11s.",
    210);

std::uint32_t run(PickleMachine& m, const std::string& bytes) {
  return m.run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

// The message of the InputError running `bytes` gives ("" when none).
std::string refusal(const std::string& bytes, PersistentIds ids = PersistentIds::Zip) {
  PickleMachine m("f.bin", "archive/data.pkl", ids);
  try {
    run(m, bytes);
  } catch (const attn::InputError& e) {
    CHECK(e.file() == "f.bin");
    CHECK(e.json_path() == "archive/data.pkl");
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("the pickle torch.save writes is read into a state dict of tensors", "[checkpoint][pickle]") {
  PickleMachine m("f.bin", "archive/data.pkl", PersistentIds::Zip);
  std::size_t length = 0;
  const std::uint32_t root =
      m.run(reinterpret_cast<const std::uint8_t*>(kTorchStateDict.data()), kTorchStateDict.size() + 0, &length);
  CHECK(length == 325);
  const attn::PickleValue& dict = m.value(root);
  REQUIRE(dict.kind == PickleKind::Dict);
  REQUIRE(dict.items.size() == 6);
  CHECK(m.value(dict.items[0]).text == "a.weight");
  CHECK(m.value(dict.items[2]).text == "b.weight");
  CHECK(m.value(dict.items[4]).text == "c");
  // the tied weight: the same value (BINGET 13), so the same tensor of the same storage
  CHECK(dict.items[1] == dict.items[3]);
  REQUIRE(m.tensors().size() == 2);
  REQUIRE(m.storages().size() == 2);
  CHECK(m.storages()[0].key == "0");
  CHECK(std::string(m.storages()[0].type->name) == "FloatStorage");
  CHECK(m.storages()[0].numel == 6);
  CHECK(std::string(m.storages()[1].type->dtype_name) == "F16");
  CHECK(m.storages()[1].numel == 3);
  const attn::PickledTensor& w = m.tensors()[0];
  CHECK(w.storage == 0);
  CHECK(w.offset == 0);
  CHECK(w.shape == std::vector<std::int64_t>{2, 3});
  CHECK(w.stride == std::vector<std::int64_t>{3, 1});
  CHECK(m.tensors()[1].shape == std::vector<std::int64_t>{3});
}

TEST_CASE("a parameter pickled by _rebuild_parameter is its tensor", "[checkpoint][pickle]") {
  PickleMachine m("f.bin", "archive/data.pkl", PersistentIds::Zip);
  const attn::PickleValue& dict = m.value(run(m, kTorchParameter));
  REQUIRE(dict.items.size() == 2);
  const attn::PickleValue& p = m.value(dict.items[1]);
  REQUIRE(p.kind == PickleKind::Tensor);
  CHECK(m.tensors()[static_cast<std::size_t>(p.integer)].shape == std::vector<std::int64_t>{2});
}

TEST_CASE("the pickle's scalars are read as pickletools documents them", "[checkpoint][pickle]") {
  PickleMachine m("f", "p", PersistentIds::None);
  // (-2 as BININT, -1 as LONG1 of 1 byte, 2^40 as LONG1 of 8, 0x1950a86a20f9469cfc6c as
  // LONG1 of 10 (torch's magic number), 1.5 as BINFLOAT, True, None, "é" as SHORT_BINUNICODE)
  const std::string bytes = proto(4) + mark() + "J" + le_bytes(0xfffffffe, 4) + op(0x8a) + op(1) + op(0xff) +
                            long1(std::int64_t{1} << 40) + op(0x8a) + op(10) + le_bytes(0xa86a20f9469cfc6cULL, 8) +
                            le_bytes(0x1950, 2) + "G" + std::string("\x3f\xf8\0\0\0\0\0\0", 8) + op(0x88) + "N" +
                            short_unicode("\xc3\xa9") + "t" + stop();
  const attn::PickleValue& t = m.value(run(m, bytes));
  REQUIRE(t.items.size() == 8);
  CHECK(m.value(t.items[0]).integer == -2);
  CHECK(m.value(t.items[1]).integer == -1);
  CHECK(m.value(t.items[2]).integer == (std::int64_t{1} << 40));
  CHECK(m.value(t.items[3]).kind == PickleKind::BigInt);
  CHECK(m.value(t.items[3]).text.size() == 10);
  CHECK(m.value(t.items[4]).number == 1.5);
  CHECK(m.value(t.items[5]).kind == PickleKind::Bool);
  CHECK(m.value(t.items[6]).kind == PickleKind::None);
  CHECK(m.value(t.items[7]).text == "\xc3\xa9");
}

TEST_CASE("every name but the tensor-rebuilding ones is refused, naming it", "[checkpoint][pickle]") {
  const std::string allowed =
      "attn allows only collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter "
      "and torch's storage types and runs no pickle code";
  CHECK(refusal(proto() + global("os", "system") + tuple_of({unicode("touch x")}) + "R" + stop()) ==
        "byte 2: GLOBAL (0x63) names os.system, which a state dict's pickle does not use: " + allowed);
  CHECK(refusal(proto() + global("posix", "system") + stop()).find("names posix.system, which") != std::string::npos);
  CHECK(refusal(proto() + global("builtins", "eval") + stop()).find("names builtins.eval, which") != std::string::npos);
  CHECK(refusal(proto() + global("builtins", "exec") + stop()).find("builtins.exec") != std::string::npos);
  CHECK(refusal(proto() + global("builtins", "getattr") + stop()).find("builtins.getattr") != std::string::npos);
  CHECK(refusal(proto() + global("torch", "ComplexFloatStorage") + stop()).find("torch.ComplexFloatStorage") !=
        std::string::npos);
  CHECK(refusal(proto() + global("torch._utils", "_rebuild_parameter_with_state") + stop())
            .find("torch._utils._rebuild_parameter_with_state") != std::string::npos);
  // protocol 4's STACK_GLOBAL takes the module and the name from the stack
  CHECK(refusal(proto(4) + short_unicode("subprocess") + short_unicode("Popen") + op(0x93) + stop()) ==
        "byte 21: STACK_GLOBAL (0x93) names subprocess.Popen, which a state dict's pickle does not use: " + allowed);
  // a GLOBAL line without its newline, or longer than any real name
  CHECK(refusal(proto() + "cos\nsystem").find("GLOBAL expects a module and a name") != std::string::npos);
  CHECK(refusal(proto() + "c" + std::string(300, 'a') + "\nb\n.").find("at most 256 bytes") != std::string::npos);
}

TEST_CASE("the opcodes that build objects by calling them are refused", "[checkpoint][pickle]") {
  const auto refused_opcode = [](const std::string& bytes, const std::string& name) {
    const std::string message = refusal(bytes);
    CHECK(message.find(name + " is not one a state dict's pickle uses (attn runs no pickle code)") !=
          std::string::npos);
  };
  refused_opcode(proto() + mark() + "ios\nsystem\n" + stop(), "INST (0x69)");
  refused_opcode(proto() + mark() + ordered_dict() + "o" + stop(), "OBJ (0x6f)");
  refused_opcode(proto() + global("collections", "OrderedDict") + ")" + op(0x81) + stop(), "NEWOBJ (0x81)");
  refused_opcode(proto(4) + global("collections", "OrderedDict") + ")}" + op(0x92) + stop(), "NEWOBJ_EX (0x92)");
  refused_opcode(proto() + op(0x82) + op(1) + stop(), "EXT1 (0x82)");
  refused_opcode(proto() + "Pstorage\n" + stop(), "PERSID (0x50)");
  refused_opcode(proto() + "I1\n" + stop(), "INT (0x49)");
  refused_opcode(proto() + "C" + op(1) + "x" + stop(), "SHORT_BINBYTES (0x43)");
  refused_opcode(proto(5) + op(0x97) + stop(), "NEXT_BUFFER (0x97)");
  refused_opcode(proto() + "N2" + stop(), "DUP (0x32)");
  refused_opcode(proto() + op(0xff) + stop(), "0xff (no pickle opcode)");
}

TEST_CASE("REDUCE and BUILD run nothing beyond the state dict's own uses", "[checkpoint][pickle]") {
  // a storage type is only named, never called
  CHECK(refusal(proto() + global("torch", "FloatStorage") + ints({6}) + "R" + stop()) ==
        "byte 26: REDUCE calls torch.FloatStorage: a state dict's pickle calls only collections.OrderedDict, "
        "torch._utils._rebuild_tensor_v2 and torch._utils._rebuild_parameter");
  CHECK(refusal(proto() + unicode("eval") + ")R" + stop()).find("REDUCE calls the string \"eval\"") !=
        std::string::npos);
  CHECK(refusal(proto() + global("collections", "OrderedDict") + tuple_of({unicode("x")}) + "R" + stop())
            .find("expected no arguments") != std::string::npos);
  // _rebuild_tensor_v2 given anything but (storage, offset, shape, stride, bool, hooks)
  CHECK(refusal(proto() + global("torch._utils", "_rebuild_tensor_v2") + tuple_of({unicode("__globals__")}) + "R" +
                stop())
            .find("REDUCE calls torch._utils._rebuild_tensor_v2 with a tuple of 1, expected (a storage") !=
        std::string::npos);
  CHECK(refusal(proto() + tensor(storage("FloatStorage", "0", 6), 0, {2, 3}, {3}) + stop()).find("expected (a") !=
        std::string::npos);
  // BUILD only on an OrderedDict, from a dict: no __setstate__, no attribute set
  CHECK(refusal(proto() + ")" + "}" + "b" + stop()) ==
        "byte 4: BUILD gives a tuple of 0 the state a dict of 0: a state dict's pickle builds only an OrderedDict "
        "from a dict (attn runs no __setstate__)");
  CHECK(
      refusal(proto() + ordered_dict() + ints({1}) + "b" + stop()).find("BUILD gives a dict of 0 the state a tuple") !=
      std::string::npos);
}

TEST_CASE("persistent ids are torch.save's storages and nothing else", "[checkpoint][pickle]") {
  CHECK(refusal(proto() + unicode("storage") + "Q" + stop()) ==
        "byte 14: BINPERSID of the string \"storage\", expected ('storage', a storage type, a key, a location, a "
        "size)");
  CHECK(refusal(proto() + storage("FloatStorage", "0", -1) + stop()) ==
        "byte 55: the storage \"0\" has -1 elements, expected a size >= 0");
  CHECK(refusal(proto() + mark() + storage("FloatStorage", "0", 6) + storage("HalfStorage", "0", 6) + "t" + stop())
            .find("the storage \"0\" is named as a FloatStorage of 6 and as a HalfStorage of 6") != std::string::npos);
  // the legacy format's ids carry a sixth item, the view's metadata, which must be None
  const std::string legacy_id =
      tuple_of({unicode("storage"), global("torch", "FloatStorage"), unicode("1"), unicode("cpu"), integer(6),
                tuple_of({unicode("1"), integer(0), integer(6)})}) +
      "Q";
  CHECK(refusal(proto() + legacy_id + stop(), PersistentIds::Legacy).find(", None)") != std::string::npos);
  // a pickle other than the state dict's names no storage
  PickleMachine m("f.bin", "the sys_info pickle", PersistentIds::None);
  CHECK_THROWS_WITH(run(m, proto() + storage("FloatStorage", "0", 6) + stop()),
                    Catch::Contains("BINPERSID in a pickle that names no storage"));
}

TEST_CASE("pickle bombs are refused at their limit, in no time", "[checkpoint][pickle]") {
  // deep nesting: MARKs open at once, and tuples inside tuples
  CHECK(refusal(proto() + std::string(100, '(') + stop()) ==
        "byte 66: more than 64 MARKs open at once: a state dict opens 3 (a pickle bomb?)");
  std::string nested = proto() + "N";
  for (int i = 0; i < 100; ++i) nested += op(0x85);  // TUPLE1
  CHECK(refusal(nested + stop()) ==
        "byte 67: containers nested more than 64 deep: a state dict nests 4 (a pickle bomb?)");
  // memo abuse: a million MEMOIZEs, a GET of an entry no PUT made
  CHECK(refusal(proto(4) + "N" + std::string(attn::kMaxPickleValues + 10, '\x94') + stop())
            .find("memo entry 1048576: more than 1048576 memo entries (a pickle bomb?)") != std::string::npos);
  CHECK(refusal(proto() + get(7) + stop()) == "byte 2: BINGET (0x68) of memo entry 7, which no PUT made");
  // huge repetition: one value pushed again and again, or appended again and again
  std::string repeated = proto() + "N" + put(0) + mark();
  for (std::size_t i = 0; i < attn::kMaxPickleValues + 1; ++i) repeated += get(0);
  CHECK(refusal(repeated + "l" + stop()).find("a stack of more values than a state dict's pickle holds") !=
        std::string::npos);
  std::string appended = proto() + "]" + put(0) + "N" + put(1) + "0";
  for (std::size_t i = 0; i < attn::kMaxPickleItems + 1; ++i) appended += get(1) + "a";
  CHECK(refusal(appended + stop()).find("more than 4194304 items in containers") != std::string::npos);
}

TEST_CASE("a pickle that ends early or leaves the stack wrong is refused", "[checkpoint][pickle]") {
  CHECK(refusal(proto() + "N") == "byte 3: the pickle ends before its STOP opcode (truncated?)");
  CHECK(refusal(proto() + "X" + le_bytes(0xffffffff, 4) + "abc") ==
        "byte 2: BINUNICODE (0x58) needs 4294967295 bytes, but the pickle ends after 3");
  CHECK(refusal(proto() + "NN" + stop()) ==
        "byte 4: STOP leaves 2 values and 0 marks on the stack, expected one "
        "value and none");
  CHECK(refusal(proto() + "t" + stop()) == "byte 2: TUPLE (0x74) needs a MARK, but none is open");
  CHECK(refusal(proto() + "a" + stop()) == "byte 2: APPEND (0x61) needs a value, but the stack is empty");
  CHECK(refusal(proto() + ")Na" + stop()) == "byte 4: APPEND (0x61) adds to a tuple of 0, expected a list");
  CHECK(refusal(proto(1) + stop()) == "byte 0: pickle protocol 1, expected 2 to 5");
}

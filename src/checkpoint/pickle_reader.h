// The pickle a torch.save file holds its state dict in, read without running any of it.
//
// Python's pickle is a small stack machine whose programs may call any function they name
// (GLOBAL os.system, then REDUCE). attn's machine knows the opcodes a state dict's pickle
// uses (protocol 2, as torch.save writes it, and the few protocol 4 adds for the same
// values) and builds inert values from them: None, booleans, integers, floats, strings,
// tuples, lists and dicts. The only names a pickle may give are the few that rebuild
// tensors: collections.OrderedDict (called with no arguments), torch._utils's
// _rebuild_tensor_v2 and _rebuild_parameter (each "called" by recording what its arguments
// say, checked one by one), and torch's storage types (FloatStorage, HalfStorage,
// BFloat16Storage, DoubleStorage, and the integer ones, known so that a buffer such as
// BERT's position_ids is described; they are never called). Any other name, any other
// opcode, and every limit below is one InputError naming the file, the pickle and the byte.
//
// Nothing here recurses: values live in one table and refer to each other by index, so a
// pickle nesting a million lists, or a list holding itself, is a table like any other. The
// limits bound the memory (values, container items, memo entries) and the nesting.
#ifndef ATTN_CHECKPOINT_PICKLE_READER_H_
#define ATTN_CHECKPOINT_PICKLE_READER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "checkpoint/stored_tensor.h"

namespace attn {

// A state dict of N tensors builds about 20 N values; 2^20 serve some 50,000 tensors in one
// file (GPT-2 has 149, a 70B Llama 723 over all its shards). A value takes 72 bytes and an
// item 4, so a hostile pickle costs at most ~100 MiB before it is refused.
constexpr std::size_t kMaxPickleValues = std::size_t{1} << 20;
constexpr std::size_t kMaxPickleItems = std::size_t{1} << 22;  // elements of every container
constexpr std::size_t kMaxPickleMarks = 64;                    // MARKs open at once
constexpr std::size_t kMaxPickleDepth = 64;                    // containers inside containers
// The memo's keys: the pickler numbers what it memoizes 0, 1, 2, ..., one per value at most.
constexpr std::size_t kMaxPickleMemo = kMaxPickleValues;

enum class PickleKind : std::uint8_t {
  None,
  Bool,
  Int,
  BigInt,
  Float,
  String,
  Tuple,
  List,
  Dict,
  Global,
  Storage,
  Tensor
};

// The names a pickle may give (PickleValue::integer of a Global).
enum class PickleGlobal : std::uint8_t { OrderedDict, RebuildTensorV2, RebuildParameter, StorageType };

// A storage type torch.save names in a persistent id: torch.FloatStorage is F32 of 4 bytes.
struct TorchStorageType {
  const char* name;  // "FloatStorage"
  Dtype dtype;
  const char* dtype_name;  // safetensors' name for it: "F32"
  std::uint64_t element_bytes;
};
// The one called `name`, or nullptr.
const TorchStorageType* torch_storage_type(std::string_view name);

struct PickleValue {
  PickleKind kind = PickleKind::None;
  std::uint16_t depth = 0;  // 0 for a scalar, 1 + its deepest item's for a container
  // Bool, Int: the value; Global: the PickleGlobal; Storage, Tensor: the index in
  // storages(), tensors().
  std::int64_t integer = 0;
  const TorchStorageType* storage_type = nullptr;  // a Global naming a storage type
  double number = 0;                               // Float
  std::string_view text;                           // String, BigInt (its little-endian bytes): in the pickle's bytes
  std::vector<std::uint32_t> items;                // Tuple, List: the items; Dict: key, value, key, value, ...
};

// A storage a persistent id names: ('storage', torch.FloatStorage, KEY, LOCATION, NUMEL)
// in the zip format, the same and a view's metadata (None) in the legacy format.
struct PickledStorage {
  std::string key;
  const TorchStorageType* type = nullptr;
  std::uint64_t numel = 0;  // elements of its type
};

// What _rebuild_tensor_v2 was given: a view of `storage` from element `offset` on.
struct PickledTensor {
  std::uint32_t storage = 0;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, stride;
};

// How the pickle names its storages: not at all (the legacy format's other pickles), as
// the zip format does (5 items) or as the legacy format does (6 items).
enum class PersistentIds { None, Zip, Legacy };

class PickleMachine {
 public:
  // `file` and `entry` ("archive/data.pkl", "the state dict's pickle") name it in errors.
  PickleMachine(std::string file, std::string entry, PersistentIds ids);

  // Runs the pickle that starts at bytes[0] up to its STOP and returns the value it built.
  // *length: its length in bytes (the legacy format holds several pickles in a row).
  std::uint32_t run(const std::uint8_t* bytes, std::size_t size, std::size_t* length = nullptr);

  const PickleValue& value(std::uint32_t index) const { return values_[index]; }
  const std::vector<PickledStorage>& storages() const { return storages_; }
  const std::vector<PickledTensor>& tensors() const { return tensors_; }
  // "a list", "the string \"x\"", "the integer 3": what a value is, for messages.
  std::string describe(std::uint32_t index) const;
  // What malloc hands out for the machine's values, memo and tensors now (as heap_peak.cpp
  // counts it: core/memory_budget.h), for the memory estimate of the load.
  std::uint64_t held_bytes() const;

 private:
  [[noreturn]] void fail(const std::string& what) const;
  void step(std::uint8_t op);
  bool scalar_op(std::uint8_t op);
  bool string_op(std::uint8_t op);
  bool container_op(std::uint8_t op);
  bool memo_op(std::uint8_t op);
  bool call_op(std::uint8_t op);
  // The next n bytes of the pickle (InputError when it ends first).
  const std::uint8_t* take(std::size_t n);
  std::uint64_t take_le(std::size_t n);
  std::uint32_t push_new(PickleValue value);
  std::uint32_t pop();
  std::uint32_t top();
  std::vector<std::uint32_t> pop_to_mark();
  void add_items(std::uint32_t container, const std::vector<std::uint32_t>& items);
  std::uint32_t make_container(PickleKind kind, std::vector<std::uint32_t> items);
  void push_global(std::string_view module, std::string_view name);
  std::uint32_t persistent_load(std::uint32_t pid);
  std::uint32_t reduce(std::uint32_t callable, std::uint32_t args);
  std::uint32_t rebuild_tensor(std::uint32_t args);

  std::string file_, entry_;
  PersistentIds ids_;
  std::deque<PickleValue> values_;  // grows without moving what it holds
  std::size_t items_ = 0;
  std::vector<PickledStorage> storages_;
  std::unordered_map<std::string, std::uint32_t> storage_index_;
  std::vector<PickledTensor> tensors_;
  // One run's state.
  const std::uint8_t* bytes_ = nullptr;
  std::size_t size_ = 0, pos_ = 0, op_at_ = 0;
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::vector<std::uint32_t> memo_;  // kNoMemo where no PUT has been
  std::size_t memo_entries_ = 0;
};

}  // namespace attn

#endif  // ATTN_CHECKPOINT_PICKLE_READER_H_

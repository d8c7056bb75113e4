#include "checkpoint/pickle_reader.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/pickle_opcodes.h"
#include "core/memory_budget.h"

namespace attn {

namespace {

constexpr TorchStorageType kStorageTypes[] = {
    {"DoubleStorage", Dtype::F64, "F64", 8},  {"FloatStorage", Dtype::F32, "F32", 4},
    {"HalfStorage", Dtype::F16, "F16", 2},    {"BFloat16Storage", Dtype::BF16, "BF16", 2},
    {"LongStorage", Dtype::Other, "I64", 8},  {"IntStorage", Dtype::Other, "I32", 4},
    {"ShortStorage", Dtype::Other, "I16", 2}, {"CharStorage", Dtype::Other, "I8", 1},
    {"ByteStorage", Dtype::Other, "U8", 1},   {"BoolStorage", Dtype::Other, "BOOL", 1},
};

}  // namespace

const TorchStorageType* torch_storage_type(std::string_view name) {
  for (const auto& t : kStorageTypes)
    if (name == t.name) return &t;
  return nullptr;
}

PickleMachine::PickleMachine(std::string file, std::string entry, PersistentIds ids)
    : file_(std::move(file)), entry_(std::move(entry)), ids_(ids) {}

void PickleMachine::fail(const std::string& what) const {
  throw InputError(file_, entry_, fmt::format("byte {}: {}", op_at_, what));
}

std::uint32_t PickleMachine::run(const std::uint8_t* bytes, std::size_t size, std::size_t* length) {
  bytes_ = bytes;
  size_ = size;
  pos_ = op_at_ = 0;
  stack_.clear();
  marks_.clear();
  memo_.clear();  // each pickle.dump starts a memo of its own
  memo_entries_ = 0;
  while (true) {
    op_at_ = pos_;
    if (pos_ >= size_) fail("the pickle ends before its STOP opcode (truncated?)");
    const std::uint8_t op = bytes_[pos_++];
    if (op == kStop) break;
    step(op);
  }
  if (stack_.size() != 1 || !marks_.empty())
    fail(fmt::format("STOP leaves {} values and {} marks on the stack, expected one value and none", stack_.size(),
                     marks_.size()));
  if (length) *length = pos_;
  return stack_.back();
}

void PickleMachine::step(std::uint8_t op) {
  if (scalar_op(op) || string_op(op) || container_op(op) || memo_op(op) || call_op(op)) return;
  fail(fmt::format("opcode {} is not one a state dict's pickle uses (attn runs no pickle code)", describe_opcode(op)));
}

const std::uint8_t* PickleMachine::take(std::size_t n) {
  if (n > size_ - pos_)
    fail(fmt::format("{} needs {} bytes, but the pickle ends after {}", describe_opcode(bytes_[op_at_]), n,
                     size_ - pos_));
  const std::uint8_t* at = bytes_ + pos_;
  pos_ += n;
  return at;
}

std::uint64_t PickleMachine::take_le(std::size_t n) {
  const std::uint8_t* p = take(n);
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

std::uint32_t PickleMachine::push_new(PickleValue value) {
  if (values_.size() >= kMaxPickleValues)
    fail(fmt::format("more than {} values: more than a state dict's pickle holds (a pickle bomb?)", kMaxPickleValues));
  if (value.depth > kMaxPickleDepth)
    fail(fmt::format("containers nested more than {} deep: a state dict nests 4 (a pickle bomb?)", kMaxPickleDepth));
  values_.push_back(std::move(value));
  const auto index = static_cast<std::uint32_t>(values_.size() - 1);
  stack_.push_back(index);
  return index;
}

std::uint32_t PickleMachine::pop() {
  if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
    fail(fmt::format("{} needs a value, but the stack is empty", describe_opcode(bytes_[op_at_])));
  const std::uint32_t v = stack_.back();
  stack_.pop_back();
  return v;
}

std::uint32_t PickleMachine::top() {
  const std::uint32_t v = pop();
  stack_.push_back(v);
  return v;
}

std::vector<std::uint32_t> PickleMachine::pop_to_mark() {
  if (marks_.empty()) fail(fmt::format("{} needs a MARK, but none is open", describe_opcode(bytes_[op_at_])));
  const std::size_t mark = marks_.back();
  marks_.pop_back();
  std::vector<std::uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
  stack_.resize(mark);
  return items;
}

std::uint32_t PickleMachine::make_container(PickleKind kind, std::vector<std::uint32_t> items) {
  if (items.size() > kMaxPickleItems - items_)
    fail(fmt::format("more than {} items in containers: more than a state dict's pickle holds (a pickle bomb?)",
                     kMaxPickleItems));
  items_ += items.size();
  PickleValue v;
  v.kind = kind;
  for (const std::uint32_t i : items) v.depth = std::max<std::uint16_t>(v.depth, values_[i].depth + 1);
  if (v.depth == 0) v.depth = 1;
  v.items = std::move(items);
  return push_new(std::move(v));
}

void PickleMachine::add_items(std::uint32_t container, const std::vector<std::uint32_t>& items) {
  PickleValue& c = values_[container];
  const bool dict = c.kind == PickleKind::Dict;
  if (c.kind != PickleKind::List && !dict)
    fail(fmt::format("{} adds to {}, expected a {}", describe_opcode(bytes_[op_at_]), describe(container),
                     bytes_[op_at_] == kAppend || bytes_[op_at_] == kAppends ? "list" : "dict"));
  if (dict && items.size() % 2 != 0) fail(fmt::format("SETITEMS with an odd number of values ({})", items.size()));
  if (items.size() > kMaxPickleItems - items_)
    fail(fmt::format("more than {} items in containers: more than a state dict's pickle holds (a pickle bomb?)",
                     kMaxPickleItems));
  items_ += items.size();
  std::size_t depth = c.depth;
  for (const std::uint32_t i : items) depth = std::max<std::size_t>(depth, values_[i].depth + 1u);
  if (depth > kMaxPickleDepth)
    fail(fmt::format("containers nested more than {} deep: a state dict nests 4 (a pickle bomb?)", kMaxPickleDepth));
  c.depth = static_cast<std::uint16_t>(depth);
  c.items.insert(c.items.end(), items.begin(), items.end());
}

std::string PickleMachine::describe(std::uint32_t index) const {
  const PickleValue& v = values_[index];
  switch (v.kind) {
    case PickleKind::None:
      return "None";
    case PickleKind::Bool:
      return v.integer ? "True" : "False";
    case PickleKind::Int:
      return fmt::format("the integer {}", v.integer);
    case PickleKind::BigInt:
      return fmt::format("an integer of {} bytes", v.text.size());
    case PickleKind::Float:
      return fmt::format("the float {}", v.number);
    case PickleKind::String:
      return fmt::format("the string \"{}\"", std::string(v.text.substr(0, 80)));
    case PickleKind::Tuple:
      return fmt::format("a tuple of {}", v.items.size());
    case PickleKind::List:
      return fmt::format("a list of {}", v.items.size());
    case PickleKind::Dict:
      return fmt::format("a dict of {}", v.items.size() / 2);
    case PickleKind::Global:
      return v.integer == static_cast<int>(PickleGlobal::OrderedDict)       ? "collections.OrderedDict"
             : v.integer == static_cast<int>(PickleGlobal::RebuildTensorV2) ? "torch._utils._rebuild_tensor_v2"
             : v.integer == static_cast<int>(PickleGlobal::RebuildParameter)
                 ? "torch._utils._rebuild_parameter"
                 : fmt::format("torch.{}", v.storage_type->name);
    case PickleKind::Storage:
      return fmt::format("the storage \"{}\"", storages_[static_cast<std::size_t>(v.integer)].key);
    case PickleKind::Tensor:
      return "a tensor";
  }
  return "a value";
}

std::uint64_t PickleMachine::held_bytes() const {
  // libstdc++'s deque keeps its values in nodes of 512 bytes
  const std::size_t per_node = std::max<std::size_t>(1, 512 / sizeof(PickleValue));
  long double bytes = static_cast<long double>(values_.size() / per_node + 1) * heap_block_bytes(512);
  for (const PickleValue& v : values_) bytes += heap_block_bytes(v.items.capacity() * sizeof(std::uint32_t));
  for (const PickledTensor& t : tensors_)
    bytes += heap_block_bytes(t.shape.capacity() * sizeof(std::int64_t)) +
             heap_block_bytes(t.stride.capacity() * sizeof(std::int64_t));
  bytes += heap_block_bytes(tensors_.capacity() * sizeof(PickledTensor)) +
           heap_block_bytes(storages_.capacity() * sizeof(PickledStorage));
  for (const PickledStorage& storage : storages_)  // each key twice: the storage's and the index's
    bytes += 2 * string_heap_bytes(storage.key) + heap_block_bytes(64);
  bytes += heap_block_bytes(storage_index_.bucket_count() * sizeof(void*)) +
           heap_block_bytes(memo_.capacity() * sizeof(std::uint32_t)) +
           heap_block_bytes(stack_.capacity() * sizeof(std::uint32_t)) +
           heap_block_bytes(marks_.capacity() * sizeof(std::size_t));
  return static_cast<std::uint64_t>(bytes);
}

}  // namespace attn

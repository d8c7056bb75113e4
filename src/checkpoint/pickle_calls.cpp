// The opcodes of attn's pickle machine that would run code in Python's: GLOBAL and
// STACK_GLOBAL (allowed for the tensor-rebuilding names alone), REDUCE (which, for those,
// records what the arguments say and calls nothing), BUILD (an OrderedDict's _metadata,
// ignored) and BINPERSID (a storage torch.save named).
#include <algorithm>

#include <fmt/format.h>

#include "checkpoint/pickle_opcodes.h"
#include "checkpoint/pickle_reader.h"

namespace attn {

namespace {

constexpr const char* kAllowedNames =
    "collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and torch's "
    "storage types";

// The longest line GLOBAL may give ("torch._utils\n_rebuild_tensor_v2\n": 31 bytes).
constexpr std::size_t kMaxGlobalLine = 256;

bool is(const PickleValue& v, PickleGlobal g) {
  return v.kind == PickleKind::Global && v.integer == static_cast<std::int64_t>(g);
}

}  // namespace

bool PickleMachine::call_op(std::uint8_t op) {
  switch (op) {
    case kGlobal: {  // "module\nname\n"
      std::string_view lines[2];
      for (auto& line : lines) {
        const std::size_t start = pos_;
        while (pos_ < size_ && bytes_[pos_] != '\n' && pos_ - start <= kMaxGlobalLine) ++pos_;
        if (pos_ >= size_ || bytes_[pos_] != '\n')
          fail(fmt::format("GLOBAL expects a module and a name of at most {} bytes, each ending in a newline",
                           kMaxGlobalLine));
        line = std::string_view(reinterpret_cast<const char*>(bytes_ + start), pos_ - start);
        ++pos_;
      }
      push_global(lines[0], lines[1]);
      return true;
    }
    case kStackGlobal: {
      const std::uint32_t name = pop(), module = pop();
      if (values_[module].kind != PickleKind::String || values_[name].kind != PickleKind::String)
        fail(fmt::format("STACK_GLOBAL expects two strings, found {} and {}", describe(module), describe(name)));
      push_global(values_[module].text, values_[name].text);
      return true;
    }
    case kReduce: {
      const std::uint32_t args = pop(), callable = pop();
      reduce(callable, args);
      return true;
    }
    case kBuild: {
      const std::uint32_t state = pop(), target = top();
      // OrderedDict.__reduce__ gives a state dict's attributes (its _metadata) as the state:
      // attn sets no attribute and calls no __setstate__, so it is read and left.
      if (values_[target].kind != PickleKind::Dict ||
          (values_[state].kind != PickleKind::Dict && values_[state].kind != PickleKind::None))
        fail(
            fmt::format("BUILD gives {} the state {}: a state dict's pickle builds only an OrderedDict from a dict "
                        "(attn runs no __setstate__)",
                        describe(target), describe(state)));
      return true;
    }
    case kBinPersId:
      persistent_load(pop());
      return true;
    default:
      return false;
  }
}

void PickleMachine::push_global(std::string_view module, std::string_view name) {
  PickleValue v;
  v.kind = PickleKind::Global;
  const TorchStorageType* storage = module == "torch" ? torch_storage_type(name) : nullptr;
  if (module == "collections" && name == "OrderedDict") {
    v.integer = static_cast<std::int64_t>(PickleGlobal::OrderedDict);
  } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
    v.integer = static_cast<std::int64_t>(PickleGlobal::RebuildTensorV2);
  } else if (module == "torch._utils" && name == "_rebuild_parameter") {
    v.integer = static_cast<std::int64_t>(PickleGlobal::RebuildParameter);
  } else if (storage) {
    v.integer = static_cast<std::int64_t>(PickleGlobal::StorageType);
    v.storage_type = storage;
  } else {
    fail(
        fmt::format("{} names {}.{}, which a state dict's pickle does not use: attn allows only {} and runs no "
                    "pickle code",
                    describe_opcode(bytes_[op_at_]), std::string(module.substr(0, 100)),
                    std::string(name.substr(0, 100)), kAllowedNames));
  }
  push_new(std::move(v));
}

std::uint32_t PickleMachine::reduce(std::uint32_t callable, std::uint32_t args) {
  const PickleValue& f = values_[callable];
  const PickleValue& a = values_[args];
  if (f.kind != PickleKind::Global || is(f, PickleGlobal::StorageType))
    fail(
        fmt::format("REDUCE calls {}: a state dict's pickle calls only collections.OrderedDict, "
                    "torch._utils._rebuild_tensor_v2 and torch._utils._rebuild_parameter",
                    describe(callable)));
  if (a.kind != PickleKind::Tuple)
    fail(fmt::format("REDUCE gives {} {}, expected a tuple", describe(callable), describe(args)));
  if (is(f, PickleGlobal::OrderedDict)) {
    if (!a.items.empty())
      fail(fmt::format("REDUCE calls collections.OrderedDict with {}, expected no arguments", describe(args)));
    return make_container(PickleKind::Dict, {});
  }
  if (is(f, PickleGlobal::RebuildTensorV2)) return rebuild_tensor(args);
  // _rebuild_parameter(data, requires_grad, backward_hooks): the tensor itself
  const auto kind = [&](std::size_t i) { return values_[a.items[i]].kind; };
  if (a.items.size() != 3 || kind(0) != PickleKind::Tensor || kind(1) != PickleKind::Bool ||
      kind(2) != PickleKind::Dict || !values_[a.items[2]].items.empty())
    fail(
        fmt::format("REDUCE calls torch._utils._rebuild_parameter with {}, expected (a tensor, a bool, an empty "
                    "OrderedDict)",
                    describe(args)));
  PickleValue v = values_[a.items[0]];
  return push_new(std::move(v));
}

std::uint32_t PickleMachine::rebuild_tensor(std::uint32_t args) {
  const PickleValue& a = values_[args];
  // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  const auto item = [&](std::size_t i) -> const PickleValue& { return values_[a.items[i]]; };
  const auto ints = [&](const PickleValue& t) {
    return t.kind == PickleKind::Tuple && std::all_of(t.items.begin(), t.items.end(), [&](std::uint32_t i) {
             return values_[i].kind == PickleKind::Int;
           });
  };
  const auto empty_dict = [](const PickleValue& v) { return v.kind == PickleKind::Dict && v.items.empty(); };
  const bool ok = (a.items.size() == 6 || a.items.size() == 7) && item(0).kind == PickleKind::Storage &&
                  item(1).kind == PickleKind::Int && ints(item(2)) && ints(item(3)) &&
                  item(2).items.size() == item(3).items.size() && item(4).kind == PickleKind::Bool &&
                  empty_dict(item(5)) &&
                  (a.items.size() == 6 || empty_dict(item(6)) || item(6).kind == PickleKind::None);
  if (!ok)
    fail(
        fmt::format("REDUCE calls torch._utils._rebuild_tensor_v2 with {}, expected (a storage, an offset, a "
                    "shape, strides of as many dimensions, a bool, an empty OrderedDict[, an empty dict])",
                    describe(args)));
  PickledTensor t;
  t.storage = static_cast<std::uint32_t>(item(0).integer);
  t.offset = item(1).integer;
  for (const std::uint32_t i : item(2).items) t.shape.push_back(values_[i].integer);
  for (const std::uint32_t i : item(3).items) t.stride.push_back(values_[i].integer);
  tensors_.push_back(std::move(t));
  PickleValue v;
  v.kind = PickleKind::Tensor;
  v.integer = static_cast<std::int64_t>(tensors_.size() - 1);
  return push_new(std::move(v));
}

std::uint32_t PickleMachine::persistent_load(std::uint32_t pid) {
  const PickleValue& id = values_[pid];
  const std::size_t expected = ids_ == PersistentIds::Zip ? 5 : 6;
  const auto kind = [&](std::size_t i) { return values_[id.items[i]].kind; };
  if (ids_ == PersistentIds::None)
    fail("BINPERSID in a pickle that names no storage (only the state dict's pickle does)");
  if (id.kind != PickleKind::Tuple || id.items.size() != expected || kind(0) != PickleKind::String ||
      values_[id.items[0]].text != "storage" || !is(values_[id.items[1]], PickleGlobal::StorageType) ||
      kind(2) != PickleKind::String || kind(3) != PickleKind::String || kind(4) != PickleKind::Int ||
      (expected == 6 && kind(5) != PickleKind::None))
    fail(fmt::format("BINPERSID of {}, expected ('storage', a storage type, a key, a location, a size{})",
                     describe(pid), expected == 6 ? ", None" : ""));
  PickledStorage s;
  s.key = std::string(values_[id.items[2]].text);
  s.type = values_[id.items[1]].storage_type;
  const std::int64_t numel = values_[id.items[4]].integer;
  if (numel < 0) fail(fmt::format("the storage \"{}\" has {} elements, expected a size >= 0", s.key, numel));
  s.numel = static_cast<std::uint64_t>(numel);
  const auto [it, added] = storage_index_.emplace(s.key, static_cast<std::uint32_t>(storages_.size()));
  if (added) {
    storages_.push_back(std::move(s));
  } else {
    const PickledStorage& first = storages_[it->second];
    if (first.type != s.type || first.numel != s.numel)
      fail(fmt::format("the storage \"{}\" is named as a {} of {} and as a {} of {}", s.key, first.type->name,
                       first.numel, s.type->name, s.numel));
  }
  PickleValue v;
  v.kind = PickleKind::Storage;
  v.integer = it->second;
  return push_new(std::move(v));
}

}  // namespace attn

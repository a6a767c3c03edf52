#include "core/formats/pickle_reader.h"

#include <torch/torch.h>

#include <cstring>
#include <set>
#include <unordered_map>

namespace streetgan {
namespace {

// The names a torch.save pickle may use. Everything else is refused.
const std::set<std::string>& allowedGlobals() {
  static const std::set<std::string> names = {
      "collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter"};
  return names;
}

// The list builders of LibTorch's own pickler (torch/csrc/jit/serialization/pickler.cpp): each
// takes a list and returns it.
const std::set<std::string>& libTorchListBuilders() {
  static const std::set<std::string> names = {"torch.jit._pickle.build_intlist", "torch.jit._pickle.build_doublelist",
                                              "torch.jit._pickle.build_boollist", "torch.jit._pickle.build_tensorlist"};
  return names;
}

// A class of the archive's own code/ folder ("__torch__.___torch_mangle_3.Module").
bool isArchiveClass(const std::string& name) {
  static const std::string prefix = "__torch__.";
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() == prefix.size() || name.back() == '.') return false;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    const char c = name[i];
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!word && !(c == '.' && name[i - 1] != '.')) return false;
  }
  return true;
}

std::string hexByte(unsigned char byte) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[byte >> 4] + digits[byte & 15];
}

// The opcodes below are the subset of Python's pickle protocols 2–5 that torch.save emits for
// dicts of tensors, numbers, strings and lists (pickletools documents each one).
class Machine {
public:
  Machine(const std::string& bytes, std::size_t max_values, std::function<bool(const std::string&)> allowed,
          std::function<Result<PickleValue>(const PickleValue&)> persistent,
          std::function<Result<PickleValue>(const PickleValue&, const PickleValue&)> call)
      : bytes_(bytes), max_values_(max_values), allowed_(std::move(allowed)), persistent_(std::move(persistent)),
        call_(std::move(call)) {}

  Result<PickleValue> run() {
    while (true) {
      if (pos_ >= bytes_.size()) return makeError("the pickle ends before its STOP opcode (truncated)");
      const auto opcode = static_cast<unsigned char>(bytes_[pos_++]);
      if (opcode == '.') {
        if (stack_.size() != 1 || marks_.size() != 0) return makeError("the pickle's stack is malformed at STOP");
        return stack_.back();
      }
      if (Status done = step(opcode); !done) return makeError(done.error());
    }
  }

private:
  Status step(unsigned char op) {
    switch (op) {
      case 0x80: return skip(1);                       // PROTO
      case 0x95: return skip(8);                       // FRAME
      case '(': marks_.push_back(stack_.size()); return {};  // MARK
      case 'N': return push(PickleValue());
      case 0x88: return push(PickleValue::boolean(true));
      case 0x89: return push(PickleValue::boolean(false));
      case 'K': return pushUnsigned(1);
      case 'M': return pushUnsigned(2);
      case 'J': {
        std::uint64_t raw = 0;
        if (Status s = readUnsigned(4, raw); !s) return s;
        return push(PickleValue::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(raw))));
      }
      case 0x8a: return pushLong();                     // LONG1
      case 'G': return pushFloat();                     // BINFLOAT
      case 'X': return pushString(4);                   // BINUNICODE
      case 0x8c: return pushString(1);                  // SHORT_BINUNICODE
      case 0x8d: return pushString(8);                  // BINUNICODE8
      case '}': return push(PickleValue::dict());
      case ']': return push(PickleValue::list());
      case ')': return push(PickleValue::tuple({}));
      case 0x85: return tupleOf(1);
      case 0x86: return tupleOf(2);
      case 0x87: return tupleOf(3);
      case 't': return markedTuple();
      case 'l': {
        auto items = popMarked();
        if (!items) return makeError(items.error());
        return push(PickleValue::list(std::move(*items)));
      }
      case 'd': {
        auto items = popMarked();
        if (!items) return makeError(items.error());
        if (items->size() % 2) return makeError("DICT with an odd number of items");
        PickleValue dict = PickleValue::dict();
        if (Status s = setItems(dict, *items); !s) return s;
        return push(std::move(dict));
      }
      case 'a': return append();
      case 'e': return appends();
      case 's': return setItem();
      case 'u': return setItemsMarked();
      case 'q': return put(1);                          // BINPUT
      case 'r': return put(4);                          // LONG_BINPUT
      case 0x94:                                        // MEMOIZE
        if (stack_.empty()) return makeError("MEMOIZE on an empty stack");
        memo_[static_cast<std::uint32_t>(memo_.size())] = stack_.back();
        return {};
      case 'h': return get(1);                          // BINGET
      case 'j': return get(4);                          // LONG_BINGET
      case 'c': return global();
      case 0x93: return stackGlobal();
      case 'Q': return persistentId();
      case 'R': return reduce();
      case 0x81: return reduce();                       // NEWOBJ: cls.__new__(cls, *args), as a call
      case 'b': return build();
      default:
        return makeError("the pickle uses opcode " + hexByte(op) + " at byte " + std::to_string(pos_ - 1) +
                         ", which a torch.save checkpoint never holds");
    }
  }

  Status skip(std::size_t n) {
    if (bytes_.size() - pos_ < n) return makeError("the pickle ends early (truncated)");
    pos_ += n;
    return {};
  }
  Status readUnsigned(std::size_t n, std::uint64_t& out) {
    if (bytes_.size() - pos_ < n) return makeError("the pickle ends early (truncated)");
    out = 0;
    for (std::size_t i = 0; i < n; ++i)
      out |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += n;
    return {};
  }
  Status push(PickleValue value) {
    if (++values_ > max_values_)
      return makeError("the pickle makes more than " + std::to_string(max_values_) +
                       " values, far more than a checkpoint holds; it is not read");
    if (value.depth() > PickleValue::kMaxDepth)
      return makeError("the pickle nests lists, tuples or dicts more than " + std::to_string(PickleValue::kMaxDepth) +
                       " deep, which a checkpoint never does");
    stack_.push_back(std::move(value));
    return {};
  }
  Status pushUnsigned(std::size_t n) {
    std::uint64_t raw = 0;
    if (Status s = readUnsigned(n, raw); !s) return s;
    return push(PickleValue::integer(static_cast<std::int64_t>(raw)));
  }
  Status pushLong() {
    std::uint64_t n = 0;
    if (Status s = readUnsigned(1, n); !s) return s;
    if (n > 8) return makeError("the pickle holds an integer wider than 64 bits");
    std::uint64_t raw = 0;
    if (Status s = readUnsigned(n, raw); !s) return s;
    if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~std::uint64_t{0} << (8 * n);  // sign
    return push(PickleValue::integer(static_cast<std::int64_t>(raw)));
  }
  Status pushFloat() {
    if (bytes_.size() - pos_ < 8) return makeError("the pickle ends early (truncated)");
    std::uint64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw = (raw << 8) | static_cast<unsigned char>(bytes_[pos_ + i]);  // big-endian
    pos_ += 8;
    double value;
    std::memcpy(&value, &raw, sizeof value);
    return push(PickleValue::real(value));
  }
  Status pushString(std::size_t width) {
    std::uint64_t length = 0;
    if (Status s = readUnsigned(width, length); !s) return s;
    if (bytes_.size() - pos_ < length) return makeError("the pickle ends inside a string (truncated)");
    std::string text = bytes_.substr(pos_, length);
    pos_ += length;
    return push(PickleValue::string(std::move(text)));
  }
  Result<PickleValue> pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      return makeError("the pickle pops an empty stack");
    PickleValue value = std::move(stack_.back());
    stack_.pop_back();
    return value;
  }
  Result<PickleValue::Items> popMarked() {
    if (marks_.empty()) return makeError("the pickle has no MARK where one is needed");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    PickleValue::Items items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(mark)),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(mark);
    return items;
  }
  Status tupleOf(std::size_t n) {
    if (stack_.size() < n + (marks_.empty() ? 0 : marks_.back())) return makeError("the pickle pops an empty stack");
    PickleValue::Items items(std::make_move_iterator(stack_.end() - static_cast<std::ptrdiff_t>(n)),
                             std::make_move_iterator(stack_.end()));
    stack_.resize(stack_.size() - n);
    return push(PickleValue::tuple(std::move(items)));
  }
  Status markedTuple() {
    auto items = popMarked();
    if (!items) return makeError(items.error());
    return push(PickleValue::tuple(std::move(*items)));
  }
  Result<PickleValue*> top(PickleValue::Kind kind, const char* what) {
    if (stack_.empty()) return makeError(std::string(what) + " on an empty stack");
    if (stack_.back().kind() != kind)
      return makeError(std::string(what) + " on a " + stack_.back().typeName());
    return &stack_.back();
  }
  Status append() {
    auto value = pop();
    if (!value) return makeError(value.error());
    auto list = top(PickleValue::Kind::List, "APPEND");
    if (!list) return makeError(list.error());
    return (*list)->append(std::move(*value));
  }
  Status appends() {
    auto items = popMarked();
    if (!items) return makeError(items.error());
    auto list = top(PickleValue::Kind::List, "APPENDS");
    if (!list) return makeError(list.error());
    for (auto& item : *items)
      if (Status s = (*list)->append(std::move(item)); !s) return s;
    return {};
  }
  static Status setItems(const PickleValue& dict, PickleValue::Items& items) {
    for (std::size_t i = 0; i + 1 < items.size(); i += 2)
      if (Status s = dict.set(std::move(items[i]), std::move(items[i + 1])); !s) return s;
    return {};
  }
  Status setItem() {
    auto value = pop();
    if (!value) return makeError(value.error());
    auto key = pop();
    if (!key) return makeError(key.error());
    auto dict = top(PickleValue::Kind::Dict, "SETITEM");
    if (!dict) return makeError(dict.error());
    return (*dict)->set(std::move(*key), std::move(*value));
  }
  Status setItemsMarked() {
    auto items = popMarked();
    if (!items) return makeError(items.error());
    if (items->size() % 2) return makeError("SETITEMS with an odd number of items");
    auto dict = top(PickleValue::Kind::Dict, "SETITEMS");
    if (!dict) return makeError(dict.error());
    return setItems(**dict, *items);
  }
  Status put(std::size_t width) {
    std::uint64_t index = 0;
    if (Status s = readUnsigned(width, index); !s) return s;
    if (stack_.empty()) return makeError("BINPUT on an empty stack");
    // Picklers number memo entries from 0, one per value put: an index past the values made so
    // far is crafted, and LibTorch's own unpickler grows a table to it (2^28: 4 GB).
    if (index > values_)
      return makeError("the pickle stores memo entry " + std::to_string(index) + ", past the " + std::to_string(values_) +
                       " values it has made");
    memo_[static_cast<std::uint32_t>(index)] = stack_.back();
    return {};
  }
  Status get(std::size_t width) {
    std::uint64_t index = 0;
    if (Status s = readUnsigned(width, index); !s) return s;
    auto found = memo_.find(static_cast<std::uint32_t>(index));
    if (found == memo_.end()) return makeError("the pickle refers to memo entry " + std::to_string(index) + ", which it never stored");
    return push(found->second);
  }
  Result<std::string> line() {
    const auto end = bytes_.find('\n', pos_);
    if (end == std::string::npos) return makeError("the pickle ends inside a global's name (truncated)");
    std::string text = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return text;
  }
  Status pushGlobal(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    if (!allowed_(full))
      return makeError("the pickle needs the Python object " + full +
                       ", which a checkpoint of tensors and numbers never does; it is refused, as loading it could run code");
    return push(PickleValue::global(full));
  }
  Status global() {
    auto module = line();
    if (!module) return makeError(module.error());
    auto name = line();
    if (!name) return makeError(name.error());
    return pushGlobal(*module, *name);
  }
  Status stackGlobal() {
    auto name = pop();
    if (!name) return makeError(name.error());
    auto module = pop();
    if (!module) return makeError(module.error());
    if (!name->isString() || !module->isString()) return makeError("STACK_GLOBAL without two strings");
    return pushGlobal(module->toString(), name->toString());
  }
  Status persistentId() {
    auto pid = pop();
    if (!pid) return makeError(pid.error());
    auto value = persistent_(*pid);
    if (!value) return makeError(value.error());
    return push(std::move(*value));
  }
  Status reduce() {
    auto args = pop();
    if (!args) return makeError(args.error());
    auto callable = pop();
    if (!callable) return makeError(callable.error());
    if (!callable->isGlobal()) return makeError("REDUCE calls a " + callable->typeName());
    auto value = call_(*callable, *args);
    if (!value) return makeError(value.error());
    return push(std::move(*value));
  }
  // A state dict is an OrderedDict with a `_metadata` attribute (each module's version), set by
  // BUILD. Our dicts have no attributes, and nothing needs the versions, so the state is dropped.
  Status build() {
    auto state = pop();
    if (!state) return makeError(state.error());
    if (stack_.empty() || !stack_.back().isDict() || !state->isDict())
      return makeError("BUILD sets attributes on a " + (stack_.empty() ? std::string("nothing") : stack_.back().typeName()) +
                       ", which only a state dict's OrderedDict may have");
    return {};
  }

  const std::string& bytes_;
  std::size_t pos_ = 0;
  std::vector<PickleValue> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint32_t, PickleValue> memo_;
  std::size_t max_values_ = 0;
  std::size_t values_ = 0;  // values pushed so far
  std::function<bool(const std::string&)> allowed_;
  std::function<Result<PickleValue>(const PickleValue&)> persistent_;
  std::function<Result<PickleValue>(const PickleValue&, const PickleValue&)> call_;
};

// LibTorch's own limit on a tensor's dimensions is 64; checkpoints hold at most 4.
constexpr std::size_t kMaxTensorDims = 16;

Result<std::vector<std::int64_t>> intTuple(const PickleValue& value, const char* what) {
  if (!value.isSequence()) return makeError(std::string("a tensor's ") + what + " is a " + value.typeName());
  if (value.items().size() > kMaxTensorDims)
    return makeError(std::string("a tensor's ") + what + " has " + std::to_string(value.items().size()) +
                     " dimensions; at most " + std::to_string(kMaxTensorDims) + " are read");
  std::vector<std::int64_t> out;
  for (const auto& item : value.items()) {
    if (!item.isInt()) return makeError(std::string("a tensor's ") + what + " holds a " + item.typeName());
    out.push_back(item.toInt());
  }
  return out;
}

// Whether the view (size, stride, offset) stays inside a storage of `numel` elements and has no
// more elements than it: the sums and products are checked, as a crafted stride of 2^62 wraps
// int64 (LibTorch's own check wraps the same way), and a zero stride would let a few bytes
// expand into terabytes when the tensor is made contiguous.
Status viewFitsStorage(const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride,
                       std::int64_t offset, std::int64_t numel) {
  if (offset < 0) return makeError("a tensor starts at a negative offset");
  std::int64_t elements = 1;
  std::int64_t last = offset;  // the furthest element the view reaches
  for (std::size_t i = 0; i < size.size(); ++i) {
    if (size[i] < 0 || stride[i] < 0) return makeError("a tensor has a negative size or stride");
    if (__builtin_mul_overflow(elements, size[i], &elements))
      return makeError("a tensor's size overflows 64 bits");
  }
  if (elements == 0) return {};
  for (std::size_t i = 0; i < size.size(); ++i) {
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(size[i] - 1, stride[i], &reach) || __builtin_add_overflow(last, reach, &last))
      return makeError("a tensor reaches past the end of its storage (" + std::to_string(numel) + " elements)");
  }
  if (last >= numel)
    return makeError("a tensor reaches past the end of its storage (" + std::to_string(numel) + " elements)");
  if (elements > numel)
    return makeError("a tensor has " + std::to_string(elements) + " elements, more than its storage holds (" +
                     std::to_string(numel) + ")");
  return {};
}

}  // namespace

PickleReader::PickleReader(StorageLoader loader, Limits limits) : loader_(std::move(loader)), limits_(limits) {}

std::optional<torch::ScalarType> PickleReader::storageType(const std::string& global) {
  static const std::map<std::string, torch::ScalarType> types = {
      {"torch.FloatStorage", torch::kFloat32}, {"torch.DoubleStorage", torch::kFloat64},
      {"torch.HalfStorage", torch::kFloat16},  {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},    {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},   {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},    {"torch.BoolStorage", torch::kBool}};
  auto found = types.find(global);
  if (found == types.end()) return std::nullopt;
  return found->second;
}

Result<PickleValue> PickleReader::persistentLoad(const PickleValue& pid) {
  if (!pid.isSequence() || pid.items().size() != 5 || !pid.items()[0].isString() ||
      pid.items()[0].toString() != "storage")
    return makeError("the pickle holds a persistent id that is not a tensor storage");
  const auto& items = pid.items();
  if (!items[1].isGlobal() || !items[2].isString() || !items[4].isInt())
    return makeError("the pickle holds a malformed storage reference");
  const auto dtype = storageType(items[1].toString());
  if (!dtype) return makeError("the pickle holds a storage of type " + items[1].toString());
  const std::string& key = items[2].toString();
  auto cached = storages_.find(key);
  if (cached != storages_.end()) return PickleValue::tensor(cached->second);
  auto storage = loader_(key, *dtype, items[4].toInt());
  if (!storage) return makeError(storage.error());
  storages_[key] = *storage;
  return PickleValue::tensor(*storage);
}

Result<PickleValue> PickleReader::call(const PickleValue& callable, const PickleValue& args) {
  const std::string& name = callable.toString();
  if (!args.isSequence()) return makeError(name + " is called with a " + args.typeName());
  const auto& a = args.items();
  if (name == "collections.OrderedDict") {
    PickleValue dict = PickleValue::dict();
    if (!a.empty() && a[0].isSequence())
      for (const auto& pair : a[0].items())
        if (pair.isSequence() && pair.items().size() == 2)
          if (Status s = dict.set(pair.items()[0], pair.items()[1]); !s) return makeError(s.error());
    return dict;
  }
  if (limits_.libtorch_archive && isArchiveClass(name)) {
    // An object of one of the archive's classes: its attributes come by BUILD, as a dict.
    if (!a.empty()) return makeError("the pickle makes a " + name + " with arguments, which LibTorch never writes");
    return PickleValue::dict();
  }
  if (limits_.libtorch_archive && libTorchListBuilders().count(name)) {
    if (a.size() != 1 || a[0].kind() != PickleValue::Kind::List) return makeError(name + " without one list");
    return a[0];
  }
  if (name == "torch._utils._rebuild_parameter") {
    if (a.empty() || !a[0].isTensor()) return makeError(name + " without a tensor");
    return a[0];
  }
  if (name == "torch._utils._rebuild_tensor_v2") {
    if (a.size() < 4 || !a[0].isTensor() || !a[1].isInt())
      return makeError("torch._utils._rebuild_tensor_v2 is called with other arguments than a storage, offset, size and stride");
    auto size = intTuple(a[2], "size");
    if (!size) return makeError(size.error());
    auto stride = intTuple(a[3], "stride");
    if (!stride) return makeError(stride.error());
    if (size->size() != stride->size()) return makeError("a tensor's size and stride differ in length");
    const torch::Tensor& storage = a[0].toTensor();
    if (Status s = viewFitsStorage(*size, *stride, a[1].toInt(), storage.numel()); !s) return makeError(s.error());
    const std::int64_t offset = a[1].toInt();
    return PickleValue::tensor(storage.as_strided(*size, *stride, offset));
  }
  return makeError("the pickle calls " + name + " in a way a checkpoint never does");
}

Result<PickleValue> PickleReader::read(const std::string& bytes) {
  const bool libtorch = limits_.libtorch_archive;
  Machine machine(
      bytes, limits_.max_values,
      [libtorch](const std::string& name) {
        return allowedGlobals().count(name) > 0 || storageType(name).has_value() ||
               (libtorch && (isArchiveClass(name) || libTorchListBuilders().count(name) > 0));
      },
      [this](const PickleValue& pid) { return persistentLoad(pid); },
      [this](const PickleValue& callable, const PickleValue& args) { return call(callable, args); });
  return machine.run();
}

}  // namespace streetgan

#include "core/formats/pickle_value.h"

#include <algorithm>
#include <unordered_map>

namespace streetgan {

// The shared body of a list, tuple or dict. Keys are indexed by value so that a dict of n keys
// is built in O(n), not O(n²): a pickle of a few MB may hold hundreds of thousands of keys.
struct PickleValue::Container {
  Items items;
  Entries entries;
  std::unordered_map<std::string, std::size_t> string_keys;
  std::unordered_map<std::int64_t, std::size_t> int_keys;
  int depth = 1;
  bool sealed = false;

  Container() = default;
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
  // Frees the tree below without recursion: every child container owned only here is emptied
  // into a work list before it is freed, so each destructor frees scalars only.
  ~Container() {
    std::vector<std::shared_ptr<Container>> pending;
    auto detach = [&pending](Container& c) {
      for (auto& item : c.items)
        if (item.container_) pending.push_back(std::move(item.container_));
      for (auto& [key, value] : c.entries) {
        if (key.container_) pending.push_back(std::move(key.container_));
        if (value.container_) pending.push_back(std::move(value.container_));
      }
    };
    detach(*this);
    while (!pending.empty()) {
      std::shared_ptr<Container> next = std::move(pending.back());
      pending.pop_back();
      if (next.use_count() == 1) detach(*next);
    }
  }
};

PickleValue PickleValue::boolean(bool value) {
  PickleValue v;
  v.kind_ = Kind::Bool;
  v.integer_ = value ? 1 : 0;
  return v;
}

PickleValue PickleValue::integer(std::int64_t value) {
  PickleValue v;
  v.kind_ = Kind::Int;
  v.integer_ = value;
  return v;
}

PickleValue PickleValue::real(double value) {
  PickleValue v;
  v.kind_ = Kind::Float;
  v.real_ = value;
  return v;
}

PickleValue PickleValue::string(std::string value) {
  PickleValue v;
  v.kind_ = Kind::String;
  v.string_ = std::make_shared<const std::string>(std::move(value));
  return v;
}

PickleValue PickleValue::list(Items items) {
  PickleValue v;
  v.kind_ = Kind::List;
  v.container_ = std::make_shared<Container>();
  for (const auto& item : items)
    if (item.container_) {
      item.container_->sealed = true;
      v.container_->depth = std::max(v.container_->depth, item.container_->depth + 1);
    }
  v.container_->items = std::move(items);
  return v;
}

PickleValue PickleValue::tuple(Items items) {
  PickleValue v = list(std::move(items));
  v.kind_ = Kind::Tuple;
  return v;
}

PickleValue PickleValue::dict() {
  PickleValue v;
  v.kind_ = Kind::Dict;
  v.container_ = std::make_shared<Container>();
  return v;
}

PickleValue PickleValue::tensor(torch::Tensor value) {
  PickleValue v;
  v.kind_ = Kind::Tensor;
  v.tensor_ = std::move(value);
  return v;
}

PickleValue PickleValue::global(std::string name) {
  PickleValue v = string(std::move(name));
  v.kind_ = Kind::Global;
  return v;
}

double PickleValue::toDouble() const {
  switch (kind_) {
    case Kind::Float: return real_;
    case Kind::Int:
    case Kind::Bool: return static_cast<double>(integer_);
    case Kind::Tensor:
      return tensor_.defined() && tensor_.numel() == 1 ? tensor_.item<double>() : 0.0;
    default: return 0.0;
  }
}

const std::string& PickleValue::toString() const {
  static const std::string empty;
  return string_ ? *string_ : empty;
}

const PickleValue::Items& PickleValue::items() const {
  static const Items empty;
  return container_ && isSequence() ? container_->items : empty;
}

const PickleValue::Entries& PickleValue::entries() const {
  static const Entries empty;
  return container_ && isDict() ? container_->entries : empty;
}

int PickleValue::depth() const { return container_ ? container_->depth : 0; }

Status PickleValue::adopt(const PickleValue& child) const {
  if (!child.container_) return {};
  if (child.container_ == container_) return makeError("the pickle puts a " + typeName() + " inside itself");
  if (child.container_->depth + 1 > kMaxDepth)
    return makeError("the pickle nests lists, tuples or dicts more than " + std::to_string(kMaxDepth) +
                     " deep, which a checkpoint never does");
  child.container_->sealed = true;
  container_->depth = std::max(container_->depth, child.container_->depth + 1);
  return {};
}

Status PickleValue::append(PickleValue item) const {
  if (kind_ != Kind::List) return makeError("APPEND on a " + typeName());
  if (container_->sealed) return makeError("the pickle changes a list after putting it inside another value");
  if (Status s = adopt(item); !s) return s;
  container_->items.push_back(std::move(item));
  return {};
}

Status PickleValue::set(PickleValue key, PickleValue value) const {
  if (kind_ != Kind::Dict) return makeError("SETITEM on a " + typeName());
  if (container_->sealed) return makeError("the pickle changes a dict after putting it inside another value");
  if (Status s = adopt(key); !s) return s;
  if (Status s = adopt(value); !s) return s;
  Container& c = *container_;
  std::size_t* slot = nullptr;
  const std::size_t next = c.entries.size();
  if (key.kind_ == Kind::String) {
    auto [it, inserted] = c.string_keys.emplace(*key.string_, next);
    if (!inserted) slot = &it->second;
  } else if (key.kind_ == Kind::Int || key.kind_ == Kind::Bool) {
    auto [it, inserted] = c.int_keys.emplace(key.integer_, next);
    if (!inserted) slot = &it->second;
  }
  if (slot) c.entries[*slot].second = std::move(value);
  else c.entries.emplace_back(std::move(key), std::move(value));
  return {};
}

bool PickleValue::sameKey(const PickleValue& other) const {
  if (kind_ == Kind::String && other.kind_ == Kind::String) return *string_ == *other.string_;
  const bool a = kind_ == Kind::Int || kind_ == Kind::Bool;
  const bool b = other.kind_ == Kind::Int || other.kind_ == Kind::Bool;
  return a && b && integer_ == other.integer_;
}

const PickleValue* PickleValue::find(const std::string& key) const {
  if (kind_ != Kind::Dict) return nullptr;
  auto found = container_->string_keys.find(key);
  return found == container_->string_keys.end() ? nullptr : &container_->entries[found->second].second;
}

std::string PickleValue::typeName() const {
  switch (kind_) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return "list";
    case Kind::Tuple: return "tuple";
    case Kind::Dict: return "dict";
    case Kind::Tensor: return "tensor";
    case Kind::Global: return "global " + toString();
  }
  return "value";
}

}  // namespace streetgan

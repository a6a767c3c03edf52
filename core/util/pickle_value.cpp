#include "core/util/pickle_value.h"

namespace streetgan {

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
  v.string_ = std::move(value);
  return v;
}

PickleValue PickleValue::list(Items items) {
  PickleValue v;
  v.kind_ = Kind::List;
  v.items_ = std::make_shared<Items>(std::move(items));
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
  v.entries_ = std::make_shared<Entries>();
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

bool PickleValue::sameKey(const PickleValue& other) const {
  if (kind_ == Kind::String && other.kind_ == Kind::String) return string_ == other.string_;
  const bool a = kind_ == Kind::Int || kind_ == Kind::Bool;
  const bool b = other.kind_ == Kind::Int || other.kind_ == Kind::Bool;
  return a && b && integer_ == other.integer_;
}

const PickleValue* PickleValue::find(const std::string& key) const {
  if (kind_ != Kind::Dict) return nullptr;
  for (const auto& [k, value] : *entries_)
    if (k.kind_ == Kind::String && k.string_ == key) return &value;
  return nullptr;
}

void PickleValue::set(PickleValue key, PickleValue value) const {
  for (auto& entry : *entries_)
    if (entry.first.sameKey(key)) {
      entry.second = std::move(value);
      return;
    }
  entries_->emplace_back(std::move(key), std::move(value));
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
    case Kind::Global: return "global " + string_;
  }
  return "value";
}

}  // namespace streetgan

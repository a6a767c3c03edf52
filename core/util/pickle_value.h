#pragma once
// PickleValue: one value read from a Python pickle by PickleReader: None, a bool, an integer, a
// float, a string, a list, a tuple, a dict (in insertion order, as Python keeps it) or a tensor.
// Lists and dicts are shared between copies, as the pickle's memo shares them, so an APPEND
// after a memo lookup changes every copy. Nothing here can hold code or an arbitrary object.
#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace streetgan {

class PickleValue {
public:
  enum class Kind { None, Bool, Int, Float, String, List, Tuple, Dict, Tensor, Global };
  using Items = std::vector<PickleValue>;
  using Entries = std::vector<std::pair<PickleValue, PickleValue>>;

  PickleValue() = default;
  static PickleValue boolean(bool value);
  static PickleValue integer(std::int64_t value);
  static PickleValue real(double value);
  static PickleValue string(std::string value);
  static PickleValue list(Items items = {});
  static PickleValue tuple(Items items);
  static PickleValue dict();
  static PickleValue tensor(torch::Tensor value);
  /// A name PickleReader allowed ("torch.FloatStorage"); it never leaves the reader's result
  /// except inside the tuples it reads on the way.
  static PickleValue global(std::string name);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool isString() const { return kind_ == Kind::String; }
  bool isSequence() const { return kind_ == Kind::List || kind_ == Kind::Tuple; }
  bool isDict() const { return kind_ == Kind::Dict; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool isGlobal() const { return kind_ == Kind::Global; }

  bool toBool() const { return integer_ != 0; }
  std::int64_t toInt() const { return integer_; }
  /// An integer, bool, float, or a one-element tensor, as a double.
  double toDouble() const;
  /// A string's text, or a global's name.
  const std::string& toString() const { return string_; }
  const torch::Tensor& toTensor() const { return tensor_; }
  /// The items of a list or tuple (appendable for a list).
  Items& items() const { return *items_; }
  /// The entries of a dict, in insertion order.
  Entries& entries() const { return *entries_; }

  /// A dict's value under the string `key`, or null.
  const PickleValue* find(const std::string& key) const;
  /// Sets `key` in a dict (replacing an equal key, as Python does).
  void set(PickleValue key, PickleValue value) const;
  /// The kind in Python's words ("dict", "list", "tensor", …) for messages.
  std::string typeName() const;
  /// Whether two keys are equal (strings and integers; other kinds never are).
  bool sameKey(const PickleValue& other) const;

private:
  Kind kind_ = Kind::None;
  std::int64_t integer_ = 0;
  double real_ = 0;
  std::string string_;
  std::shared_ptr<Items> items_;
  std::shared_ptr<Entries> entries_;
  torch::Tensor tensor_;
};

}  // namespace streetgan

#pragma once
// PickleValue: one value read from a Python pickle by PickleReader: None, a bool, an integer, a
// float, a string, a list, a tuple, a dict (in insertion order, as Python keeps it) or a tensor.
// Strings, lists and dicts are shared between copies, as the pickle's memo shares them, so a
// memo lookup costs nothing whatever the value's size, and an APPEND after a memo lookup changes
// every copy. Nothing here can hold code or an arbitrary object.
//
// Containers form a tree of bounded depth, never a cycle: once a list, tuple or dict has been put
// inside another it is sealed, and append() and set() refuse to change it, to put a container
// inside itself, or to nest deeper than kMaxDepth; each says why in its Status. Values are freed
// without recursion, so no nesting can exhaust the stack.
#include "core/util/result.h"

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
  /// The deepest nesting of containers a value may have (a torch.save checkpoint needs about 6).
  static constexpr int kMaxDepth = 100;

  PickleValue() = default;
  static PickleValue boolean(bool value);
  static PickleValue integer(std::int64_t value);
  static PickleValue real(double value);
  static PickleValue string(std::string value);
  /// A list or tuple of `items` (which become sealed). Its depth() may exceed kMaxDepth: the
  /// reader checks it before keeping the value.
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
  /// A string's text, or a global's name (empty for other kinds).
  const std::string& toString() const;
  const torch::Tensor& toTensor() const { return tensor_; }
  /// The items of a list or tuple (empty for other kinds).
  const Items& items() const;
  /// The entries of a dict, in insertion order (empty for other kinds).
  const Entries& entries() const;
  /// How deeply containers nest in this value: 0 for a scalar, 1 for a list of scalars.
  int depth() const;

  /// Appends `item` to a list that is not sealed.
  Status append(PickleValue item) const;
  /// Sets `key` in a dict that is not sealed (replacing an equal key, as Python does).
  Status set(PickleValue key, PickleValue value) const;
  /// A dict's value under the string `key`, or null.
  const PickleValue* find(const std::string& key) const;
  /// The kind in Python's words ("dict", "list", "tensor", …) for messages.
  std::string typeName() const;
  /// Whether two keys are equal (strings and integers; other kinds never are).
  bool sameKey(const PickleValue& other) const;

private:
  struct Container;
  Status adopt(const PickleValue& child) const;

  Kind kind_ = Kind::None;
  std::int64_t integer_ = 0;
  double real_ = 0;
  std::shared_ptr<const std::string> string_;
  std::shared_ptr<Container> container_;
  torch::Tensor tensor_;
};

}  // namespace streetgan

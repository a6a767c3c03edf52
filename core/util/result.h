#pragma once
// Result<T>: the value of an operation that can fail for a reason the user must read (a bad file,
// key or value), or the one-line message saying why it failed, and its kind: the input's fault or
// the machine's, where a caller acts on the difference (the CLI's exit 2 or 1). Used instead of
// exceptions for every recoverable failure in core; exceptions are left to programming errors.
#include <optional>
#include <string>
#include <utility>

namespace streetgan {

/// What a failure was: the input given (a config, option, value or folder the user must change) or
/// the machine (a file, device or peer that refused what was asked of it).
enum class ErrorKind { Input, Machine };

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::Input;
};

inline Error makeError(std::string message, ErrorKind kind = ErrorKind::Input) {
  return Error{std::move(message), kind};
}

template <class T>
class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)), kind_(error.kind) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  const std::string& error() const { return error_; }
  /// The kind of the failure (Input when it did not fail).
  ErrorKind errorKind() const { return kind_; }

private:
  std::optional<T> value_;
  std::string error_;
  ErrorKind kind_ = ErrorKind::Input;
};

template <>
class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : failed_(true), error_(std::move(error.message)), kind_(error.kind) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }
  /// The kind of the failure (Input when it did not fail).
  ErrorKind errorKind() const { return kind_; }

private:
  bool failed_ = false;
  std::string error_;
  ErrorKind kind_ = ErrorKind::Input;
};

using Status = Result<void>;

}  // namespace streetgan

#pragma once
// Result<T>: the value of an operation that can fail for a reason the user must read (a bad file,
// key or value), or the one-line message saying why it failed. Used instead of exceptions for
// every recoverable failure in core; exceptions are left to programming errors.
#include <optional>
#include <string>
#include <utility>

namespace streetgan {

struct Error {
  std::string message;
};

inline Error makeError(std::string message) { return Error{std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error.message)) {}

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

private:
  std::optional<T> value_;
  std::string error_;
};

template <>
class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : failed_(true), error_(std::move(error.message)) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }

private:
  bool failed_ = false;
  std::string error_;
};

using Status = Result<void>;

}  // namespace streetgan

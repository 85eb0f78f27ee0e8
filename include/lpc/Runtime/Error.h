//===- Error.h - errors without exceptions for the lpc runtime --*- C++ -*-===//
//
// The runtime is built without exceptions (as LLVM is) and without LLVM, so it
// carries its own small error types, shaped like llvm::Error / llvm::Expected:
//
//   if (lpc::rt::Error e = writeSafetensors(path, tensors, meta))
//     return fail(e.message());        // an Error converts to true on failure
//   lpc::rt::Expected<IdxImages> images = readIdxImages(path);
//   if (!images)                       // an Expected converts to true on success
//     return fail(images.error().message());
//   use(images->count);
//
// Messages name the file and the problem ("<path>: truncated: ..."). Unlike
// LLVM's types these are not "checked": dropping one is not fatal, but both
// are [[nodiscard]] so the compiler warns about ignored results.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_ERROR_H
#define LPC_RUNTIME_ERROR_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace lpc {
namespace rt {

/// Success (empty) or a failure with a message.
class [[nodiscard]] Error {
public:
  /// Success.
  Error() = default;
  static Error success() { return Error(); }
  /// A failure; the message should name the file (or object) and the problem.
  static Error make(std::string message) {
    Error e;
    e.failed_ = true;
    e.message_ = std::move(message);
    return e;
  }

  /// True on failure (as llvm::Error).
  explicit operator bool() const { return failed_; }
  bool ok() const { return !failed_; }
  const std::string &message() const { return message_; }

  /// The same error with `prefix` put in front of the message ("ctx: msg").
  Error withContext(const std::string &prefix) const {
    return failed_ ? make(prefix + ": " + message_) : Error();
  }

private:
  bool failed_ = false;
  std::string message_;
};

/// A failure with the message "<subject>: <problem>".
inline Error makeError(const std::string &subject, const std::string &problem) {
  return Error::make(subject.empty() ? problem : subject + ": " + problem);
}

/// A value of type T or a failure.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  /// `error` must be a failure.
  Expected(Error error) : error_(std::move(error)) {
    assert(!error_.ok() && "Expected built from a success Error");
    if (error_.ok())
      error_ = Error::make("internal error: Expected built from success");
  }

  /// True on success (as llvm::Expected).
  explicit operator bool() const { return value_.has_value(); }
  bool ok() const { return value_.has_value(); }

  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T &get() { return *value_; }
  const T &get() const { return *value_; }
  /// Moves the value out (only on success).
  T take() { return std::move(*value_); }

  /// The failure (a success Error when this holds a value).
  const Error &error() const { return error_; }
  Error takeError() { return std::move(error_); }

private:
  std::optional<T> value_;
  Error error_;
};

} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_ERROR_H

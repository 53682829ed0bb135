// turnout::Error: the one exception type turnout throws, with a kind that the
// Python bindings map to a built-in exception type.
//
//   TURNOUT_CHECK(n >= 0, ErrorKind::Index, "select(): index ", n,
//                 " is negative; pass an index in [0, ", size, ")");
//   TURNOUT_INTERNAL_ASSERT(table != nullptr, "operator ", name, " has no table");
//   TURNOUT_WARN("Overriding a previously registered kernel ...");
//
// Message parts are streamed with operator<< and joined only when the check
// fails, so a check on the hot path costs one predictable branch.
//
// Thread safety: the warning handler may be set and used from any thread.
#ifndef TURNOUT_DISPATCHER_CORE_ERROR_H_
#define TURNOUT_DISPATCHER_CORE_ERROR_H_

#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <utility>

namespace turnout {

/// What kind of mistake an Error reports. Python sees them as ValueError,
/// TypeError, IndexError, NotImplementedError and RuntimeError.
enum class ErrorKind {
  InvalidArgument,
  Type,
  Index,
  NotImplemented,
  Internal,
  Load,  // a shared library could not be loaded (Python: OSError)
};

/// Name of a kind, e.g. "InvalidArgument".
const char* toString(ErrorKind kind);

/// The exception turnout throws for every error a caller can cause, and for
/// broken invariants (kind Internal).
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}

  ErrorKind kind() const noexcept { return kind_; }
  /// The message alone, without the kind.
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  ErrorKind kind_;
  std::string message_;
};

/// Receives every warning turnout emits. The default prints
/// "turnout warning: MESSAGE" to stderr.
using WarningHandler = std::function<void(const std::string& message)>;

/// Installs `handler` (an empty one restores the default) and returns the
/// previous one. Tests use it to capture warnings.
WarningHandler setWarningHandler(WarningHandler handler);

/// Sends `message` to the current warning handler.
void warn(const std::string& message);

// Implementation details.
namespace detail {

template <typename... Parts>
std::string joinParts(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

[[noreturn]] void throwError(ErrorKind kind, std::string message);
[[noreturn]] void throwInternal(const char* file, int line, const char* cond,
                                std::string message);

}  // namespace detail
}  // namespace turnout

/// Throws turnout::Error(kind, parts...) when `cond` is false. For mistakes a
/// caller made: the parts should say what, where, and how to fix it.
#define TURNOUT_CHECK(cond, kind, ...)                                     \
  do {                                                                     \
    if (__builtin_expect(!(cond), 0)) {                                    \
      ::turnout::detail::throwError(                                       \
          (kind), ::turnout::detail::joinParts(__VA_ARGS__));              \
    }                                                                      \
  } while (false)

/// Throws an Internal error when `cond` is false: a broken invariant, which is
/// a turnout bug. The message says so and names the file and line.
#define TURNOUT_INTERNAL_ASSERT(cond, ...)                                 \
  do {                                                                     \
    if (__builtin_expect(!(cond), 0)) {                                    \
      ::turnout::detail::throwInternal(                                    \
          __FILE__, __LINE__, #cond,                                       \
          ::turnout::detail::joinParts("" __VA_OPT__(, ) __VA_ARGS__));    \
    }                                                                      \
  } while (false)

/// Sends the joined parts to the warning handler.
#define TURNOUT_WARN(...) \
  ::turnout::warn(::turnout::detail::joinParts(__VA_ARGS__))

#endif  // TURNOUT_DISPATCHER_CORE_ERROR_H_

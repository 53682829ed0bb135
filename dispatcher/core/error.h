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
// An error whose fix is a registration carries that fix as data too (a
// FixIt), so that each front end can spell it in its own language: the
// message spells it in C++, and the Python bindings swap in the Python
// spelling (bindings/errors.cc).
//
// Thread safety: the warning handler may be set and used from any thread.
#ifndef TURNOUT_DISPATCHER_CORE_ERROR_H_
#define TURNOUT_DISPATCHER_CORE_ERROR_H_

#include <cstddef>
#include <exception>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
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

/// A fix an error proposes, as data: a registration the user can add. The
/// error's message shows it in C++ (`cpp`); a front end in another language
/// spells the same fix from the other fields.
///
///   FixIt{FixIt::Action::RegisterKernel, "myops", "scale", "CPU", "",
///         "TURNOUT_LIBRARY_IMPL(myops, CPU, m) { m.impl(...); }"}
struct FixIt {
  enum class Action {
    /// Register a kernel of `op` for `key` (namespace `ns`).
    RegisterKernel,
    /// Define `op` with `schema` in a FRAGMENT (or the DEF) library of `ns`.
    DefineOperator,
    /// `ns` already has its one DEF library: define more operators in a
    /// FRAGMENT library of `ns`, register kernels in an IMPL one.
    UseFragmentOrImpl,
  };

  Action action;
  /// The namespace, e.g. "myops".
  std::string ns;
  /// The operator without its namespace ("scale", "add.Tensor"); empty for
  /// UseFragmentOrImpl.
  std::string op;
  /// RegisterKernel: the dispatch key's name, e.g. "CPU".
  std::string key;
  /// DefineOperator: the schema to define, e.g. "scale(Tensor x) -> Tensor".
  std::string schema;
  /// The fix in C++, one or more lines without indentation.
  std::string cpp;
};

/// The exception turnout throws for every error a caller can cause, and for
/// broken invariants (kind Internal).
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}

  /// An error with a fix-it section: its message is `before`, then the lines
  /// of `fix.cpp` each indented by two spaces, then `after`.
  ///
  ///   throw Error(ErrorKind::NotImplemented,
  ///               "... has no kernel. To fix it, register one:\n", fix, "");
  Error(ErrorKind kind, std::string before, FixIt fix, std::string_view after);

  ErrorKind kind() const noexcept { return kind_; }
  /// The message alone, without the kind.
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

  /// The fix this error proposes as data, if any.
  const std::optional<FixIt>& fixIt() const noexcept { return fix_; }

  /// The message with its fix-it section (the indented C++ lines) replaced
  /// by `section`, taken verbatim; the message itself when there is no
  /// fix-it.
  std::string messageWithFixIt(std::string_view section) const;

  /// The same error, fix-it included, with `prefix` put before its message
  /// (context added by a caller, e.g. the graph node that failed).
  Error withPrefix(std::string_view prefix) const;

  /// An error whose message is `message` followed by `hint`: advice beyond
  /// what c10 says for the same mistake. turnout's own API shows the whole
  /// message; the torch-named Python API (`_dispatch_library`, ...) reports
  /// withoutHint(), so that its errors keep the shape of torch's.
  ///
  ///   throw Error::withHint(ErrorKind::InvalidArgument,
  ///                         "Tried to register ... Original registration: x",
  ///                         "\nEach operator is defined once; did you mean "
  ///                         "impl()?");
  static Error withHint(ErrorKind kind, std::string message,
                        std::string_view hint);
  bool hasHint() const noexcept { return hint_begin_ != std::string::npos; }
  /// The same error without its hint (itself when it has none).
  Error withoutHint() const;

 private:
  ErrorKind kind_;
  std::string message_;
  std::optional<FixIt> fix_;
  // Where the fix-it section lies in message_ (when fix_ is set).
  std::size_t fix_begin_ = 0;
  std::size_t fix_size_ = 0;
  // Where the hint begins in message_ (it runs to the end); npos: no hint.
  std::size_t hint_begin_ = std::string::npos;
};

/// Receives every warning turnout emits. The default prints
/// "turnout warning: MESSAGE" to stderr.
using WarningHandler = std::function<void(const std::string& message)>;

/// Installs `handler` (an empty one restores the default) and returns the
/// previous one. Tests use it to capture warnings.
WarningHandler setWarningHandler(WarningHandler handler);

/// Sends `message` to the current warning handler.
void warn(const std::string& message);

/// What the default handler does: prints "turnout warning: MESSAGE" to
/// stderr. For handlers that pass some warnings on unchanged.
void printWarning(const std::string& message);

/// For excerpts of a user's text in messages (the parsers' "found 'x'" and
/// caret lines), which must never cut a UTF-8 character in two: Python
/// cannot decode such a message.
///
/// The bytes of the character starting at byte `pos` of `text`: a whole
/// UTF-8 sequence, or the one byte at `pos` when no valid sequence starts
/// there; empty at or past the end.
std::string_view utf8CharAt(std::string_view text, size_t pos);

/// How many characters `text` holds (a byte of no valid UTF-8 sequence
/// counts as one): the column a caret under the end of `text` goes in.
size_t utf8Length(std::string_view text);

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

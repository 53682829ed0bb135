#include "dispatcher/core/error.h"

#include <iostream>
#include <mutex>

namespace turnout {

const char* toString(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument:
      return "InvalidArgument";
    case ErrorKind::Type:
      return "Type";
    case ErrorKind::Index:
      return "Index";
    case ErrorKind::NotImplemented:
      return "NotImplemented";
    case ErrorKind::Internal:
      return "Internal";
    case ErrorKind::Load:
      return "Load";
  }
  return "Unknown";
}

Error::Error(ErrorKind kind, std::string before, FixIt fix,
             std::string_view after)
    : kind_(kind), message_(std::move(before)) {
  fix_begin_ = message_.size();
  std::string_view code = fix.cpp;
  while (!code.empty()) {
    std::size_t end = code.find('\n');
    std::string_view line = code.substr(0, end);
    message_.append("  ").append(line).append("\n");
    code = end == std::string_view::npos ? std::string_view()
                                         : code.substr(end + 1);
  }
  fix_size_ = message_.size() - fix_begin_;
  message_.append(after);
  fix_ = std::move(fix);
}

std::string Error::messageWithFixIt(std::string_view section) const {
  if (!fix_) return message_;
  std::string out = message_.substr(0, fix_begin_);
  out.append(section);
  out.append(message_, fix_begin_ + fix_size_, std::string::npos);
  return out;
}

Error Error::withPrefix(std::string_view prefix) const {
  Error out = *this;
  out.message_.insert(0, prefix);
  out.fix_begin_ += prefix.size();
  if (out.hasHint()) out.hint_begin_ += prefix.size();
  return out;
}

Error Error::withHint(ErrorKind kind, std::string message,
                      std::string_view hint) {
  Error out(kind, std::move(message));
  out.hint_begin_ = out.message_.size();
  out.message_.append(hint);
  return out;
}

Error Error::withoutHint() const {
  Error out = *this;
  if (out.hasHint()) {
    out.message_.resize(out.hint_begin_);
    out.hint_begin_ = std::string::npos;
  }
  return out;
}

namespace {

// Never destroyed (neither is below): a thread may warn while the process
// exits, after static destructors have run.
std::mutex& handlerMutex() {
  static auto* const mu = new std::mutex;
  return *mu;
}

WarningHandler& currentHandler() {
  static auto* const handler = new WarningHandler;
  return *handler;
}

}  // namespace

WarningHandler setWarningHandler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(handlerMutex());
  WarningHandler previous = std::move(currentHandler());
  currentHandler() = std::move(handler);
  return previous;
}

void warn(const std::string& message) {
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(handlerMutex());
    handler = currentHandler();
  }
  // Called outside the lock so that a handler may itself warn or set a
  // handler without deadlocking.
  if (handler) {
    handler(message);
  } else {
    printWarning(message);
  }
}

void printWarning(const std::string& message) {
  std::cerr << "turnout warning: " << message << std::endl;
}

namespace detail {

void throwError(ErrorKind kind, std::string message) {
  throw Error(kind, std::move(message));
}

void throwInternal(const char* file, int line, const char* cond,
                   std::string message) {
  std::string full = joinParts("Internal assertion failed at ", file, ":", line,
                               ": ", cond);
  if (!message.empty()) full += ": " + message;
  full +=
      "\nThis is a bug in turnout, not in your code; please report it with "
      "this message.";
  throw Error(ErrorKind::Internal, std::move(full));
}

}  // namespace detail
std::string_view utf8CharAt(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {};
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  size_t n = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2
                           : lead >= 0xe0 && lead <= 0xef ? 3
                           : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                          : 0;
  if (n <= 1 || pos + n > text.size()) return text.substr(pos, 1);
  for (size_t i = 1; i < n; ++i) {
    if ((byte(pos + i) & 0xc0) != 0x80) return text.substr(pos, 1);
  }
  // Overlong forms, surrogates and code points past U+10FFFF.
  const unsigned char second = byte(pos + 1);
  if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) ||
      (lead == 0xf0 && second < 0x90) || (lead == 0xf4 && second > 0x8f)) {
    return text.substr(pos, 1);
  }
  return text.substr(pos, n);
}

size_t utf8Length(std::string_view text) {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size(); pos += utf8CharAt(text, pos).size()) {
    ++count;
  }
  return count;
}

}  // namespace turnout

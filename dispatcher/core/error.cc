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

namespace {

std::mutex& handlerMutex() {
  static std::mutex mu;
  return mu;
}

WarningHandler& currentHandler() {
  static WarningHandler handler;
  return handler;
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
    std::cerr << "turnout warning: " << message << std::endl;
  }
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
}  // namespace turnout

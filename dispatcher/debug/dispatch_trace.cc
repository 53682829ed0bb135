#include "dispatcher/debug/dispatch_trace.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/debug/counters.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace {

struct Sink {
  std::FILE* file = nullptr;  // used when stream and callback are unset
  std::ostream* stream = nullptr;
  DispatchTraceCallback callback;
};

// Guards the sink and serialises lines.
std::mutex& sinkMutex() {
  static auto* const mu = new std::mutex();
  return *mu;
}
// Guarded by sinkMutex().
Sink& sink() {
  static auto* const s = new Sink();
  return *s;
}

// True while this thread writes a line: dispatches a callback makes are not
// traced (they would re-enter the sink's lock).
thread_local bool in_sink = false;
thread_local int32_t thread_number = -1;
std::atomic<int32_t> next_thread_number{0};

uint32_t threadNumber() {
  if (thread_number < 0) {
    thread_number = next_thread_number.fetch_add(1, std::memory_order_relaxed);
  }
  return static_cast<uint32_t>(thread_number);
}

void setSink(Sink s) {
  std::lock_guard<std::mutex> lock(sinkMutex());
  sink() = std::move(s);
}

void write(const DispatchTraceEvent& event) {
  std::string line = formatDispatchTraceLine(event);
  std::lock_guard<std::mutex> lock(sinkMutex());
  in_sink = true;
  struct Reset {
    ~Reset() { in_sink = false; }
  } reset;
  const Sink& s = sink();
  if (s.callback) {
    s.callback(event, line);
  } else if (s.stream != nullptr) {
    line += '\n';
    s.stream->write(line.data(), static_cast<std::streamsize>(line.size()));
    s.stream->flush();
  } else {
    std::FILE* f = s.file != nullptr ? s.file : stderr;
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), f);
    std::fflush(f);
  }
}

// The call path reaches the trace only through this observer
// (dispatch_observer.h), installed when the trace is switched on.
struct TraceObserver final : detail::DispatchObserver {
  void onDispatch(const OperatorHandle& op, DispatchKeySet ks, DispatchKey key,
                  detail::CallKind kind, uint32_t depth) override {
    if (in_sink) return;
    // counters.h: "dispatch.backend_fallbacks", seen while the trace is on.
    static Counter& fallbacks_taken = counter(kCounterBackendFallbacks);
    DispatchTraceEvent event{toString(op.operator_name()),
                             kind,
                             ks,
                             key,
                             "",
                             "",
                             depth,
                             threadNumber()};
    {
      // The computed entries change only under this lock. The table the call
      // uses was read before: a registration racing with this call may make
      // the line name the newer entry.
      std::lock_guard<std::mutex> lock(Dispatcher::singleton().registryMutex());
      const ComputedEntry& entry = op.entry()->computedEntry(key);
      event.entry_kind = toString(entry.kind);
      if (entry.kind == EntryKind::BackendFallback) fallbacks_taken.add();
      if (entry.source != nullptr) {
        event.site = entry.source->kernel.isFallthrough()
                         ? "fallthrough " + entry.source->debug
                         : entry.source->debug;
      }
    }
    write(event);
  }
};

}  // namespace

void setDispatchTraceEnabled(bool on) {
  if (on) {
    static auto* const observer = new TraceObserver();
    detail::installDispatchObserver(detail::kTraceOn, observer);
    detail::dispatch_observers.fetch_or(detail::kTraceOn,
                                        std::memory_order_relaxed);
  } else {
    detail::dispatch_observers.fetch_and(~detail::kTraceOn,
                                         std::memory_order_relaxed);
  }
}

bool isDispatchTraceEnabled() {
  return (detail::dispatch_observers.load(std::memory_order_relaxed) &
          detail::kTraceOn) != 0;
}

void setDispatchTraceSink(std::FILE* file) {
  TURNOUT_CHECK(file != nullptr, ErrorKind::InvalidArgument,
                "setDispatchTraceSink: the FILE* is null; pass an open file "
                "(stderr is the default)");
  Sink s;
  s.file = file;
  setSink(std::move(s));
}

void setDispatchTraceSink(std::ostream& out) {
  Sink s;
  s.stream = &out;
  setSink(std::move(s));
}

void setDispatchTraceSink(DispatchTraceCallback callback) {
  TURNOUT_CHECK(static_cast<bool>(callback), ErrorKind::InvalidArgument,
                "setDispatchTraceSink: the callback is empty; pass a callable "
                "taking (const DispatchTraceEvent&, const std::string& line)");
  Sink s;
  s.callback = std::move(callback);
  setSink(std::move(s));
}

std::string formatDispatchTraceLine(const DispatchTraceEvent& event) {
  std::string line(2 * static_cast<size_t>(event.depth), ' ');
  if (event.call == detail::CallKind::UserScope) {
    return line + "scope " + event.op;
  }
  if (event.call == detail::CallKind::Handler) {
    return line + "[" + toString(event.key) + "] " + event.op + " -> " +
           event.site;
  }
  line += event.op;
  line += ' ';
  line += detail::toString(event.call);
  line += ' ';
  line += toString(event.key_set);
  line += " -> ";
  line += toString(event.key);
  line += " [";
  line += event.entry_kind;
  line += ']';
  if (!event.site.empty()) {
    line += ' ';
    line += event.site;
  }
  return line;
}

struct DispatchTraceGuard::Saved {
  bool was_on;
  Sink sink;
};

DispatchTraceGuard::DispatchTraceGuard() {
  {
    std::lock_guard<std::mutex> lock(sinkMutex());
    saved_ = new Saved{isDispatchTraceEnabled(), sink()};
  }
  setDispatchTraceEnabled(true);
}

// A delegating constructor that throws runs the destructor, which restores
// the previous state: a rejected sink leaves nothing changed.
DispatchTraceGuard::DispatchTraceGuard(std::FILE* file) : DispatchTraceGuard() {
  setDispatchTraceSink(file);
}

DispatchTraceGuard::DispatchTraceGuard(std::ostream& out)
    : DispatchTraceGuard() {
  setDispatchTraceSink(out);
}

DispatchTraceGuard::DispatchTraceGuard(DispatchTraceCallback callback)
    : DispatchTraceGuard() {
  setDispatchTraceSink(std::move(callback));
}

DispatchTraceGuard::~DispatchTraceGuard() {
  if (saved_ == nullptr) return;
  setDispatchTraceEnabled(saved_->was_on);
  setSink(std::move(saved_->sink));
  delete saved_;
  saved_ = nullptr;
}

void traceHandler(const OperatorHandle& op, DispatchKey key,
                  std::string_view handler) {
  if (!isDispatchTraceEnabled() || in_sink) return;
  const detail::ObservedScope* scope = detail::ObservedScope::current();
  DispatchTraceEvent event{toString(op.operator_name()),
                           detail::CallKind::Handler,
                           DispatchKeySet(key),
                           key,
                           "",
                           std::string(handler),
                           scope != nullptr ? scope->depth() + 1 : 0,
                           threadNumber()};
  write(event);
}

namespace detail {

void traceScope(const std::string& name, uint32_t depth) {
  if (in_sink) return;
  DispatchTraceEvent event{name,
                           CallKind::UserScope,
                           DispatchKeySet(),
                           DispatchKey::Undefined,
                           "",
                           "",
                           depth,
                           threadNumber()};
  write(event);
}

// TURNOUT_DISPATCH_TRACE set to anything but "" or "0" turns the trace on
// as the process starts (this library is linked with alwayslink for that).
const bool trace_from_environment = [] {
  const char* v = std::getenv("TURNOUT_DISPATCH_TRACE");
  const bool on = v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  if (on) setDispatchTraceEnabled(true);
  return on;
}();

}  // namespace detail
}  // namespace turnout

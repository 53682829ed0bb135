#include "dispatcher/debug/profiler.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/thread_local.h"
#include "dispatcher/debug/dispatch_trace.h"
#include "dispatcher/operator_entry.h"
#include "nlohmann/json.hpp"

namespace turnout {
namespace {

// One finished span as the recording thread stores it: the operator is kept
// as its never-freed entry and named at stop().
struct Span {
  const void* entry;
  std::string name;  // RecordScope only
  DispatchKey key;
  detail::CallKind kind;
  uint32_t depth;
  int64_t start_ns;
  int64_t end_ns;
  int64_t self_ns;
  int64_t python_ns;
};

constexpr size_t kChunkSpans = 1024;

// Chunks never move, so stop() can read a thread's spans while the thread
// appends more: it reads the first `count` only, which the owner published
// with a release store after writing them.
struct Chunk {
  Span spans[kChunkSpans];
  std::atomic<Chunk*> next{nullptr};
};

struct ThreadBuffer {
  ThreadBuffer(uint32_t s, uint32_t t) : session(s), thread(t) {}
  ~ThreadBuffer() {
    Chunk* c = head.next.load(std::memory_order_relaxed);
    while (c != nullptr) {
      Chunk* next = c->next.load(std::memory_order_relaxed);
      delete c;
      c = next;
    }
  }
  const uint32_t session;
  const uint32_t thread;
  Chunk head;
  // Owner thread only.
  Chunk* tail = &head;
  size_t tail_used = 0;
  // Spans written and visible to stop().
  std::atomic<size_t> count{0};
};

struct Sessions {
  std::mutex mu;
  uint32_t last_session = 0;  // guarded by mu
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;  // guarded by mu
};

Sessions& sessions() {
  static auto* const s = new Sessions();
  return *s;
}

// Written under Sessions::mu; read by the call path without it.
std::atomic<uint32_t> active_session{0};

// The calling thread's buffer for the session it last recorded in (owned
// here, and by the session until stop()), and a plain pointer to it that the
// recording path reads with no thread_local wrapper call.
thread_local std::shared_ptr<ThreadBuffer> thread_buffer;
TURNOUT_THREAD_LOCAL ThreadBuffer* thread_buffer_raw = nullptr;

ThreadBuffer* bufferFor(uint32_t session) {
  ThreadBuffer* b = thread_buffer_raw;
  if (__builtin_expect(b != nullptr && b->session == session, 1)) return b;
  Sessions& s = sessions();
  std::lock_guard<std::mutex> lock(s.mu);
  if (active_session.load(std::memory_order_relaxed) != session) return nullptr;
  auto fresh = std::make_shared<ThreadBuffer>(
      session, static_cast<uint32_t>(s.buffers.size()));
  s.buffers.push_back(fresh);
  thread_buffer = std::move(fresh);
  thread_buffer_raw = thread_buffer.get();
  return thread_buffer_raw;
}

std::string formatDuration(double ns) {
  char buf[32];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0fns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.3fus", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buf, sizeof buf, "%.3fms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.3fs", ns / 1e9);
  }
  return buf;
}

// ---- Chrome trace JSON, through nlohmann/json -------------------------------

// ordered_json: an event's fields stay in the order they are set.
using Json = nlohmann::ordered_json;

// Integer nanoseconds as the trace's microseconds. The quotient, correctly
// rounded, is the double nearest the exact ns / 1000, and nlohmann writes the
// shortest text that reads back as that double ("1234.567", "0.5", "0.0"):
// the exact decimal below 10^15 ns (11 days), and what reading the exact
// decimal would give up to 2^53 ns. So spans nested in nanoseconds read back
// nested the same way in microseconds.
double micros(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// One event as compact JSON; a name that is not UTF-8 (RecordScope takes any
// bytes) gets U+FFFD where it breaks, rather than an exception.
std::string eventJson(const Json& event) {
  return event.dump(-1, ' ', /*ensure_ascii=*/false,
                    Json::error_handler_t::replace);
}

enum class SortBy { Total, Self, Python, Calls, Avg, Name };

SortBy parseSortBy(std::string_view s) {
  if (s == "total" || s == "cpu_time_total") return SortBy::Total;
  if (s == "self" || s == "self_cpu_time_total") return SortBy::Self;
  if (s == "python") return SortBy::Python;
  if (s == "calls" || s == "count") return SortBy::Calls;
  if (s == "avg" || s == "cpu_time") return SortBy::Avg;
  if (s == "name") return SortBy::Name;
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "Profiler: sort_by='", s,
                "' is not a column; use one of 'total', 'self', 'python', "
                "'calls', 'avg', 'name' (or PyTorch's 'cpu_time_total', "
                "'self_cpu_time_total', 'count')");
}

std::string keyColumn(const ProfileStats& s) {
  return s.is_scope ? "-" : toString(s.key);
}

// The call path reaches the profiler only through this observer
// (dispatch_observer.h), installed by each Profiler as it starts.
class ProfilerObserver final : public detail::DispatchObserver {
 public:
  uint32_t session() override {
    return active_session.load(std::memory_order_relaxed);
  }
  void onSpan(uint32_t session, const void* op_entry, DispatchKey key,
              detail::CallKind kind, const std::string* user_name,
              uint32_t depth, int64_t start_ns, int64_t end_ns, int64_t self_ns,
              int64_t python_ns) override;
};

void ProfilerObserver::onSpan(uint32_t session, const void* op_entry,
                              DispatchKey key, detail::CallKind kind,
                              const std::string* user_name, uint32_t depth,
                              int64_t start_ns, int64_t end_ns,
                              int64_t self_ns, int64_t python_ns) {
  if (active_session.load(std::memory_order_relaxed) != session) return;
  ThreadBuffer* b = bufferFor(session);
  if (b == nullptr) return;
  if (b->tail_used == kChunkSpans) {
    Chunk* fresh = new Chunk();
    // Release: stop() reaches the chunk only through a count published
    // after this store.
    b->tail->next.store(fresh, std::memory_order_release);
    b->tail = fresh;
    b->tail_used = 0;
  }
  Span& span = b->tail->spans[b->tail_used++];
  span.entry = op_entry;
  if (__builtin_expect(user_name != nullptr, 0)) {
    span.name = *user_name;
  } else if (!span.name.empty()) {
    span.name.clear();
  }
  span.key = key;
  span.kind = kind;
  span.depth = depth;
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  span.self_ns = self_ns;
  span.python_ns = python_ns;
  // Release: the span's fields happen before stop() reads them.
  b->count.store(b->count.load(std::memory_order_relaxed) + 1,
                 std::memory_order_release);
}

}  // namespace

Profiler::Profiler() {
  Sessions& s = sessions();
  std::lock_guard<std::mutex> lock(s.mu);
  TURNOUT_CHECK(active_session.load(std::memory_order_relaxed) == 0,
                ErrorKind::InvalidArgument,
                "Profiler: another Profiler is already running; one records "
                "every thread's calls, so stop() it (or let it go out of "
                "scope) before starting a new one");
  if (++s.last_session == 0) ++s.last_session;
  session_ = s.last_session;
  s.buffers.clear();
  start_ns_ = detail::observerNow();
  static auto* const observer = new ProfilerObserver();
  detail::installDispatchObserver(detail::kProfilerOn, observer);
  active_session.store(session_, std::memory_order_relaxed);
  detail::dispatch_observers.fetch_or(detail::kProfilerOn,
                                      std::memory_order_relaxed);
}

Profiler::~Profiler() { stop(); }

void Profiler::stop() {
  if (session_ == 0) return;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    Sessions& s = sessions();
    std::lock_guard<std::mutex> lock(s.mu);
    active_session.store(0, std::memory_order_relaxed);
    detail::dispatch_observers.fetch_and(~detail::kProfilerOn,
                                         std::memory_order_relaxed);
    buffers.swap(s.buffers);
  }
  absl::flat_hash_map<const void*, std::string> names;
  for (const std::shared_ptr<ThreadBuffer>& b : buffers) {
    const size_t n = b->count.load(std::memory_order_acquire);
    const Chunk* chunk = &b->head;
    for (size_t i = 0; i < n; ++i) {
      if (i > 0 && i % kChunkSpans == 0) {
        chunk = chunk->next.load(std::memory_order_acquire);
      }
      const Span& span = chunk->spans[i % kChunkSpans];
      ProfileEvent e;
      if (span.entry != nullptr) {
        auto it = names.find(span.entry);
        if (it == names.end()) {
          it = names
                   .emplace(span.entry,
                            toString(static_cast<const OperatorEntry*>(span.entry)
                                         ->operator_name()))
                   .first;
        }
        e.name = it->second;
      } else {
        e.name = span.name;
      }
      e.key = span.key;
      e.call = span.kind;
      e.thread = b->thread;
      e.depth = span.depth;
      e.start_ns = span.start_ns - start_ns_;
      e.end_ns = span.end_ns - start_ns_;
      e.self_ns = span.self_ns;
      e.python_ns = span.python_ns;
      events_.push_back(std::move(e));
    }
  }
  std::sort(events_.begin(), events_.end(),
            [](const ProfileEvent& a, const ProfileEvent& b) {
              if (a.thread != b.thread) return a.thread < b.thread;
              if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
              return a.depth < b.depth;
            });
  session_ = 0;
}

void Profiler::checkStopped(const char* what) const {
  TURNOUT_CHECK(session_ == 0, ErrorKind::InvalidArgument, "Profiler::", what,
                ": the profiler is still running; call stop() first");
}

const std::vector<ProfileEvent>& Profiler::events() const {
  checkStopped("events");
  return events_;
}

std::vector<ProfileStats> Profiler::stats(std::string_view sort_by) const {
  checkStopped("stats");
  const SortBy order = parseSortBy(sort_by);
  std::map<std::pair<std::string, int>, ProfileStats> rows;
  for (const ProfileEvent& e : events_) {
    const bool scope = e.call == detail::CallKind::UserScope;
    ProfileStats& s = rows[{e.name, scope ? -1 : static_cast<int>(e.key)}];
    if (s.calls == 0) {
      s.name = e.name;
      s.key = e.key;
      s.is_scope = scope;
      s.min_depth = e.depth;
      s.max_depth = e.depth;
    }
    ++s.calls;
    s.total_ns += e.end_ns - e.start_ns;
    s.self_ns += e.self_ns;
    s.python_ns += e.python_ns;
    s.min_depth = std::min(s.min_depth, e.depth);
    s.max_depth = std::max(s.max_depth, e.depth);
  }
  std::vector<ProfileStats> out;
  out.reserve(rows.size());
  for (auto& [k, s] : rows) out.push_back(std::move(s));
  // Stable over the (name, key) order of the map: ties list by name.
  std::stable_sort(out.begin(), out.end(),
                   [order](const ProfileStats& a, const ProfileStats& b) {
                     switch (order) {
                       case SortBy::Total:
                         return a.total_ns > b.total_ns;
                       case SortBy::Self:
                         return a.self_ns > b.self_ns;
                       case SortBy::Python:
                         return a.python_ns > b.python_ns;
                       case SortBy::Calls:
                         return a.calls > b.calls;
                       case SortBy::Avg:
                         return a.total_ns * b.calls > b.total_ns * a.calls;
                       case SortBy::Name:
                         return false;
                     }
                     return false;
                   });
  return out;
}

std::string Profiler::table(std::string_view sort_by, int row_limit) const {
  std::vector<ProfileStats> rows = stats(sort_by);
  int64_t self_sum = 0;
  for (const ProfileStats& s : rows) self_sum += s.self_ns;
  const size_t shown = row_limit < 0 ? rows.size()
                                     : std::min(rows.size(),
                                                static_cast<size_t>(row_limit));
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"Name", "Key", "Calls", "Total", "Self", "Self %", "Python",
                   "Avg", "Depth"});
  for (size_t i = 0; i < shown; ++i) {
    const ProfileStats& s = rows[i];
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%",
                  self_sum > 0 ? 100.0 * static_cast<double>(s.self_ns) /
                                     static_cast<double>(self_sum)
                               : 0.0);
    std::string depth = std::to_string(s.min_depth);
    if (s.max_depth != s.min_depth) depth += "-" + std::to_string(s.max_depth);
    cells.push_back({s.name, keyColumn(s), std::to_string(s.calls),
                     formatDuration(static_cast<double>(s.total_ns)),
                     formatDuration(static_cast<double>(s.self_ns)), pct,
                     formatDuration(static_cast<double>(s.python_ns)),
                     formatDuration(static_cast<double>(s.total_ns) /
                                    static_cast<double>(s.calls)),
                     depth});
  }
  std::vector<size_t> width(cells[0].size(), 0);
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string out;
  auto rule = [&] {
    for (size_t c = 0; c < width.size(); ++c) {
      out += std::string(width[c], '-');
      out += c + 1 < width.size() ? "  " : "\n";
    }
  };
  for (size_t r = 0; r < cells.size(); ++r) {
    if (r <= 1) rule();
    for (size_t c = 0; c < cells[r].size(); ++c) {
      const std::string& v = cells[r][c];
      // Names and keys to the left, numbers to the right.
      if (c < 2) {
        out += v + std::string(width[c] - v.size(), ' ');
      } else {
        out += std::string(width[c] - v.size(), ' ') + v;
      }
      if (c + 1 < cells[r].size()) out += "  ";
    }
    // No trailing blanks.
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  rule();
  out += "Self time total: " + formatDuration(static_cast<double>(self_sum));
  if (shown < rows.size()) {
    const size_t hidden = rows.size() - shown;
    out += " (" + std::to_string(hidden) +
           (hidden == 1 ? " more row not shown)" : " more rows not shown)");
  }
  out += '\n';
  return out;
}

std::string Profiler::chromeTrace() const {
  checkStopped("chromeTrace");
  // nlohmann writes each event; the list around them is written here, one
  // event per line, rather than as one nlohmann value: a trace can hold
  // millions of events, and a line each keeps it readable with line tools.
  std::string out = "{\"traceEvents\":[\n";
  out += eventJson(Json{{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", 1},
                        {"tid", 0},
                        {"args", {{"name", "turnout"}}}});
  uint32_t threads = 0;
  for (const ProfileEvent& e : events_) threads = std::max(threads, e.thread + 1);
  for (uint32_t t = 0; t < threads; ++t) {
    out += ",\n";
    out += eventJson(Json{{"name", "thread_name"},
                          {"ph", "M"},
                          {"pid", 1},
                          {"tid", t},
                          {"args", {{"name", "thread " + std::to_string(t)}}}});
  }
  for (const ProfileEvent& e : events_) {
    const bool scope = e.call == detail::CallKind::UserScope;
    Json args = Json::object();
    if (!scope) {
      args["key"] = toString(e.key);
      args["call"] = detail::toString(e.call);
    }
    args["depth"] = e.depth;
    args["self_us"] = micros(e.self_ns);
    args["python_us"] = micros(e.python_ns);
    out += ",\n";
    out += eventJson(Json{{"name", e.name},
                          {"cat", scope ? "scope" : "dispatch"},
                          {"ph", "X"},
                          {"pid", 1},
                          {"tid", e.thread},
                          {"ts", micros(e.start_ns)},
                          {"dur", micros(e.end_ns - e.start_ns)},
                          {"args", std::move(args)}});
  }
  out += "\n],\"displayTimeUnit\":\"ns\"}\n";
  return out;
}

void Profiler::exportChromeTrace(const std::string& path) const {
  std::string json = chromeTrace();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  TURNOUT_CHECK(f != nullptr, ErrorKind::InvalidArgument,
                "Profiler::exportChromeTrace: cannot open '", path,
                "' for writing: ", std::strerror(errno),
                "; pass a path in an existing, writable directory");
  const size_t written = std::fwrite(json.data(), 1, json.size(), f);
  const bool closed = std::fclose(f) == 0;
  TURNOUT_CHECK(written == json.size() && closed, ErrorKind::InvalidArgument,
                "Profiler::exportChromeTrace: writing '", path,
                "' failed: ", std::strerror(errno), " (", written, " of ",
                json.size(), " bytes written)");
}

RecordScope::RecordScope(std::string_view name) {
  TURNOUT_CHECK(!name.empty(), ErrorKind::InvalidArgument,
                "RecordScope: the name is empty; name the phase the scope "
                "measures, e.g. RecordScope(\"jit::run_passes\")");
  const uint32_t observers =
      detail::dispatch_observers.load(std::memory_order_relaxed);
  if (observers != 0) {
    name_.assign(name.data(), name.size());
    if (observers & detail::kTraceOn) detail::traceScope(name_, depth_);
  }
}

RecordScope::~RecordScope() {
  finish(nullptr, DispatchKey::Undefined, detail::CallKind::UserScope, &name_);
}

}  // namespace turnout

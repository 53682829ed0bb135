// The profiler: per (operator, key) totals, the table, the Chrome trace
// (parsed back and checked for properly nested spans), RecordScope, errors,
// and several threads recording at once.
#include "dispatcher/debug/profiler.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"

namespace turnout {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;

// ---- A small strict JSON reader, enough to check the exported trace. ------

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
  const Json& at(const std::string& k) const {
    auto it = fields.find(k);
    if (it == fields.end()) throw std::runtime_error("no field " + k);
    return it->second;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : t_(text) {}
  Json document() {
    Json v = value();
    ws();
    if (p_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON error at " + std::to_string(p_) + ": " +
                             what);
  }
  void ws() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\n' ||
                              t_[p_] == '\t' || t_[p_] == '\r')) {
      ++p_;
    }
  }
  void expect(char c) {
    ws();
    if (p_ >= t_.size() || t_[p_] != c) fail(std::string("expected ") + c);
    ++p_;
  }
  bool peek(char c) {
    ws();
    return p_ < t_.size() && t_[p_] == c;
  }
  std::string str() {
    expect('"');
    std::string out;
    while (true) {
      if (p_ >= t_.size()) fail("unterminated string");
      char c = t_[p_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character");
      if (c == '\\') {
        if (p_ >= t_.size()) fail("bad escape");
        char e = t_[p_++];
        switch (e) {
          case '"':
            out += '"';
            break;
          case '\\':
            out += '\\';
            break;
          case '/':
            out += '/';
            break;
          case 'n':
            out += '\n';
            break;
          case 't':
            out += '\t';
            break;
          case 'r':
            out += '\r';
            break;
          case 'b':
            out += '\b';
            break;
          case 'f':
            out += '\f';
            break;
          case 'u':
            if (p_ + 4 > t_.size()) fail("bad \\u");
            out += static_cast<char>(std::stoi(t_.substr(p_, 4), nullptr, 16));
            p_ += 4;
            break;
          default:
            fail("bad escape");
        }
      } else {
        out += c;
      }
    }
  }
  Json value() {
    ws();
    if (p_ >= t_.size()) fail("unexpected end");
    Json v;
    char c = t_[p_];
    if (c == '{') {
      v.kind = Json::Object;
      ++p_;
      if (peek('}')) {
        ++p_;
        return v;
      }
      do {
        std::string k = str();
        expect(':');
        if (v.fields.count(k)) fail("duplicate key " + k);
        v.fields[k] = value();
      } while (peek(',') && ++p_);
      expect('}');
    } else if (c == '[') {
      v.kind = Json::Array;
      ++p_;
      if (peek(']')) {
        ++p_;
        return v;
      }
      do {
        v.items.push_back(value());
      } while (peek(',') && ++p_);
      expect(']');
    } else if (c == '"') {
      v.kind = Json::String;
      v.s = str();
    } else if (t_.compare(p_, 4, "true") == 0) {
      v.kind = Json::Bool;
      v.b = true;
      p_ += 4;
    } else if (t_.compare(p_, 5, "false") == 0) {
      v.kind = Json::Bool;
      p_ += 5;
    } else if (t_.compare(p_, 4, "null") == 0) {
      p_ += 4;
    } else {
      size_t start = p_;
      if (t_[p_] == '-') ++p_;
      if (p_ >= t_.size() || !isdigit(static_cast<unsigned char>(t_[p_])))
        fail("bad value");
      while (p_ < t_.size() &&
             (isdigit(static_cast<unsigned char>(t_[p_])) || t_[p_] == '.' ||
              t_[p_] == 'e' || t_[p_] == 'E' || t_[p_] == '+' ||
              t_[p_] == '-')) {
        ++p_;
      }
      v.kind = Json::Number;
      v.n = std::stod(t_.substr(start, p_ - start));
    }
    return v;
  }
  const std::string& t_;
  size_t p_ = 0;
};

// ---- Operators --------------------------------------------------------------

Tensor cpuTensor() {
  return detail::makeTensorWithKeySet(
      DispatchKeySet({DispatchKey::CPU, DispatchKey::AutogradCPU,
                      DispatchKey::ADInplaceOrView}));
}

OperatorHandle op(const char* name) {
  return Dispatcher::singleton().findSchemaOrThrow(name, "");
}

Tensor fnCpu(const Tensor& x) { return x; }
Tensor fnAutograd(DispatchKeySet ks, const Tensor& x) {
  static auto self = op("pr::f").typed<Tensor(const Tensor&)>();
  return self.redispatch(
      ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU),
      x);
}
// pr::outer's kernel calls pr::f twice.
Tensor fnOuter(const Tensor& x) {
  static auto f = op("pr::f").typed<Tensor(const Tensor&)>();
  return f.call(f.call(x));
}

void spinFor(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// pr::py stands for a Python kernel: 100 us "in Python", a call of pr::f
// from there, 100 us more; then 100 us of its own outside the Python part.
constexpr auto kSpin = std::chrono::microseconds(100);
Tensor fnPy(const Tensor& x) {
  static auto f = op("pr::f").typed<Tensor(const Tensor&)>();
  Tensor out;
  {
    detail::PythonTimeScope python_time;
    spinFor(kSpin);
    out = f.call(x);
    spinFor(kSpin);
  }
  spinFor(kSpin);
  return out;
}

struct ProfOps {
  ProfOps() : lib(Library::FRAGMENT, "pr", std::nullopt, "prof.cc", 1) {
    lib.def("f(Tensor x) -> Tensor");
    lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
    lib.impl("f", dispatch(DispatchKey::AutogradCPU, TURNOUT_FN(fnAutograd)));
    lib.def("outer(Tensor x) -> Tensor");
    lib.impl("outer", dispatch(DispatchKey::CompositeImplicitAutograd,
                               TURNOUT_FN(fnOuter)));
    lib.def("py(Tensor x) -> Tensor");
    lib.impl("py", dispatch(DispatchKey::CPU, TURNOUT_FN(fnPy)));
  }
  Library lib;
};
// Registered once for the binary; deregistered at exit.
void ensureOps() { static ProfOps ops; }

const ProfileStats& row(const std::vector<ProfileStats>& rows,
                        const std::string& name, DispatchKey key) {
  for (const ProfileStats& s : rows) {
    if (s.name == name && s.key == key) return s;
  }
  throw std::runtime_error("no row " + name + " " + toString(key));
}

// Every thread's spans nest: each lies inside the span one level up, or
// starts after it ended. Returns the number of spans checked.
size_t checkNested(const Json& trace) {
  std::map<int, std::vector<const Json*>> open;  // per tid, a stack
  size_t spans = 0;
  double last_ts = -1;
  int last_tid = -1;
  for (const Json& e : trace.at("traceEvents").items) {
    if (e.at("ph").s == "M") continue;
    EXPECT_EQ(e.at("ph").s, "X");
    const int tid = static_cast<int>(e.at("tid").n);
    const double ts = e.at("ts").n;
    const double end = ts + e.at("dur").n;
    if (tid == last_tid) EXPECT_GE(ts, last_ts) << "events sorted by start";
    last_tid = tid;
    last_ts = ts;
    std::vector<const Json*>& stack = open[tid];
    while (!stack.empty() &&
           stack.back()->at("ts").n + stack.back()->at("dur").n <= ts &&
           !(stack.back()->at("ts").n == ts)) {
      stack.pop_back();
    }
    const double depth = e.at("args").at("depth").n;
    if (stack.empty()) {
      EXPECT_EQ(depth, 0) << e.at("name").s;
    } else {
      const Json& parent = *stack.back();
      EXPECT_LE(end, parent.at("ts").n + parent.at("dur").n + 1e-9)
          << e.at("name").s << " ends after its parent " << parent.at("name").s;
      EXPECT_EQ(depth, parent.at("args").at("depth").n + 1) << e.at("name").s;
    }
    stack.push_back(&e);
    ++spans;
  }
  return spans;
}

TEST(Profiler, CountsTotalsAndSelfTimePerOperatorAndKey) {
  ensureOps();
  auto f = op("pr::f").typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  Profiler prof;
  EXPECT_TRUE(prof.running());
  for (int i = 0; i < 100; ++i) f.call(x);
  prof.stop();
  EXPECT_FALSE(prof.running());
  // Not recorded once stopped.
  f.call(x);
  std::vector<ProfileStats> rows = prof.stats();
  ASSERT_EQ(rows.size(), 2u);
  const ProfileStats& autograd = row(rows, "pr::f", DispatchKey::AutogradCPU);
  const ProfileStats& cpu = row(rows, "pr::f", DispatchKey::CPU);
  EXPECT_EQ(autograd.calls, 100);
  EXPECT_EQ(cpu.calls, 100);
  EXPECT_EQ(autograd.min_depth, 0u);
  EXPECT_EQ(cpu.min_depth, 1u);
  EXPECT_EQ(cpu.max_depth, 1u);
  EXPECT_FALSE(cpu.is_scope);
  // Self time is exactly the total minus the nested spans' totals.
  EXPECT_EQ(autograd.self_ns + cpu.total_ns, autograd.total_ns);
  EXPECT_EQ(cpu.self_ns, cpu.total_ns);
  EXPECT_GT(cpu.total_ns, 0);
  EXPECT_EQ(rows[0].key, DispatchKey::AutogradCPU) << "sorted by total";
  EXPECT_EQ(prof.events().size(), 200u);
}

TEST(Profiler, ChromeTraceIsValidJsonWithNestedSpans) {
  ensureOps();
  auto outer = op("pr::outer").typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  Profiler prof;
  {
    RecordScope phase("test::\"phase\"\n");
    for (int i = 0; i < 10; ++i) outer.call(x);
    Stack stack{IValue(x)};
    op("pr::f").callBoxed(stack);
  }
  prof.stop();
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR")
                                             : "/tmp") +
      "/trace.json";
  prof.exportChromeTrace(path);
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  EXPECT_EQ(text, prof.chromeTrace());
  Json trace;
  ASSERT_NO_THROW(trace = JsonReader(text).document()) << text;
  // 1 scope + 10 x (outer + 2 x (f at AutogradCPU + f at CPU)) + 2 boxed.
  EXPECT_EQ(checkNested(trace), 1u + 10u * 5u + 2u);
  const Json* scope = nullptr;
  const Json* first_outer = nullptr;
  for (const Json& e : trace.at("traceEvents").items) {
    if (e.at("ph").s != "X") continue;
    if (e.at("cat").s == "scope") scope = &e;
    if (e.at("name").s == "pr::outer" && first_outer == nullptr)
      first_outer = &e;
  }
  ASSERT_NE(scope, nullptr);
  EXPECT_EQ(scope->at("name").s, "test::\"phase\"\n");
  ASSERT_NE(first_outer, nullptr);
  EXPECT_EQ(first_outer->at("args").at("key").s, "AutogradCPU");
  EXPECT_EQ(first_outer->at("args").at("call").s, "call");
  EXPECT_EQ(first_outer->at("args").at("depth").n, 1);
  std::vector<ProfileStats> rows = prof.stats("calls");
  EXPECT_EQ(row(rows, "test::\"phase\"\n", DispatchKey::Undefined).calls, 1);
  EXPECT_TRUE(row(rows, "test::\"phase\"\n", DispatchKey::Undefined).is_scope);
  EXPECT_EQ(row(rows, "pr::f", DispatchKey::CPU).calls, 21);
  EXPECT_EQ(rows[0].calls, 21) << "sorted by calls";
}

TEST(Profiler, PythonTimeIsThePartOfSelfTimeInPythonCode) {
  ensureOps();
  auto py = op("pr::py").typed<Tensor(const Tensor&)>();
  Tensor x = cpuTensor();
  py.call(x);  // unprofiled: the scope records nothing, and does not fail
  Profiler prof;
  for (int i = 0; i < 3; ++i) py.call(x);
  prof.stop();
  std::vector<ProfileStats> rows = prof.stats("python");
  const ProfileStats& p = row(rows, "pr::py", DispatchKey::CPU);
  const ProfileStats& nested = row(rows, "pr::f", DispatchKey::CPU);
  EXPECT_EQ(rows[0].name, "pr::py") << "sorted by Python time";
  EXPECT_EQ(p.calls, 3);
  // Two spins per call inside the scope; the nested pr::f is not counted,
  // nor the spin after the scope.
  EXPECT_GE(p.python_ns, 3 * 2 * 100000);
  EXPECT_LE(p.python_ns, p.self_ns - 3 * 100000);
  EXPECT_EQ(nested.python_ns, 0);
  EXPECT_EQ(row(rows, "pr::f", DispatchKey::AutogradCPU).python_ns, 0);
  int64_t sum = 0;
  for (const ProfileEvent& e : prof.events()) sum += e.python_ns;
  EXPECT_EQ(sum, p.python_ns);

  Json trace = JsonReader(prof.chromeTrace()).document();
  EXPECT_EQ(checkNested(trace), 3u * 3u);
  double python_us = 0;
  for (const Json& e : trace.at("traceEvents").items) {
    if (e.at("ph").s != "X") continue;
    const double us = e.at("args").at("python_us").n;
    if (e.at("name").s != "pr::py") {
      EXPECT_EQ(us, 0) << e.at("name").s;
    }
    python_us += us;
  }
  EXPECT_NEAR(python_us, p.python_ns / 1e3, 1e-6);

  const std::string table = prof.table("python");
  std::stringstream in(table);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 4u) << table;
  ASSERT_NE(lines[1].find("Python"), std::string::npos) << table;
  EXPECT_LT(lines[1].find("Self %"), lines[1].find("Python")) << table;
  EXPECT_THAT(lines[3], HasSubstr("pr::py"));
}

TEST(Profiler, TableIsAlignedSortedAndLimited) {
  ensureOps();
  auto outer = op("pr::outer").typed<Tensor(const Tensor&)>();
  Profiler prof;
  for (int i = 0; i < 5; ++i) outer.call(cpuTensor());
  prof.stop();
  const std::string table = prof.table("calls", 2);
  std::vector<std::string> lines;
  std::stringstream in(table);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // rule, header, rule, 2 rows, rule, total.
  ASSERT_EQ(lines.size(), 7u) << table;
  EXPECT_THAT(lines[1], HasSubstr("Name"));
  EXPECT_THAT(lines[1], HasSubstr("Self %"));
  for (int i : {0, 1, 2, 3, 4, 5}) {
    EXPECT_EQ(lines[i].size(), lines[0].size()) << "line " << i << ":\n"
                                                << table;
  }
  EXPECT_THAT(lines[3], HasSubstr("pr::f"));
  EXPECT_THAT(lines[3], HasSubstr(" 10 "));
  EXPECT_THAT(lines[6], HasSubstr("(1 more row not shown)"));
  EXPECT_THAT(prof.table("name"), HasSubstr("pr::outer"));
}

TEST(Profiler, ErrorsSayWhatToDo) {
  Profiler prof;
  EXPECT_THAT(errorOf([] { Profiler second; }),
              HasSubstr("another Profiler is already running"));
  EXPECT_THAT(errorOf([&] { prof.table(); }),
              HasSubstr("still running; call stop() first"));
  prof.stop();
  EXPECT_THAT(errorOf([&] { prof.stats("cpu_time_avg"); }),
              HasSubstr("sort_by='cpu_time_avg' is not a column"));
  EXPECT_THAT(
      errorOf([&] { prof.exportChromeTrace("/nonexistent/dir/t.json"); }),
      HasSubstr("cannot open '/nonexistent/dir/t.json' for writing"));
  EXPECT_THAT(errorOf([] { RecordScope s(""); }),
              HasSubstr("the name is empty"));
  // A stopped profiler lets a new one start.
  Profiler next;
  next.stop();
}

TEST(Profiler, ThreadsRecordIntoTheirOwnBuffers) {
  ensureOps();
  constexpr int kThreads = 4;
  constexpr int kCalls = 3000;  // more than one buffer chunk per thread
  Profiler prof;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      auto f = op("pr::f").typed<Tensor(const Tensor&)>();
      Tensor x = cpuTensor();
      for (int i = 0; i < kCalls; ++i) f.call(x);
    });
  }
  for (std::thread& th : threads) th.join();
  prof.stop();
  std::vector<ProfileStats> rows = prof.stats();
  EXPECT_EQ(row(rows, "pr::f", DispatchKey::AutogradCPU).calls,
            kThreads * kCalls);
  EXPECT_EQ(row(rows, "pr::f", DispatchKey::CPU).calls, kThreads * kCalls);
  Json trace = JsonReader(prof.chromeTrace()).document();
  EXPECT_EQ(checkNested(trace), size_t{kThreads * kCalls * 2});
}

TEST(Profiler, StopWhileOtherThreadsCall) {
  ensureOps();
  std::atomic<bool> done{false};
  std::thread caller([&] {
    auto f = op("pr::f").typed<Tensor(const Tensor&)>();
    Tensor x = cpuTensor();
    while (!done.load()) f.call(x);
  });
  for (int round = 0; round < 20; ++round) {
    Profiler prof;
    std::this_thread::yield();
    prof.stop();
    for (const ProfileEvent& e : prof.events()) {
      EXPECT_LE(e.start_ns, e.end_ns);
      EXPECT_EQ(e.name, "pr::f");
    }
  }
  done = true;
  caller.join();
}

}  // namespace
}  // namespace turnout

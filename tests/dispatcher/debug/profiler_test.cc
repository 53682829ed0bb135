// The profiler: per (operator, key) totals, the table, the Chrome trace
// (parsed back with nlohmann/json and checked for properly nested spans and
// exact microseconds), RecordScope, errors, and several threads recording at
// once.
#include "dispatcher/debug/profiler.h"

#include <chrono>
#include <cstdint>
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
#include "tests/dispatcher/testing.h"
#include "nlohmann/json.hpp"
#include "tests/error_of.h"

namespace turnout {
namespace {

using testing::cpuTensor;
using testing::op;
using testing::errorOf;
using ::testing::HasSubstr;

// ---- The exported trace, read back ------------------------------------------

using Json = nlohmann::json;

// Integer nanoseconds as the exact decimal microseconds, in the shortest
// form that reads back as the same number: 1234567 -> "1234.567", 1500 ->
// "1.5", 0 -> "0.0".
std::string exactMicros(int64_t ns) {
  const uint64_t magnitude =
      ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = std::to_string(magnitude % 1000 + 1000).substr(1);
  while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
  return (ns < 0 ? "-" : "") + std::to_string(magnitude / 1000) + "." + frac;
}

// The number after each `"field":` in `text`, in order, as written.
std::vector<std::string> numbersOf(const std::string& text,
                                   const std::string& field) {
  std::vector<std::string> out;
  const std::string needle = "\"" + field + "\":";
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    const size_t begin = at + needle.size();
    out.push_back(text.substr(begin, text.find_first_of(",}", begin) - begin));
  }
  return out;
}

// Every time in the trace is the exact decimal of the event's nanoseconds,
// and reads back as the double nearest it.
void checkExactMicros(const std::string& text,
                      const std::vector<ProfileEvent>& events) {
  std::vector<std::string> ts, dur, self_us, python_us;
  for (const ProfileEvent& e : events) {
    ts.push_back(exactMicros(e.start_ns));
    dur.push_back(exactMicros(e.end_ns - e.start_ns));
    self_us.push_back(exactMicros(e.self_ns));
    python_us.push_back(exactMicros(e.python_ns));
  }
  EXPECT_EQ(numbersOf(text, "ts"), ts);
  EXPECT_EQ(numbersOf(text, "dur"), dur);
  EXPECT_EQ(numbersOf(text, "self_us"), self_us);
  EXPECT_EQ(numbersOf(text, "python_us"), python_us);
  const Json trace = Json::parse(text);
  size_t i = 0;
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ASSERT_LT(i, events.size());
    EXPECT_EQ(e.at("ts").get<double>(), events[i].start_ns / 1e3);
    ++i;
  }
  EXPECT_EQ(i, events.size());
}

TEST(ProfilerJson, ExactMicrosHelper) {
  struct Case {
    int64_t ns;
    const char* out;
  };
  const Case cases[] = {{0, "0.0"},
                        {1, "0.001"},
                        {999, "0.999"},
                        {1000, "1.0"},
                        {1500, "1.5"},
                        {-1500, "-1.5"},
                        {-1, "-0.001"},
                        {1234567, "1234.567"},
                        {999999999999999, "999999999999.999"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.ns);
    EXPECT_EQ(exactMicros(c.ns), c.out);
    // What nlohmann writes for the profiler's micros(): the same text.
    EXPECT_EQ(Json(c.ns / 1e3).dump(), c.out);
  }
}

// ---- Operators --------------------------------------------------------------

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
  auto end_of = [](const Json& e) {
    return e.at("ts").get<double>() + e.at("dur").get<double>();
  };
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M") continue;
    EXPECT_EQ(e.at("ph"), "X");
    const int tid = e.at("tid").get<int>();
    const double ts = e.at("ts").get<double>();
    const double end = end_of(e);
    if (tid == last_tid) {
      EXPECT_GE(ts, last_ts) << "events sorted by start";
    }
    last_tid = tid;
    last_ts = ts;
    std::vector<const Json*>& stack = open[tid];
    while (!stack.empty() && end_of(*stack.back()) <= ts &&
           !(stack.back()->at("ts").get<double>() == ts)) {
      stack.pop_back();
    }
    const int depth = e.at("args").at("depth").get<int>();
    const std::string name = e.at("name").get<std::string>();
    if (stack.empty()) {
      EXPECT_EQ(depth, 0) << name;
    } else {
      const Json& parent = *stack.back();
      EXPECT_LE(end, end_of(parent) + 1e-9)
          << name << " ends after its parent " << parent.at("name");
      EXPECT_EQ(depth, parent.at("args").at("depth").get<int>() + 1) << name;
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
  ASSERT_NO_THROW(trace = Json::parse(text)) << text;
  // 1 scope + 10 x (outer + 2 x (f at AutogradCPU + f at CPU)) + 2 boxed.
  EXPECT_EQ(checkNested(trace), 1u + 10u * 5u + 2u);
  checkExactMicros(text, prof.events());
  // The layout: the metadata, then one event per line.
  std::vector<std::string> lines;
  std::stringstream text_in(text);
  for (std::string line; std::getline(text_in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2u + prof.events().size() + 1u);
  EXPECT_EQ(lines[0], "{\"traceEvents\":[");
  EXPECT_EQ(lines[1],
            "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
            "\"args\":{\"name\":\"turnout\"}},");
  EXPECT_EQ(lines[2],
            "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
            "\"args\":{\"name\":\"thread 0\"}},");
  EXPECT_EQ(lines.back(), "],\"displayTimeUnit\":\"ns\"}");
  // The scope's name, escaped: {"name":"test::\"phase\"\n","cat":"scope",...
  EXPECT_THAT(lines[3], ::testing::StartsWith(
                            R"({"name":"test::\"phase\"\n","cat":"scope",)"
                            R"("ph":"X","pid":1,"tid":0,"ts":)"));
  EXPECT_THAT(lines[3],
              ::testing::EndsWith(",\"args\":{\"depth\":0,\"self_us\":" +
                                  exactMicros(prof.events()[0].self_ns) +
                                  ",\"python_us\":0.0}},"));
  const Json* scope = nullptr;
  const Json* first_outer = nullptr;
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    if (e.at("cat") == "scope") scope = &e;
    if (e.at("name") == "pr::outer" && first_outer == nullptr) first_outer = &e;
  }
  ASSERT_NE(scope, nullptr);
  EXPECT_EQ(scope->at("name"), "test::\"phase\"\n");
  ASSERT_NE(first_outer, nullptr);
  EXPECT_EQ(first_outer->at("args").at("key"), "AutogradCPU");
  EXPECT_EQ(first_outer->at("args").at("call"), "call");
  EXPECT_EQ(first_outer->at("args").at("depth"), 1);
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

  const std::string text = prof.chromeTrace();
  Json trace = Json::parse(text);
  EXPECT_EQ(checkNested(trace), 3u * 3u);
  checkExactMicros(text, prof.events());
  double python_us = 0;
  for (const Json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const double us = e.at("args").at("python_us").get<double>();
    if (e.at("name") != "pr::py") {
      EXPECT_EQ(us, 0) << e.at("name");
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
  const std::string text = prof.chromeTrace();
  EXPECT_EQ(checkNested(Json::parse(text)), size_t{kThreads * kCalls * 2});
  checkExactMicros(text, prof.events());
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

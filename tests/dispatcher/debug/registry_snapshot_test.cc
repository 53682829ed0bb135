// Registry snapshots: what they record, JSON both ways (its text, its errors
// and limits, and a file written before nlohmann/json), and diffs checked
// against their expected text.
#include "dispatcher/debug/registry_snapshot.h"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/error_of.h"

namespace turnout {
namespace {

using ::testing::ElementsAre;
using testing::errorOf;
using ::testing::HasSubstr;

Tensor fnCpu(const Tensor& x) { return x; }
Tensor fnOther(const Tensor& x) { return x; }

std::vector<std::string> keysOf(const OperatorRecord& r) {
  std::vector<std::string> out;
  for (const KernelRecord& k : r.table) out.push_back(k.key + " " + k.kind);
  return out;
}

const KernelRecord* entryFor(const OperatorRecord& r, const std::string& key) {
  for (const KernelRecord& k : r.table) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

TEST(RegistrySnapshot, RecordsSchemaKernelsAndSites) {
  Library lib(Library::DEF, "snap1", std::nullopt, "snap.cc", 3);
  lib.def("f(Tensor x) -> Tensor", AliasAnalysisKind::CONSERVATIVE);
  Library cpu(Library::IMPL, "snap1", DispatchKey::CPU, "snap.cc", 7);
  cpu.impl("f", TURNOUT_FN(fnCpu));
  Library ag(Library::IMPL, "snap1", DispatchKey::AutogradCPU, "snap.cc", 9);
  ag.impl("f", TURNOUT_FN(fnOther));

  RegistrySnapshot s = takeRegistrySnapshot();
  const OperatorRecord* r = s.find("snap1::f");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->schema, "snap1::f(Tensor x) -> Tensor");
  EXPECT_EQ(r->site, "registered at snap.cc:3");
  EXPECT_EQ(r->alias_analysis, "CONSERVATIVE");
  EXPECT_THAT(r->registered_keys, ElementsAre("CPU", "AutogradCPU"));
  EXPECT_THAT(keysOf(*r), ElementsAre("CPU kernel", "AutogradCPU kernel"));
  EXPECT_EQ(entryFor(*r, "CPU")->site, "registered at snap.cc:7");
  EXPECT_FALSE(entryFor(*r, "CPU")->fallthrough);
  // The aten-free dispatcher still has its framework fallthroughs.
  bool autograd_cpu_fallback = false;
  for (const KernelRecord& f : s.fallbacks) {
    if (f.key == "AutogradCPU") {
      autograd_cpu_fallback = true;
      EXPECT_TRUE(f.fallthrough);
      EXPECT_EQ(f.kind, "backend fallback");
    }
  }
  EXPECT_TRUE(autograd_cpu_fallback);
  EXPECT_EQ(s.find("snap1::nope"), nullptr);
}

TEST(RegistrySnapshot, AliasKeysShowAsTheirEntryKinds) {
  Library lib(Library::DEF, "snap2", std::nullopt, "snap.cc", 20);
  lib.def("math(Tensor x) -> Tensor", TURNOUT_FN(fnCpu));
  lib.def("explicit(Tensor x) -> Tensor",
          dispatch(DispatchKey::CompositeExplicitAutograd, TURNOUT_FN(fnCpu)));
  RegistrySnapshot s = takeRegistrySnapshot();
  const OperatorRecord* math = s.find("snap2::math");
  ASSERT_NE(math, nullptr);
  EXPECT_THAT(math->registered_keys, ElementsAre("CompositeImplicitAutograd"));
  ASSERT_NE(entryFor(*math, "CPU"), nullptr);
  EXPECT_EQ(entryFor(*math, "CPU")->kind, "math kernel");
  ASSERT_NE(entryFor(*math, "AutogradCPU"), nullptr);
  EXPECT_EQ(entryFor(*math, "AutogradCPU")->kind, "math kernel");
  const OperatorRecord* ex = s.find("snap2::explicit");
  ASSERT_NE(ex, nullptr);
  ASSERT_NE(entryFor(*ex, "CPU"), nullptr);
  EXPECT_EQ(entryFor(*ex, "CPU")->kind, "default backend kernel");
  EXPECT_EQ(entryFor(*ex, "AutogradCPU"), nullptr);  // framework fallthrough
}

TEST(RegistrySnapshot, JsonRoundTrip) {
  Library lib(Library::DEF, "snap3", std::nullopt,
              "dir/\"odd\"\tname\xc3\xa9.cc", 5);
  lib.def("f(Tensor x, *, int n=1) -> Tensor");
  Library cpu(Library::IMPL, "snap3", DispatchKey::CPU, "snap.cc", 6);
  cpu.impl("f", CppFunction::makeFallthrough());
  RegistrySnapshot s = takeRegistrySnapshot();
  const std::string json = s.toJson();
  EXPECT_THAT(json,
              HasSubstr("\"site\": \"registered at dir/\\\"odd\\\"\\tname"));
  RegistrySnapshot back = RegistrySnapshot::fromJson(json, "mem");
  EXPECT_EQ(back.toJson(), json);
  ASSERT_NE(back.find("snap3::f"), nullptr);
  EXPECT_EQ(back.find("snap3::f")->site,
            "registered at dir/\"odd\"\tname\xc3\xa9.cc:5");
  EXPECT_TRUE(entryFor(*back.find("snap3::f"), "CPU")->fallthrough);
  EXPECT_TRUE(diffSnapshots(s, back).empty());
}

// How strings are written: JSON's escapes, UTF-8 as it is.
TEST(RegistrySnapshot, JsonEscapesStrings) {
  struct Case {
    std::string in;
    std::string out;   // the JSON string literal
    std::string back;  // what reading it gives
  };
  const std::string kReplacement = "\xef\xbf\xbd";  // U+FFFD
  const Case cases[] = {
      {"", R"("")", ""},
      {"aten::add.Tensor", R"("aten::add.Tensor")", "aten::add.Tensor"},
      {"say \"hi\"", R"("say \"hi\"")", "say \"hi\""},
      {"C:\\dir", R"("C:\\dir")", "C:\\dir"},
      {"a\nb\rc\td", R"("a\nb\rc\td")", "a\nb\rc\td"},
      {"\b\f", R"("\b\f")", "\b\f"},
      {std::string("\x01\x1f", 2), R"("\u0001\u001f")",
       std::string("\x01\x1f", 2)},
      {std::string("nul\0end", 7), R"("nul\u0000end")",
       std::string("nul\0end", 7)},
      {"\x7f", "\"\x7f\"", "\x7f"},  // DEL is not a control character
      {"caf\xc3\xa9 \xe2\x86\x92", "\"caf\xc3\xa9 \xe2\x86\x92\"",
       "caf\xc3\xa9 \xe2\x86\x92"},
      // Not UTF-8 (a file name need not be): U+FFFD, not an exception.
      {"bad\xff.cc", "\"bad" + kReplacement + ".cc\"",
       "bad" + kReplacement + ".cc"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out);
    RegistrySnapshot s;
    s.operators.push_back(OperatorRecord{"n::f", "", c.in, "", {}, {}});
    const std::string json = s.toJson();
    EXPECT_THAT(json, HasSubstr("\"site\": " + c.out + ",\n"));
    EXPECT_EQ(RegistrySnapshot::fromJson(json).operators.at(0).site, c.back);
  }
}

TEST(RegistrySnapshot, ReadsEscapesAndWhitespace) {
  RegistrySnapshot s = RegistrySnapshot::fromJson(
      "{ \"fallbacks\" : [ ] , \"version\":1,\"format\":"
      "\"turnout.registry_snapshot\",\n\"operators\":[{\"name\":\"a::b\","
      "\"schema\":\"\",\"site\":\"x\\u00e9\\ud83d\\ude00\\/\\n\","
      "\"alias_analysis\":\"\",\"registered_keys\":[\"CPU\"],\"table\":[]}]}");
  ASSERT_EQ(s.operators.size(), 1u);
  EXPECT_EQ(s.operators[0].site, "x\xc3\xa9\xf0\x9f\x98\x80/\n");
  EXPECT_THAT(s.operators[0].registered_keys, ElementsAre("CPU"));
}

TEST(RegistrySnapshot, ToJsonExpectedText) {
  RegistrySnapshot s;
  s.operators.push_back(OperatorRecord{
      "n::f",
      "n::f(Tensor x) -> Tensor",
      "registered at a.cc:1",
      "FROM_SCHEMA",
      {"CPU"},
      {KernelRecord{"CPU", "kernel", "registered at a.cc:2", false}}});
  s.operators.push_back(OperatorRecord{"n::g", "", "", "", {}, {}});
  s.fallbacks.push_back(
      KernelRecord{"PrivateUse1", "backend fallback", "b.cc:3", true});
  EXPECT_EQ(s.toJson(), R"({
  "format": "turnout.registry_snapshot",
  "version": 1,
  "operators": [
    {
      "name": "n::f",
      "schema": "n::f(Tensor x) -> Tensor",
      "site": "registered at a.cc:1",
      "alias_analysis": "FROM_SCHEMA",
      "registered_keys": [
        "CPU"
      ],
      "table": [
        {
          "key": "CPU",
          "kind": "kernel",
          "site": "registered at a.cc:2",
          "fallthrough": false
        }
      ]
    },
    {
      "name": "n::g",
      "schema": "",
      "site": "",
      "alias_analysis": "",
      "registered_keys": [],
      "table": []
    }
  ],
  "fallbacks": [
    {
      "key": "PrivateUse1",
      "kind": "backend fallback",
      "site": "b.cc:3",
      "fallthrough": true
    }
  ]
}
)");
  EXPECT_EQ(RegistrySnapshot().toJson(), R"({
  "format": "turnout.registry_snapshot",
  "version": 1,
  "operators": [],
  "fallbacks": []
}
)");
}

// A snapshot saved by the hand-written writer that came before nlohmann/json
// (testdata/README.md says how it was made). Old files must keep loading.
constexpr char kOldSnapshot[] =
    "tests/dispatcher/debug/testdata/old_snapshot.json";

std::string readTestData(const char* relative) {
  std::string path = relative;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    path = std::string(srcdir) + "/turnout/" + relative;
  }
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(RegistrySnapshot, LoadsASnapshotWrittenBeforeNlohmann) {
  const std::string text = readTestData(kOldSnapshot);
  ASSERT_FALSE(text.empty());
  const RegistrySnapshot s = RegistrySnapshot::fromJson(text, kOldSnapshot);

  std::vector<std::string> names;
  for (const OperatorRecord& r : s.operators) names.push_back(r.name);
  EXPECT_THAT(names,
              ElementsAre("aten::Float.Tensor", "aten::add.Tensor",
                          "snapold::explicit", "snapold::f", "snapold::math",
                          "snapold::nodef", "snapold::unimplemented"));

  const OperatorRecord* add = s.find("aten::add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->schema,
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) "
            "-> Tensor");
  EXPECT_EQ(add->alias_analysis, "FROM_SCHEMA");
  EXPECT_THAT(add->registered_keys, ElementsAre("CPU", "Meta", "Autograd"));
  EXPECT_THAT(keysOf(*add), ElementsAre("CPU kernel", "Meta kernel",
                                        "AutogradOther autograd kernel",
                                        "AutogradCPU autograd kernel",
                                        "AutogradCUDA autograd kernel"));
  EXPECT_EQ(entryFor(*add, "Meta")->site,
            "registered at kernels/elementwise_kernels.cc:779");

  // Escapes the old writer wrote: \" and \t, and UTF-8 as it is.
  const OperatorRecord* f = s.find("snapold::f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->site, "registered at dir/\"odd\"\tname\xc3\xa9.cc:5");
  EXPECT_THAT(f->registered_keys, ElementsAre("CPU", "AutogradCPU"));
  ASSERT_NE(entryFor(*f, "AutogradCPU"), nullptr);
  EXPECT_EQ(*entryFor(*f, "AutogradCPU"),
            (KernelRecord{"AutogradCPU", "kernel",
                          "registered at snapold_ops.cc:30", true}));
  EXPECT_FALSE(entryFor(*f, "CPU")->fallthrough);

  EXPECT_EQ(entryFor(*s.find("snapold::math"), "AutogradCPU")->kind,
            "math kernel");
  EXPECT_EQ(entryFor(*s.find("aten::Float.Tensor"), "Meta")->kind,
            "default backend kernel");
  const OperatorRecord* nodef = s.find("snapold::nodef");
  ASSERT_NE(nodef, nullptr);
  EXPECT_EQ(nodef->schema, "");
  EXPECT_EQ(nodef->site, "");
  const OperatorRecord* unimplemented = s.find("snapold::unimplemented");
  ASSERT_NE(unimplemented, nullptr);
  EXPECT_EQ(unimplemented->alias_analysis, "CONSERVATIVE");
  EXPECT_TRUE(unimplemented->registered_keys.empty());
  EXPECT_TRUE(unimplemented->table.empty());

  ASSERT_EQ(s.fallbacks.size(), 4u);
  EXPECT_EQ(s.fallbacks[0],
            (KernelRecord{"PrivateUse1", "backend fallback",
                          "registered at snapold_ops.cc:50", false}));
  EXPECT_EQ(s.fallbacks[3].key, "AutogradCPU");
  EXPECT_TRUE(s.fallbacks[3].fallthrough);

  // Written in today's format and read back, nothing changes.
  EXPECT_TRUE(diffSnapshots(s, s).empty());
  const RegistrySnapshot back = RegistrySnapshot::fromJson(s.toJson(), "mem");
  EXPECT_TRUE(diffSnapshots(s, back).empty());
  EXPECT_EQ(back.toJson(), s.toJson());
}

TEST(RegistrySnapshot, JsonErrorsSayWhereAndWhat) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const std::vector<Case> cases = {
      // Not JSON: nlohmann/json's reason, at the offending byte.
      {"", "snap.json: line 1, column 1: unexpected end of input"},
      {"{\"format\": \"turnout.registry_snapshot\",\n  \"version\": 1,, }",
       "snap.json: line 2, column 16: unexpected ','; expected string literal "
       "(syntax error while parsing object key)"},
      {"[1, 2", "line 1, column 6: unexpected end of input; expected ']'"},
      {"{\"a\": \"unterminated",
       "line 1, column 20: invalid string: missing closing quote"},
      {"{\"a\": tru}", "line 1, column 10: invalid literal"},
      {"{\"a\": 1} x",
       "line 1, column 10: invalid literal; last read: '1} x'; "
       "expected end of input"},
      {"{\"a\": \"x\ny\"}",
       "line 1, column 9: invalid string: control character U+000A (LF) must "
       "be escaped"},
      {"{\"a\": \"\\q\"}",
       "line 1, column 9: invalid string: forbidden character after "
       "backslash"},
      {"{\"a\":\n \"\xff\"}",
       "line 2, column 3: invalid string: ill-formed UTF-8 byte"},
      {"{\"a\": 1e999}", "line 1, column 12: number overflow parsing '1e999'"},
      // A key starting with a two-byte character (U+078E): nlohmann quotes
      // the bytes it read, up to the first one; the message stays UTF-8
      // (found by //tests/fuzz:snapshot_fuzzer).
      {"{\n  \xde\x8eame\": 1}",
       "line 2, column 3: invalid literal; last read: '{<U+000A>  <0xDE>'; "
       "expected string literal"},
      // JSON, but not a snapshot: the path inside the document.
      {"[]", "the document: expected an object, found an array"},
      {"{\"format\": \"other\"}",
       "format: expected \"turnout.registry_snapshot\", found \"other\""},
      {"{\"format\": \"turnout.registry_snapshot\", \"version\": 2}",
       "this turnout reads version 1"},
      {"{\"format\": \"turnout.registry_snapshot\", \"version\": 1}",
       "missing field 'operators'"},
      {"{\"format\": \"turnout.registry_snapshot\", \"version\": 1, "
       "\"operators\": [{\"name\": 3}]}",
       "operators[0].name: expected a string, found a number"},
      {"{\"format\": \"turnout.registry_snapshot\", \"version\": 1, "
       "\"operators\": [], \"fallbacks\": [{\"key\": \"CPU\", \"kind\": \"k\", "
       "\"site\": \"s\", \"fallthrough\": \"no\"}]}",
       "fallbacks[0].fallthrough: expected a boolean, found a string"},
      {"{\"format\": \"turnout.registry_snapshot\", \"version\": 1, "
       "\"operators\": [{\"name\": \"a::b\", \"schema\": \"\", \"site\": \"\", "
       "\"alias_analysis\": \"\", \"registered_keys\": [], \"table\": []}, "
       "{\"name\": \"a::b\", \"schema\": \"\", \"site\": \"\", "
       "\"alias_analysis\": \"\", \"registered_keys\": [], \"table\": []}], "
       "\"fallbacks\": []}",
       "operator 'a::b' appears twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    std::string msg =
        errorOf([&] { RegistrySnapshot::fromJson(c.json, "snap.json"); });
    EXPECT_THAT(msg, HasSubstr(c.expected));
    EXPECT_THAT(msg, HasSubstr("snap.json"));
  }
}

TEST(RegistrySnapshot, JsonLimitsSayWhereAndWhat) {
  // 64 levels of arrays and objects are read; the 65th '[' or '{' is named.
  EXPECT_THAT(
      errorOf([] {
        RegistrySnapshot::fromJson(std::string(64, '[') + std::string(64, ']'));
      }),
      HasSubstr("the document: expected an object, found an array"));
  EXPECT_THAT(errorOf([] {
                RegistrySnapshot::fromJson(std::string(100, '['), "deep.json");
              }),
              HasSubstr("reading a registry snapshot from deep.json: line 1, "
                        "column 65: values nested too deeply (more than 64 "
                        "levels of arrays and objects; a snapshot has 4)"));
  std::string objects = "{\"operators\": [\n";
  for (int i = 0; i < 70; ++i) objects += "{\"a\": ";
  EXPECT_THAT(errorOf([&] { RegistrySnapshot::fromJson(objects); }),
              HasSubstr("line 2, column 373: values nested too deeply"));
  // Much deeper text fails the same way, without exhausting the stack.
  EXPECT_THAT(
      errorOf([] { RegistrySnapshot::fromJson(std::string(1 << 20, '[')); }),
      HasSubstr("line 1, column 65: values nested too deeply"));

  // The size is checked before anything is parsed.
  std::string big(RegistrySnapshot::kMaxJsonBytes + 1, ' ');
  EXPECT_THAT(errorOf([&] { RegistrySnapshot::fromJson(big, "big.json"); }),
              HasSubstr("reading a registry snapshot from big.json: the text "
                        "is 67108865 bytes, over the limit of 67108864 bytes"));
  big.resize(RegistrySnapshot::kMaxJsonBytes);
  EXPECT_THAT(errorOf([&] { RegistrySnapshot::fromJson(big, "big.json"); }),
              HasSubstr("big.json: line 1, column 67108865: unexpected end of "
                        "input"));
}

TEST(RegistryDiff, AddedOverriddenRemovedWithExpectedText) {
  Library base(Library::DEF, "snap4", std::nullopt, "base.cc", 1);
  base.def("g(Tensor x) -> Tensor");
  base.def("h(Tensor x) -> Tensor");
  auto base_cpu = std::make_unique<Library>(Library::IMPL, "snap4",
                                            DispatchKey::CPU, "base.cc", 2);
  base_cpu->impl("g", TURNOUT_FN(fnCpu));
  base_cpu->impl("h", TURNOUT_FN(fnCpu));
  RegistrySnapshot before = takeRegistrySnapshot();

  // What "importing a library" does: a new operator, an override, a
  // fallback.
  Library frag(Library::FRAGMENT, "snap4", std::nullopt, "plugin.cc", 10);
  frag.def("added(Tensor x) -> Tensor");
  Library plugin_cpu(Library::IMPL, "snap4", DispatchKey::CPU, "plugin.cc", 11);
  plugin_cpu.impl("added", TURNOUT_FN(fnCpu));
  plugin_cpu.impl("g", TURNOUT_FN(fnOther));
  Library fb(Library::IMPL, "_", DispatchKey::PrivateUse1, "plugin.cc", 12);
  fb.fallback(CppFunction::makeFallthrough());
  RegistrySnapshot after = takeRegistrySnapshot();

  RegistryDiff d = diffSnapshots(before, after);
  EXPECT_EQ(
      d.toString(),
      "added operator snap4::added(Tensor x) -> Tensor  registered at "
      "plugin.cc:10\n"
      "added kernel snap4::added CPU [kernel] registered at plugin.cc:11\n"
      "overridden kernel snap4::g CPU [kernel] registered at base.cc:2\n"
      "    -> [kernel] registered at plugin.cc:11\n"
      "added fallback PrivateUse1 [backend fallback] fallthrough "
      "registered at plugin.cc:12\n");
  const nlohmann::json changes = nlohmann::json::parse(d.toJson())["changes"];
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[2], nlohmann::json::parse(R"({
      "change": "overridden", "what": "kernel", "op": "snap4::g", "key": "CPU",
      "before": {"key": "CPU", "kind": "kernel",
                 "site": "registered at base.cc:2", "fallthrough": false},
      "after": {"key": "CPU", "kind": "kernel",
                "site": "registered at plugin.cc:11", "fallthrough": false},
      "site_before": "registered at base.cc:2",
      "site_after": "registered at plugin.cc:11",
      "schema_before": "", "schema_after": ""})"));
  EXPECT_EQ(changes[0]["after"], nullptr) << "an operator has no entry";
  EXPECT_EQ(changes[0]["schema_after"], "snap4::added(Tensor x) -> Tensor");

  // The other way round, everything is removed or restored.
  RegistryDiff back = diffSnapshots(after, before);
  EXPECT_EQ(
      back.toString(),
      "removed operator snap4::added(Tensor x) -> Tensor  registered at "
      "plugin.cc:10\n"
      "removed kernel snap4::added CPU [kernel] registered at "
      "plugin.cc:11\n"
      "overridden kernel snap4::g CPU [kernel] registered at plugin.cc:11\n"
      "    -> [kernel] registered at base.cc:2\n"
      "removed fallback PrivateUse1 [backend fallback] fallthrough "
      "registered at plugin.cc:12\n");

  // Dropping a kernel whose key then has nothing is a removal.
  base_cpu.reset();
  RegistryDiff dropped = diffSnapshots(before, takeRegistrySnapshot());
  EXPECT_THAT(dropped.toString(),
              HasSubstr("removed kernel snap4::h CPU [kernel] registered at "
                        "base.cc:2\n"));
}

TEST(RegistryDiff, UndoingRegistrationsGivesNoChanges) {
  RegistrySnapshot before = takeRegistrySnapshot();
  {
    Library lib(Library::DEF, "snap5", std::nullopt, "x.cc", 1);
    lib.def("f(Tensor x) -> Tensor", TURNOUT_FN(fnCpu));
    EXPECT_FALSE(diffSnapshots(before, takeRegistrySnapshot()).empty());
  }
  RegistryDiff d = diffSnapshots(before, takeRegistrySnapshot());
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.toString(), "no changes\n");
}

TEST(RegistryDiff, SchemaChangeIsAnOverriddenOperator) {
  RegistrySnapshot before, after;
  OperatorRecord a{"n::f",
                   "n::f(Tensor x) -> Tensor",
                   "registered at a.cc:1",
                   "FROM_SCHEMA",
                   {},
                   {}};
  OperatorRecord b = a;
  b.schema = "n::f(Tensor x, int y) -> Tensor";
  b.site = "registered at b.cc:2";
  before.operators.push_back(a);
  after.operators.push_back(b);
  EXPECT_EQ(diffSnapshots(before, after).toString(),
            "overridden operator n::f(Tensor x, int y) -> Tensor  registered "
            "at b.cc:2\n    was: n::f(Tensor x) -> Tensor  registered at "
            "a.cc:1\n");
  EXPECT_EQ(diffSnapshots(before, after).toJson(), R"({
  "changes": [
    {
      "change": "overridden",
      "what": "operator",
      "op": "n::f",
      "key": "",
      "before": null,
      "after": null,
      "site_before": "registered at a.cc:1",
      "site_after": "registered at b.cc:2",
      "schema_before": "n::f(Tensor x) -> Tensor",
      "schema_after": "n::f(Tensor x, int y) -> Tensor"
    }
  ]
}
)");
  EXPECT_EQ(RegistryDiff().toJson(), "{\n  \"changes\": []\n}\n");
}

// Snapshots under registration from other threads: each sees whole
// operators (TSan checks the reads).
TEST(RegistrySnapshot, SafeWhileOtherThreadsRegister) {
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    int i = 0;
    while (!stop.load()) {
      Library lib(Library::FRAGMENT, "snap6", std::nullopt, "w.cc", i++);
      lib.def("f(Tensor x) -> Tensor");
      lib.impl("f", dispatch(DispatchKey::CPU, TURNOUT_FN(fnCpu)));
    }
  });
  for (int i = 0; i < 50; ++i) {
    RegistrySnapshot s = takeRegistrySnapshot();
    if (const OperatorRecord* r = s.find("snap6::f")) {
      // A def without its kernel is possible (between the two steps); a
      // kernel always names its site.
      for (const KernelRecord& k : r->table) EXPECT_FALSE(k.site.empty());
    }
    RegistrySnapshot::fromJson(s.toJson());
  }
  stop = true;
  writer.join();
}

}  // namespace
}  // namespace turnout

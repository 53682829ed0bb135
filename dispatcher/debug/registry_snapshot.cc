#include "dispatcher/debug/registry_snapshot.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_entry.h"
#include "nlohmann/json.hpp"

namespace turnout {
namespace {

// ---- JSON -------------------------------------------------------------------
//
// Through nlohmann/json. ordered_json keeps fields in the order they are set,
// so records read name, schema, site, ... rather than alphabetically.

using Json = nlohmann::ordered_json;

// Snapshots nest four deep; deeper text is not a snapshot, and the limit
// keeps a hostile file from building a tree that deep.
constexpr int kMaxDepth = 64;

constexpr char kHowToWrite[] =
    ". Write snapshots with `inspect snapshot` or "
    "RegistrySnapshot::toJson().";

// Pretty-printed, UTF-8 as it is; bytes that are not UTF-8 (a site is a file
// name, which need not be) become U+FFFD rather than an exception.
std::string dumpJson(const Json& j) {
  return j.dump(2, ' ', /*ensure_ascii=*/false,
                Json::error_handler_t::replace) +
         "\n";
}

Json recordJson(const KernelRecord& r) {
  return Json{{"key", r.key},
              {"kind", r.kind},
              {"site", r.site},
              {"fallthrough", r.fallthrough}};
}

// "line 2, column 7" of byte `offset` of `text` (both from 1; columns count
// bytes).
std::string lineAndColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t newline = before.rfind('\n');
  const size_t column =
      newline == std::string_view::npos ? offset + 1 : offset - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

[[noreturn]] void syntaxError(std::string_view origin, std::string_view text,
                              size_t offset, std::string_view what) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "reading a registry snapshot from ", origin, ": ",
                lineAndColumn(text, offset), ": ", what, kHowToWrite);
}

// `text` with each byte that starts no valid UTF-8 sequence written as
// <0xDE>: nlohmann quotes the bytes it read last ("last read: '...'"), which
// may end inside a character, and a message must stay UTF-8 (Python raises
// it as text).
std::string wholeCharacters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const std::string_view c = utf8CharAt(text, pos);
    if (c.size() == 1 && static_cast<unsigned char>(c[0]) >= 0x80) {
      static constexpr char kHex[] = "0123456789ABCDEF";
      const unsigned char byte = static_cast<unsigned char>(c[0]);
      out += "<0x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
      out += '>';
    } else {
      out += c;
    }
    pos += c.size();
  }
  return out;
}

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 1, column 6: " prefix (we give the position ourselves), the
// problem first: "unexpected end of input; expected ']' (syntax error while
// parsing array)".
std::string describe(const Json::exception& e) {
  std::string_view what = e.what();
  if (!what.empty() && what[0] == '[') {  // "[json.exception.parse_error.101] "
    const size_t bracket = what.find("] ");
    if (bracket != std::string_view::npos) what.remove_prefix(bracket + 2);
  }
  if (what.substr(0, 11) == "parse error") {  // "... at line 1, column 6: "
    const size_t colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  const size_t dash = what.find(" - ");
  if (dash == std::string_view::npos) return wholeCharacters(what);
  return wholeCharacters(what.substr(dash + 3)) + " (" +
         wholeCharacters(what.substr(0, dash)) + ")";
}

// An iterator over the text that records how far nlohmann's lexer has read,
// so that the errors it reports without a position (our depth limit, thrown
// from its parser callback; a number too large for a double) get one.
class ReadCursor {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ReadCursor(const char* p, const char** furthest)
      : p_(p), furthest_(furthest) {}
  reference operator*() const { return *p_; }
  ReadCursor& operator++() {
    *furthest_ = ++p_;
    return *this;
  }
  ReadCursor operator++(int) {
    ReadCursor old = *this;
    ++*this;
    return old;
  }
  bool operator==(const ReadCursor& o) const { return p_ == o.p_; }
  bool operator!=(const ReadCursor& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** furthest_;
};

struct TooDeep {};

// The JSON value of `text`; InvalidArgument with the line and column for text
// that is not JSON, nests deeper than kMaxDepth, or is over kMaxJsonBytes.
// No nlohmann exception leaves this function.
Json parseJson(std::string_view text, std::string_view origin) {
  TURNOUT_CHECK(text.size() <= RegistrySnapshot::kMaxJsonBytes,
                ErrorKind::InvalidArgument, "reading a registry snapshot from ",
                origin, ": the text is ", text.size(),
                " bytes, over the limit of ", RegistrySnapshot::kMaxJsonBytes,
                " bytes (a snapshot of the whole registry is about 1 MB), so "
                "it is not parsed; check that the file is a snapshot",
                kHowToWrite);
  const char* furthest = text.data();
  // The offset of the last byte nlohmann has read.
  auto last_read = [&] {
    const size_t read = furthest - text.data();
    return read == 0 ? 0 : read - 1;
  };
  const Json::parser_callback_t limit_depth =
      [](int depth, Json::parse_event_t event, Json&) {
        if ((event == Json::parse_event_t::object_start ||
             event == Json::parse_event_t::array_start) &&
            depth >= kMaxDepth) {
          throw TooDeep{};  // stops the parser; caught below
        }
        return true;
      };
  try {
    return Json::parse(ReadCursor(text.data(), &furthest),
                       ReadCursor(text.data() + text.size(), &furthest),
                       limit_depth);
  } catch (const TooDeep&) {
    // The lexer has just read the '[' or '{' that opened one level too many.
    syntaxError(origin, text, last_read(),
                "values nested too deeply (more than " +
                    std::to_string(kMaxDepth) +
                    " levels of arrays and objects; a snapshot has 4)");
  } catch (const Json::parse_error& e) {
    // e.byte counts the bytes read, the offending one included.
    syntaxError(origin, text, e.byte == 0 ? 0 : e.byte - 1, describe(e));
  } catch (const Json::exception& e) {
    // A number too large for a double: the lexer has read one byte past it.
    syntaxError(origin, text, last_read(), describe(e));
  }
}

// A field's expected type; Number stands for every kind of number.
enum class Type { Bool, Number, String, Array, Object };

bool hasType(const Json& v, Type t) {
  switch (t) {
    case Type::Bool:
      return v.is_boolean();
    case Type::Number:
      return v.is_number();
    case Type::String:
      return v.is_string();
    case Type::Array:
      return v.is_array();
    case Type::Object:
      return v.is_object();
  }
  return false;
}

const char* typeName(Type t) {
  switch (t) {
    case Type::Bool:
      return "a boolean";
    case Type::Number:
      return "a number";
    case Type::String:
      return "a string";
    case Type::Array:
      return "an array";
    case Type::Object:
      return "an object";
  }
  return "a value";
}

const char* typeName(const Json& v) {
  if (v.is_null()) return "null";
  for (Type t :
       {Type::Bool, Type::Number, Type::String, Type::Array, Type::Object}) {
    if (hasType(v, t)) return typeName(t);
  }
  return "a value";
}

// Typed access with errors naming the path inside the document.
[[noreturn]] void shapeError(std::string_view origin, const std::string& path,
                             const std::string& what) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "reading a registry snapshot from ", origin, ": ", path, ": ",
                what, kHowToWrite);
}

const Json& need(const Json& obj, std::string_view name, Type type,
                 std::string_view origin, const std::string& path) {
  const auto f = obj.find(name);
  if (f == obj.end()) {
    shapeError(origin, path, "missing field '" + std::string(name) + "'");
  }
  if (!hasType(*f, type)) {
    shapeError(
        origin, path + "." + std::string(name),
        std::string("expected ") + typeName(type) + ", found " + typeName(*f));
  }
  return *f;
}

std::string needString(const Json& obj, std::string_view name,
                       std::string_view origin, const std::string& path) {
  return need(obj, name, Type::String, origin, path).get<std::string>();
}

std::vector<KernelRecord> readRecords(const Json& array,
                                      std::string_view origin,
                                      const std::string& path) {
  std::vector<KernelRecord> out;
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const Json& r = array[i];
    if (!r.is_object()) {
      shapeError(origin, p,
                 std::string("expected an object, found ") + typeName(r));
    }
    KernelRecord k;
    k.key = needString(r, "key", origin, p);
    k.kind = needString(r, "kind", origin, p);
    k.site = needString(r, "site", origin, p);
    k.fallthrough = need(r, "fallthrough", Type::Bool, origin, p).get<bool>();
    out.push_back(std::move(k));
  }
  return out;
}

// ---- Diff -------------------------------------------------------------------

std::string recordText(const KernelRecord& r) {
  std::string out = "[" + r.kind + "]";
  if (r.fallthrough) out += " fallthrough";
  if (!r.site.empty()) out += " " + r.site;
  return out;
}

// Appends the changes between two lists of records keyed by `key`.
void diffRecords(const std::vector<KernelRecord>& before,
                 const std::vector<KernelRecord>& after,
                 RegistryChange::What what, const std::string& op,
                 std::vector<RegistryChange>* out) {
  std::map<std::string, const KernelRecord*> a, b;
  for (const KernelRecord& r : before) a[r.key] = &r;
  for (const KernelRecord& r : after) b[r.key] = &r;
  // Table order of the after snapshot where possible, then removed keys.
  std::vector<std::string> ordered;
  for (const KernelRecord& r : after) ordered.push_back(r.key);
  for (const KernelRecord& r : before) {
    if (b.count(r.key) == 0) ordered.push_back(r.key);
  }
  for (const std::string& k : ordered) {
    auto ia = a.find(k);
    auto ib = b.find(k);
    RegistryChange c;
    c.what = what;
    c.op = op;
    c.key = k;
    if (ia == a.end()) {
      c.change = RegistryChange::Change::Added;
      c.after = *ib->second;
    } else if (ib == b.end()) {
      c.change = RegistryChange::Change::Removed;
      c.before = *ia->second;
    } else if (*ia->second != *ib->second) {
      c.change = RegistryChange::Change::Overridden;
      c.before = *ia->second;
      c.after = *ib->second;
    } else {
      continue;
    }
    out->push_back(std::move(c));
  }
}

Json changeJson(const RegistryChange& c) {
  const bool is_op = c.what == RegistryChange::What::Operator;
  const bool no_before = c.change == RegistryChange::Change::Added || is_op;
  const bool no_after = c.change == RegistryChange::Change::Removed || is_op;
  return Json{{"change", toString(c.change)},
              {"what", toString(c.what)},
              {"op", c.op},
              {"key", c.key},
              {"before", no_before ? Json(nullptr) : recordJson(c.before)},
              {"after", no_after ? Json(nullptr) : recordJson(c.after)},
              {"site_before", c.before.site},
              {"site_after", c.after.site},
              {"schema_before", c.schema_before},
              {"schema_after", c.schema_after}};
}

}  // namespace

// ---- RegistrySnapshot -------------------------------------------------------

const OperatorRecord* RegistrySnapshot::find(std::string_view name) const {
  auto it = std::lower_bound(
      operators.begin(), operators.end(), name,
      [](const OperatorRecord& r, std::string_view n) { return r.name < n; });
  if (it != operators.end() && it->name == name) return &*it;
  return nullptr;
}

std::string RegistrySnapshot::toJson() const {
  Json ops = Json::array();
  for (const OperatorRecord& op : operators) {
    Json table = Json::array();
    for (const KernelRecord& k : op.table) table.push_back(recordJson(k));
    ops.push_back(Json{{"name", op.name},
                       {"schema", op.schema},
                       {"site", op.site},
                       {"alias_analysis", op.alias_analysis},
                       {"registered_keys", op.registered_keys},
                       {"table", std::move(table)}});
  }
  Json fbs = Json::array();
  for (const KernelRecord& f : fallbacks) fbs.push_back(recordJson(f));
  return dumpJson(Json{{"format", "turnout.registry_snapshot"},
                       {"version", 1},
                       {"operators", std::move(ops)},
                       {"fallbacks", std::move(fbs)}});
}

RegistrySnapshot RegistrySnapshot::fromJson(std::string_view json,
                                            std::string_view origin) {
  const Json doc = parseJson(json, origin);
  if (!doc.is_object()) {
    shapeError(origin, "the document",
               std::string("expected an object, found ") + typeName(doc));
  }
  const std::string format = needString(doc, "format", origin, "the document");
  if (format != "turnout.registry_snapshot") {
    shapeError(
        origin, "format",
        "expected \"turnout.registry_snapshot\", found \"" + format + "\"");
  }
  const Json& version =
      need(doc, "version", Type::Number, origin, "the document");
  if (version.get<double>() != 1) {
    shapeError(origin, "version",
               "this turnout reads version 1, found " + version.dump());
  }
  RegistrySnapshot s;
  const Json& ops = need(doc, "operators", Type::Array, origin, "the document");
  for (size_t i = 0; i < ops.size(); ++i) {
    const Json& o = ops[i];
    const std::string p = "operators[" + std::to_string(i) + "]";
    if (!o.is_object()) {
      shapeError(origin, p,
                 std::string("expected an object, found ") + typeName(o));
    }
    OperatorRecord r;
    r.name = needString(o, "name", origin, p);
    r.schema = needString(o, "schema", origin, p);
    r.site = needString(o, "site", origin, p);
    r.alias_analysis = needString(o, "alias_analysis", origin, p);
    const Json& keys = need(o, "registered_keys", Type::Array, origin, p);
    for (size_t k = 0; k < keys.size(); ++k) {
      if (!keys[k].is_string()) {
        shapeError(
            origin, p + ".registered_keys[" + std::to_string(k) + "]",
            std::string("expected a string, found ") + typeName(keys[k]));
      }
      r.registered_keys.push_back(keys[k].get<std::string>());
    }
    r.table = readRecords(need(o, "table", Type::Array, origin, p), origin,
                          p + ".table");
    s.operators.push_back(std::move(r));
  }
  std::sort(s.operators.begin(), s.operators.end(),
            [](const OperatorRecord& a, const OperatorRecord& b) {
              return a.name < b.name;
            });
  for (size_t i = 1; i < s.operators.size(); ++i) {
    if (s.operators[i].name == s.operators[i - 1].name) {
      shapeError(origin, "operators",
                 "operator '" + s.operators[i].name + "' appears twice");
    }
  }
  s.fallbacks =
      readRecords(need(doc, "fallbacks", Type::Array, origin, "the document"),
                  origin, "fallbacks");
  return s;
}

RegistrySnapshot takeRegistrySnapshot() {
  Dispatcher& d = Dispatcher::singleton();
  // Every operator with a schema or a kernel. Looked up before taking the
  // lock (these take it themselves); entries are never freed, and one found
  // empty under the lock (deregistered since) is skipped.
  std::vector<OperatorHandle> handles;
  for (const OperatorName& name : d.getAllOpNames()) {
    if (std::optional<OperatorHandle> h = d.findOp(name)) handles.push_back(*h);
  }
  for (const OperatorHandle& h : d.findDanglingImpls()) handles.push_back(h);

  RegistrySnapshot s;
  std::lock_guard<std::mutex> lock(d.registryMutex());
  for (const OperatorHandle& h : handles) {
    const OperatorEntry& e = *h.entry();
    std::vector<DispatchKey> keys = e.registeredKeys();
    if (!e.hasSchema() && keys.empty()) continue;
    OperatorRecord r;
    r.name = toString(e.operator_name());
    if (e.hasSchema()) {
      r.schema = toString(e.schema());
      r.site = e.schemaDebug();
      r.alias_analysis = toString(e.aliasAnalysis());
    }
    for (DispatchKey k : keys) {
      r.registered_keys.push_back(k == DispatchKey::Undefined
                                      ? "CompositeImplicitAutograd"
                                      : toString(k));
    }
    for (DispatchKey k : detail::allRuntimeKeys()) {
      const ComputedEntry& c = e.computedEntry(k);
      if (c.kind == EntryKind::Missing ||
          c.kind == EntryKind::BackendFallback) {
        continue;
      }
      KernelRecord k_rec{toString(k), toString(c.kind), "", false};
      if (c.source != nullptr) {
        k_rec.site = c.source->debug;
        k_rec.fallthrough = c.source->kernel.isFallthrough();
      }
      r.table.push_back(std::move(k_rec));
    }
    s.operators.push_back(std::move(r));
  }
  for (DispatchKey k : detail::allRuntimeKeys()) {
    const AnnotatedKernel* f =
        d.backendFallback(getDispatchTableIndexForDispatchKey(k));
    if (f == nullptr) continue;
    s.fallbacks.push_back(KernelRecord{toString(k),
                                       toString(EntryKind::BackendFallback),
                                       f->debug, f->kernel.isFallthrough()});
  }
  std::sort(s.operators.begin(), s.operators.end(),
            [](const OperatorRecord& a, const OperatorRecord& b) {
              return a.name < b.name;
            });
  // The same entry can be reached by two names only if the index is broken.
  s.operators.erase(
      std::unique(s.operators.begin(), s.operators.end(),
                  [](const OperatorRecord& a, const OperatorRecord& b) {
                    return a.name == b.name;
                  }),
      s.operators.end());
  return s;
}

// ---- Diff -------------------------------------------------------------------

const char* toString(RegistryChange::Change c) {
  switch (c) {
    case RegistryChange::Change::Added:
      return "added";
    case RegistryChange::Change::Overridden:
      return "overridden";
    case RegistryChange::Change::Removed:
      return "removed";
  }
  return "changed";
}

const char* toString(RegistryChange::What w) {
  switch (w) {
    case RegistryChange::What::Operator:
      return "operator";
    case RegistryChange::What::Kernel:
      return "kernel";
    case RegistryChange::What::Fallback:
      return "fallback";
  }
  return "entry";
}

std::string RegistryChange::toString() const {
  std::string out = std::string(turnout::toString(change)) + " " +
                    turnout::toString(what) + " ";
  if (what == What::Operator) {
    const std::string& schema =
        change == Change::Removed ? schema_before : schema_after;
    out += schema.empty() ? op + " (no schema)" : schema;
    const std::string& site =
        change == Change::Removed ? before.site : after.site;
    if (!site.empty()) out += "  " + site;
    if (change == Change::Overridden) {
      out += "\n    was: " +
             (schema_before.empty() ? "(no schema)" : schema_before);
      if (!before.site.empty()) out += "  " + before.site;
    }
    return out;
  }
  if (what == What::Kernel) out += op + " ";
  out += key + " ";
  switch (change) {
    case Change::Added:
      out += recordText(after);
      break;
    case Change::Removed:
      out += recordText(before);
      break;
    case Change::Overridden:
      out += recordText(before) + "\n    -> " + recordText(after);
      break;
  }
  return out;
}

std::string RegistryDiff::toString() const {
  if (changes.empty()) return "no changes\n";
  std::string out;
  for (const RegistryChange& c : changes) out += c.toString() + "\n";
  return out;
}

std::string RegistryDiff::toJson() const {
  Json list = Json::array();
  for (const RegistryChange& c : changes) list.push_back(changeJson(c));
  return dumpJson(Json{{"changes", std::move(list)}});
}

RegistryDiff diffSnapshots(const RegistrySnapshot& before,
                           const RegistrySnapshot& after) {
  RegistryDiff d;
  static const std::vector<KernelRecord> kNone;
  // Both operator lists are sorted by name: merge them.
  size_t i = 0, j = 0;
  while (i < before.operators.size() || j < after.operators.size()) {
    const OperatorRecord* a =
        i < before.operators.size() ? &before.operators[i] : nullptr;
    const OperatorRecord* b =
        j < after.operators.size() ? &after.operators[j] : nullptr;
    if (a != nullptr && b != nullptr && a->name == b->name) {
      if (a->schema != b->schema || a->site != b->site) {
        RegistryChange c;
        c.change = RegistryChange::Change::Overridden;
        c.what = RegistryChange::What::Operator;
        c.op = a->name;
        c.before.site = a->site;
        c.after.site = b->site;
        c.schema_before = a->schema;
        c.schema_after = b->schema;
        d.changes.push_back(std::move(c));
      }
      diffRecords(a->table, b->table, RegistryChange::What::Kernel, a->name,
                  &d.changes);
      ++i;
      ++j;
    } else if (b == nullptr || (a != nullptr && a->name < b->name)) {
      RegistryChange c;
      c.change = RegistryChange::Change::Removed;
      c.what = RegistryChange::What::Operator;
      c.op = a->name;
      c.before.site = a->site;
      c.schema_before = a->schema;
      d.changes.push_back(std::move(c));
      diffRecords(a->table, kNone, RegistryChange::What::Kernel, a->name,
                  &d.changes);
      ++i;
    } else {
      RegistryChange c;
      c.change = RegistryChange::Change::Added;
      c.what = RegistryChange::What::Operator;
      c.op = b->name;
      c.after.site = b->site;
      c.schema_after = b->schema;
      d.changes.push_back(std::move(c));
      diffRecords(kNone, b->table, RegistryChange::What::Kernel, b->name,
                  &d.changes);
      ++j;
    }
  }
  diffRecords(before.fallbacks, after.fallbacks, RegistryChange::What::Fallback,
              "", &d.changes);
  return d;
}

}  // namespace turnout

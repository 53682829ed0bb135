#include "dispatcher/debug/registry_snapshot.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/debug/json_writer.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_entry.h"

namespace turnout {
namespace {

// ---- JSON writing (strings: json_writer.h) ----------------------------------

void appendRecord(std::string* out, const KernelRecord& r) {
  *out += "{\"key\": ";
  appendJsonString(out, r.key);
  *out += ", \"kind\": ";
  appendJsonString(out, r.kind);
  *out += ", \"site\": ";
  appendJsonString(out, r.site);
  *out += ", \"fallthrough\": ";
  *out += r.fallthrough ? "true" : "false";
  *out += "}";
}

// ---- JSON reading: a small recursive-descent parser into a tree
// ---------------

struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool b = false;
  double number = 0;
  std::string str;
  std::vector<Json> items;                           // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in order

  const Json* field(std::string_view name) const {
    for (const auto& f : fields) {
      if (f.first == name) return &f.second;
    }
    return nullptr;
  }
};

const char* typeName(Json::Type t) {
  switch (t) {
    case Json::Type::Null:
      return "null";
    case Json::Type::Bool:
      return "a boolean";
    case Json::Type::Number:
      return "a number";
    case Json::Type::String:
      return "a string";
    case Json::Type::Array:
      return "an array";
    case Json::Type::Object:
      return "an object";
  }
  return "a value";
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view origin)
      : text_(text), origin_(origin) {}

  Json parseDocument() {
    Json v = parseValue(0);
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return v;
  }

  [[noreturn]] void fail(std::string_view what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                  "reading a registry snapshot from ", origin_, ": line ", line,
                  ", column ", col, ": ", what,
                  ". Write snapshots with `inspect snapshot` or "
                  "RegistrySnapshot::toJson().");
  }

 private:
  static constexpr int kMaxDepth = 64;

  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  Json parseValue(int depth) {
    if (depth > kMaxDepth) fail("values nested too deeply");
    skipSpace();
    if (pos_ >= text_.size()) fail("unexpected end of input, expected a value");
    Json v;
    const char c = text_[pos_];
    if (c == '{') {
      v.type = Json::Type::Object;
      ++pos_;
      skipSpace();
      if (consume("}")) return v;
      while (true) {
        skipSpace();
        if (pos_ >= text_.size()) {
          fail("unexpected end of input, expected a quoted field name");
        }
        if (text_[pos_] != '"') fail("expected a quoted field name");
        std::string name = parseString();
        skipSpace();
        if (!consume(":")) fail("expected ':' after a field name");
        v.fields.emplace_back(std::move(name), parseValue(depth + 1));
        skipSpace();
        if (consume("}")) return v;
        if (!consume(",")) fail("expected ',' or '}' in an object");
      }
    }
    if (c == '[') {
      v.type = Json::Type::Array;
      ++pos_;
      skipSpace();
      if (consume("]")) return v;
      while (true) {
        v.items.push_back(parseValue(depth + 1));
        skipSpace();
        if (consume("]")) return v;
        if (!consume(",")) fail("expected ',' or ']' in an array");
      }
    }
    if (c == '"') {
      v.type = Json::Type::String;
      v.str = parseString();
      return v;
    }
    if (consume("true")) {
      v.type = Json::Type::Bool;
      v.b = true;
      return v;
    }
    if (consume("false")) {
      v.type = Json::Type::Bool;
      return v;
    }
    if (consume("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t start = pos_;
      ++pos_;
      while (pos_ < text_.size() &&
             std::string_view("0123456789.eE+-").find(text_[pos_]) !=
                 std::string_view::npos) {
        ++pos_;
      }
      std::string digits(text_.substr(start, pos_ - start));
      char* end = nullptr;
      v.type = Json::Type::Number;
      v.number = std::strtod(digits.c_str(), &end);
      if (end != digits.c_str() + digits.size()) {
        pos_ = start;
        fail("malformed number");
      }
      return v;
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  static void appendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xc0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xe0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      *out += static_cast<char>(0xf0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      *out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  uint32_t parseHex4() {
    if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
    uint32_t cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') {
        cp |= h - '0';
      } else if (h >= 'a' && h <= 'f') {
        cp |= h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        cp |= h - 'A' + 10;
      } else {
        fail("malformed \\u escape");
      }
    }
    return cp;
  }

  // Precondition: text_[pos_] == '"'.
  std::string parseString() {
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        fail("control character inside a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = parseHex4();
          if (cp >= 0xd800 && cp < 0xdc00 && consume("\\u")) {
            const uint32_t low = parseHex4();
            if (low < 0xdc00 || low >= 0xe000) fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          appendUtf8(&out, cp);
          break;
        }
        default:
          --pos_;
          fail(std::string("unknown escape '\\") + e + "'");
      }
    }
  }

  std::string_view text_;
  std::string_view origin_;
  size_t pos_ = 0;
};

// Typed access with errors naming the path inside the document.
[[noreturn]] void shapeError(std::string_view origin, const std::string& path,
                             const std::string& what) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "reading a registry snapshot from ", origin, ": ", path, ": ",
                what,
                ". Write snapshots with `inspect snapshot` or "
                "RegistrySnapshot::toJson().");
}

const Json& need(const Json& obj, std::string_view name, Json::Type type,
                 std::string_view origin, const std::string& path) {
  const Json* f = obj.field(name);
  if (f == nullptr) {
    shapeError(origin, path, "missing field '" + std::string(name) + "'");
  }
  if (f->type != type) {
    shapeError(origin, path + "." + std::string(name),
               std::string("expected ") + typeName(type) + ", found " +
                   typeName(f->type));
  }
  return *f;
}

std::string needString(const Json& obj, std::string_view name,
                       std::string_view origin, const std::string& path) {
  return need(obj, name, Json::Type::String, origin, path).str;
}

std::vector<KernelRecord> readRecords(const Json& array,
                                      std::string_view origin,
                                      const std::string& path) {
  std::vector<KernelRecord> out;
  for (size_t i = 0; i < array.items.size(); ++i) {
    const std::string p = path + "[" + std::to_string(i) + "]";
    const Json& r = array.items[i];
    if (r.type != Json::Type::Object) {
      shapeError(origin, p,
                 std::string("expected an object, found ") + typeName(r.type));
    }
    KernelRecord k;
    k.key = needString(r, "key", origin, p);
    k.kind = needString(r, "kind", origin, p);
    k.site = needString(r, "site", origin, p);
    k.fallthrough = need(r, "fallthrough", Json::Type::Bool, origin, p).b;
    out.push_back(std::move(k));
  }
  return out;
}

// ---- Diff
// ---------------------------------------------------------------------

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

void appendChangeJson(std::string* out, const RegistryChange& c) {
  *out += "{\"change\": ";
  appendJsonString(out, toString(c.change));
  *out += ", \"what\": ";
  appendJsonString(out, toString(c.what));
  *out += ", \"op\": ";
  appendJsonString(out, c.op);
  *out += ", \"key\": ";
  appendJsonString(out, c.key);
  const bool is_op = c.what == RegistryChange::What::Operator;
  *out += ", \"before\": ";
  if (c.change == RegistryChange::Change::Added || is_op) {
    *out += "null";
  } else {
    appendRecord(out, c.before);
  }
  *out += ", \"after\": ";
  if (c.change == RegistryChange::Change::Removed || is_op) {
    *out += "null";
  } else {
    appendRecord(out, c.after);
  }
  *out += ", \"site_before\": ";
  appendJsonString(out, c.before.site);
  *out += ", \"site_after\": ";
  appendJsonString(out, c.after.site);
  *out += ", \"schema_before\": ";
  appendJsonString(out, c.schema_before);
  *out += ", \"schema_after\": ";
  appendJsonString(out, c.schema_after);
  *out += "}";
}

}  // namespace

// ---- RegistrySnapshot
// -------------------------------------------------------------

const OperatorRecord* RegistrySnapshot::find(std::string_view name) const {
  auto it = std::lower_bound(
      operators.begin(), operators.end(), name,
      [](const OperatorRecord& r, std::string_view n) { return r.name < n; });
  if (it != operators.end() && it->name == name) return &*it;
  return nullptr;
}

std::string RegistrySnapshot::toJson() const {
  std::string out =
      "{\n  \"format\": \"turnout.registry_snapshot\",\n  \"version\": 1,\n"
      "  \"operators\": [";
  for (size_t i = 0; i < operators.size(); ++i) {
    const OperatorRecord& op = operators[i];
    out += i == 0 ? "\n" : ",\n";
    out += "    {\"name\": ";
    appendJsonString(&out, op.name);
    out += ", \"schema\": ";
    appendJsonString(&out, op.schema);
    out += ", \"site\": ";
    appendJsonString(&out, op.site);
    out += ", \"alias_analysis\": ";
    appendJsonString(&out, op.alias_analysis);
    out += ",\n     \"registered_keys\": [";
    for (size_t k = 0; k < op.registered_keys.size(); ++k) {
      if (k > 0) out += ", ";
      appendJsonString(&out, op.registered_keys[k]);
    }
    out += "],\n     \"table\": [";
    for (size_t k = 0; k < op.table.size(); ++k) {
      out += k == 0 ? "\n       " : ",\n       ";
      appendRecord(&out, op.table[k]);
    }
    out += "]}";
  }
  out += "\n  ],\n  \"fallbacks\": [";
  for (size_t i = 0; i < fallbacks.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    appendRecord(&out, fallbacks[i]);
  }
  out += "\n  ]\n}\n";
  return out;
}

RegistrySnapshot RegistrySnapshot::fromJson(std::string_view json,
                                            std::string_view origin) {
  Parser parser(json, origin);
  const Json doc = parser.parseDocument();
  if (doc.type != Json::Type::Object) {
    shapeError(origin, "the document",
               std::string("expected an object, found ") + typeName(doc.type));
  }
  const std::string format = needString(doc, "format", origin, "the document");
  if (format != "turnout.registry_snapshot") {
    shapeError(
        origin, "format",
        "expected \"turnout.registry_snapshot\", found \"" + format + "\"");
  }
  const double version =
      need(doc, "version", Json::Type::Number, origin, "the document").number;
  if (version != 1) {
    shapeError(
        origin, "version",
        "this turnout reads version 1, found " + std::to_string(version));
  }
  RegistrySnapshot s;
  const Json& ops =
      need(doc, "operators", Json::Type::Array, origin, "the document");
  for (size_t i = 0; i < ops.items.size(); ++i) {
    const Json& o = ops.items[i];
    const std::string p = "operators[" + std::to_string(i) + "]";
    if (o.type != Json::Type::Object) {
      shapeError(origin, p,
                 std::string("expected an object, found ") + typeName(o.type));
    }
    OperatorRecord r;
    r.name = needString(o, "name", origin, p);
    r.schema = needString(o, "schema", origin, p);
    r.site = needString(o, "site", origin, p);
    r.alias_analysis = needString(o, "alias_analysis", origin, p);
    const Json& keys = need(o, "registered_keys", Json::Type::Array, origin, p);
    for (size_t k = 0; k < keys.items.size(); ++k) {
      if (keys.items[k].type != Json::Type::String) {
        shapeError(origin, p + ".registered_keys[" + std::to_string(k) + "]",
                   std::string("expected a string, found ") +
                       typeName(keys.items[k].type));
      }
      r.registered_keys.push_back(keys.items[k].str);
    }
    r.table = readRecords(need(o, "table", Json::Type::Array, origin, p),
                          origin, p + ".table");
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
  s.fallbacks = readRecords(
      need(doc, "fallbacks", Json::Type::Array, origin, "the document"), origin,
      "fallbacks");
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

// ---- Diff
// -----------------------------------------------------------------------------

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
  std::string out = "{\"changes\": [";
  for (size_t i = 0; i < changes.size(); ++i) {
    out += i == 0 ? "\n  " : ",\n  ";
    appendChangeJson(&out, changes[i]);
  }
  out += "\n]}\n";
  return out;
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

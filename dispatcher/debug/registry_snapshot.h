// Registry snapshots: every operator with its schema, what each runtime key
// of it runs (kind and registration site), and every backend fallback; as
// JSON, and the difference between two snapshots.
//
//   RegistrySnapshot before = takeRegistrySnapshot();
//   void* lib = dlopen("libmyops.so", RTLD_NOW | RTLD_GLOBAL);
//   RegistryDiff d = diffSnapshots(before, takeRegistrySnapshot());
//   std::cout << d.toString();
//   // added operator myops::scale(Tensor x) -> Tensor  registered at my.cc:4
//   // added kernel myops::scale CPU [kernel] registered at my.cc:9
//   // overridden kernel aten::relu CPU [kernel] registered at kernels/x.cc:3
//   //     -> [kernel] registered at my.cc:12
//
// A table entry records where the call goes: entries that are missing, and
// entries served by a backend fallback, are left out of the operator's table
// (the fallbacks are listed once, in `fallbacks`), so that registering one
// fallback changes one line of a diff, not one per operator.
//
// Thread safety: takeRegistrySnapshot() holds the registry lock while it
// reads, so a snapshot is consistent; snapshots are plain values.
#ifndef TURNOUT_DISPATCHER_DEBUG_REGISTRY_SNAPSHOT_H_
#define TURNOUT_DISPATCHER_DEBUG_REGISTRY_SNAPSHOT_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace turnout {

/// One runtime key's table entry, or one backend fallback.
struct KernelRecord {
  std::string key;   // "CPU", "AutogradCPU"
  std::string kind;  // "kernel", "math kernel", ... (toString(EntryKind))
  std::string site;  // "registered at f.cc:12", or the kernel's debug name
  bool fallthrough = false;

  bool operator==(const KernelRecord& o) const {
    return key == o.key && kind == o.kind && site == o.site &&
           fallthrough == o.fallthrough;
  }
  bool operator!=(const KernelRecord& o) const { return !(*this == o); }
};

struct OperatorRecord {
  std::string name;    // "aten::add.Tensor"
  std::string schema;  // "" when the operator has kernels but no schema
  std::string site;    // where the schema was registered ("" without one)
  std::string alias_analysis;  // "FROM_SCHEMA", ... ("" without a schema)
  /// Keys with kernels registered directly (alias keys included), in enum
  /// order: "CPU", "Autograd", "CompositeImplicitAutograd".
  std::vector<std::string> registered_keys;
  /// Non-missing, non-fallback entries, in table order.
  std::vector<KernelRecord> table;
};

struct RegistrySnapshot {
  std::vector<OperatorRecord> operators;  // sorted by name
  std::vector<KernelRecord> fallbacks;    // kind "backend fallback"

  /// The operator called `name`, or null.
  const OperatorRecord* find(std::string_view name) const;

  /// JSON, indented by two spaces, fields in this order:
  ///   {"format": "turnout.registry_snapshot", "version": 1,
  ///    "operators": [{"name": ..., "schema": ..., "site": ...,
  ///                   "alias_analysis": ..., "registered_keys": [...],
  ///                   "table": [{"key": ..., "kind": ..., "site": ...,
  ///                              "fallthrough": false}, ...]}, ...],
  ///    "fallbacks": [{"key": ..., "kind": ..., "site": ..., ...}, ...]}
  /// Strings are UTF-8; bytes that are not UTF-8 are written as U+FFFD.
  std::string toJson() const;
  /// The inverse of toJson(); also reads every snapshot earlier turnouts
  /// wrote (same fields, other whitespace). Throws InvalidArgument naming
  /// `origin` (a file name, for the message), the line and column, and what
  /// was expected, for text that is not JSON, nests arrays and objects more
  /// than 64 deep, is longer than kMaxJsonBytes, or is not a snapshot.
  static RegistrySnapshot fromJson(std::string_view json,
                                   std::string_view origin = "<string>");
  /// fromJson() reads at most this much text (64 MiB; a snapshot of the
  /// whole registry is about 1 MB).
  static constexpr size_t kMaxJsonBytes = size_t{64} << 20;
};

/// The registry as it is now (takes the registry lock).
RegistrySnapshot takeRegistrySnapshot();

/// One difference between two snapshots.
struct RegistryChange {
  enum class Change { Added, Overridden, Removed };
  enum class What { Operator, Kernel, Fallback };
  Change change;
  What what;
  std::string op;   // the operator ("" for a fallback)
  std::string key;  // the runtime key ("" for an operator)
  /// For an operator: its schema and site; for a kernel or fallback: the
  /// entry. `before` is empty for Added, `after` for Removed.
  KernelRecord before;
  KernelRecord after;
  std::string schema_before;
  std::string schema_after;

  /// One line, as RegistryDiff::toString prints it.
  std::string toString() const;
};

const char* toString(RegistryChange::Change c);  // "added", "overridden", ...
const char* toString(RegistryChange::What w);    // "operator", "kernel", ...

struct RegistryDiff {
  /// Operators by name (an operator's own change before its kernels'),
  /// then fallbacks by key.
  std::vector<RegistryChange> changes;

  bool empty() const { return changes.empty(); }
  /// One line per change; "no changes\n" when empty.
  std::string toString() const;
  /// {"changes": [{"change": "added", "what": "kernel", "op": ..., "key": ...,
  ///   "before": {...} or null, "after": {...} or null,
  ///   "schema_before": ..., "schema_after": ...}, ...]}
  std::string toJson() const;
};

/// What changed from `before` to `after`: operators and kernels (per runtime
/// key) added, removed, or overridden (another kernel, kind or site for the
/// same key; another schema or site for an operator), and the same for
/// backend fallbacks.
RegistryDiff diffSnapshots(const RegistrySnapshot& before,
                           const RegistrySnapshot& after);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_REGISTRY_SNAPSHOT_H_

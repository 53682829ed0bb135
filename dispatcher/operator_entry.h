// OperatorEntry: everything the dispatcher knows about one operator: its
// schema, the kernels registered per key (newest first), and the computed
// table that calls read.
//
// Registration side (every member below except table_) is guarded by the
// Dispatcher's registry lock; the call side reads only table_, lock-free.
//
// Invariants (checkInvariants() asserts them):
//   - table_ is never null once the entry is reachable (the dispatcher
//     computes it before publishing the entry) and equals what
//     computeTable() gives now;
//   - regs_ is null iff the operator has no def and no kernel, and then
//     table_ is the dispatcher's shared fallback table (not owned);
//   - every kernel list is non-empty, and every kernel is valid;
//   - the op has a schema iff def_count_ > 0, and tags only with a schema;
//   - def_and_impl_count_ == def_count_ + the number of kernels;
//   - every unboxed kernel has cpp_signature_'s signature.
//
// Entries are never freed: an OperatorHandle stays valid for the life of the
// process, and calling an operator whose registrations are all gone is a
// clean error, never a use-after-free. What an operator with no def and no
// kernel keeps is the entry itself (its name, its counts, a pointer to the
// shared table): its schema, kernels and table are freed (the table once no
// call can be using it), so that defining and removing operators with fresh
// names does not grow the process (issue 17: a few hundred bytes a name).
#ifndef TURNOUT_DISPATCHER_OPERATOR_ENTRY_H_
#define TURNOUT_DISPATCHER_OPERATOR_ENTRY_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/call_section.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/cpp_signature.h"
#include "dispatcher/dispatch_table.h"
#include "dispatcher/fallback_filter.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/operator_name.h"

namespace turnout {

class Dispatcher;

/// How the graph layer should treat the operator's aliasing.
enum class AliasAnalysisKind {
  INTERNAL_SPECIAL_CASE,
  CONSERVATIVE,
  FROM_SCHEMA,
  PURE_FUNCTION,
};
const char* toString(AliasAnalysisKind kind);
/// Parses "FROM_SCHEMA", "CONSERVATIVE", "PURE_FUNCTION", or "" (the default,
/// FROM_SCHEMA). Throws InvalidArgument naming the accepted values.
AliasAnalysisKind parseAliasAnalysisKind(std::string_view name);

/// Checks the tags given with the schema of operator `op`: each a non-empty
/// identifier ([A-Za-z_][A-Za-z0-9_]*, e.g. "pointwise", "core"), none given
/// twice. Throws InvalidArgument naming the operator and the bad tag.
void checkOperatorTags(const OperatorName& op,
                       const std::vector<std::string>& tags);

/// Where a computed table entry came from (c10's vocabulary).
enum class EntryKind : uint8_t {
  Missing,
  Kernel,
  DefaultBackendKernel,
  NestedKernel,
  MathKernel,
  AmbiguousAutogradOther,
  AutogradKernel,
  BatchedDecomposition,
  BackendFallback,
};
/// "kernel", "math kernel", "default backend kernel", "autograd kernel",
/// "backend fallback", "ambiguous autogradother", "missing", ...
const char* toString(EntryKind kind);

/// One registered kernel and what the dumps and errors say about it.
struct AnnotatedKernel {
  KernelFunction kernel;
  std::optional<std::string> inferred_schema;  // "(Tensor _0) -> Tensor _0"
  std::optional<CppSignature> cpp_signature;
  std::string debug;  // "registered at file.cc:12", or a kernel name
  // Backend fallbacks only: the calls the fallback must see (the others
  // pass it unboxed; fallback_filter.h).
  std::optional<FallbackFilter> fallback_filter;
};

/// One computed table entry with its provenance, for dumps and explain().
struct ComputedEntry {
  EntryKind kind = EntryKind::Missing;
  const AnnotatedKernel* source = nullptr;  // null for Missing / Ambiguous
};

class OperatorEntry {
 public:
  explicit OperatorEntry(OperatorName name);
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  // ---- Call side (lock-free) -------------------------------------------------
  /// The published table, for a HazardGuard: what calls use.
  const std::atomic<const DispatchTable*>& publishedTable() const {
    return table_;
  }
  /// The published table. Precondition: the caller is inside a CallSection
  /// or holds the registry lock for as long as it uses the table.
  const DispatchTable& table() const {
    return *table_.load(detail::kReadOrder);
  }
  const OperatorName& operator_name() const { return name_; }

  // ---- Registration side (registry lock held) -----------------------------------
  bool hasSchema() const { return regs_ != nullptr && regs_->schema; }
  const FunctionSchema& schema() const;
  const std::string& schemaDebug() const;
  AliasAnalysisKind aliasAnalysis() const;
  /// The tags given with the schema (torch's OpOverload.tags), in the order
  /// given; empty without a schema.
  const std::vector<std::string>& tags() const;

  /// Installs the schema and its tags. Throws (leaving everything unchanged)
  /// when the registered kernels' inferred schemas disagree with it, or a
  /// tag is not a valid tag (see checkOperatorTags).
  void registerSchema(FunctionSchema schema, std::string debug,
                      AliasAnalysisKind kind,
                      std::vector<std::string> tags = {});
  void deregisterSchema();

  /// Adds a kernel for `key` (an alias key, a runtime key, or Undefined for
  /// "no key": CompositeImplicitAutograd). Throws, leaving everything
  /// unchanged, on a schema or C++ signature mismatch.
  using KernelIterator = std::list<AnnotatedKernel>::iterator;
  KernelIterator registerKernel(DispatchKey key, AnnotatedKernel kernel);
  void deregisterKernel(DispatchKey key, KernelIterator it);

  /// Recomputes and publishes the table (after any registration change, or a
  /// backend fallback change in `dispatcher`). With no def and no kernel
  /// left, frees the registrations and points the entry at the dispatcher's
  /// shared fallback table; the old table is retired.
  void updateTable(const Dispatcher& dispatcher);
  /// Whether the operator has no def and no kernel (and holds no memory of
  /// its own beyond the entry).
  bool isEmpty() const { return regs_ == nullptr; }

  // Written under the registry lock only; read without it by
  // Dispatcher::findSchemaOrThrow, hence atomic (relaxed: it is a hint, the
  // handle stays valid whatever happens to the def afterwards).
  std::atomic<int> def_count_{0};
  int def_and_impl_count_ = 0;

  // ---- Queries (registry lock held) ------------------------------------------
  bool hasKernelForDispatchKey(DispatchKey k) const;
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const;
  const ComputedEntry& computedEntry(DispatchKey runtime_key) const;
  std::string dumpState() const;
  std::string dumpComputedTable() const;
  /// One line per non-missing entry: "CPU: registered at x.cc:3 [kernel]".
  std::string computedEntryLine(DispatchKey k) const;
  /// The "Could not run ..." error for a call that reached `k`, with the
  /// registration that would fix it as its fix-it.
  Error missingKernelError(DispatchKey k, DispatchKeySet ks) const;
  /// Keys registered directly on this operator (runtime and alias).
  std::vector<DispatchKey> registeredKeys() const;
  void checkInvariants(const Dispatcher& dispatcher) const;
  /// The C++ signature of the unboxed kernels and where one was registered.
  std::optional<std::pair<CppSignature, std::string>> cppSignatureInUse() const;

 private:
  struct KeyKernels {
    DispatchKey key;
    std::list<AnnotatedKernel> kernels;  // newest first
  };
  const std::list<AnnotatedKernel>* kernelsFor(DispatchKey k) const;
  void checkKernelAgainstSchema(DispatchKey key, const AnnotatedKernel& k,
                                const FunctionSchema& schema,
                                const std::string& schema_debug) const;
  void checkCppSignature(DispatchKey key, const AnnotatedKernel& k) const;

  // Builds the table from the registrations and the backend fallbacks.
  void computeTable(const Dispatcher& dispatcher, DispatchTable* table,
                    std::array<ComputedEntry, kNumRuntimeEntries>* info) const;
  // The kernel entries and fallthrough masks, from scratch.
  void computeKernelEntries(
      const Dispatcher& dispatcher, DispatchTable* table,
      std::array<ComputedEntry, kNumRuntimeEntries>* info) const;
  friend class Dispatcher;  // builds its FallbackTable with an empty entry

  // Everything an operator with a def or a kernel has; freed with the last
  // of them.
  struct Registrations {
    std::optional<FunctionSchema> schema;
    std::string schema_debug;
    AliasAnalysisKind alias_analysis = AliasAnalysisKind::FROM_SCHEMA;
    std::vector<std::string> tags;  // of schema; empty without one
    uint64_t dispatch_arg_mask = 0;  // of schema: see DispatchTable
    std::vector<KeyKernels> kernels;  // few keys per operator: a vector
    std::array<ComputedEntry, kNumRuntimeEntries> computed;
  };
  Registrations& registrations();  // creates them when absent

  const OperatorName name_;
  std::unique_ptr<Registrations> regs_;
  std::atomic<const DispatchTable*> table_;
  bool owns_table_ = false;  // false: table_ is the shared fallback table
};

namespace detail {
/// Every runtime key with its table slot, Undefined first, then in
/// DispatchKeySet iteration order.
const std::vector<DispatchKey>& allRuntimeKeys();
}  // namespace detail

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_OPERATOR_ENTRY_H_

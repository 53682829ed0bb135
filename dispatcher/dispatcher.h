// Dispatcher: the registry of operators, kernels and backend fallbacks.
//
//   Dispatcher& d = Dispatcher::singleton();
//   OperatorHandle op = d.findSchemaOrThrow("myops::scale", "");
//   std::vector<OperatorName> names = d.getAllOpNames();
//
// Most users register through Library (library.h); the register* methods
// below are what Library calls.
//
// Thread safety: every registration and query takes one registry lock. The
// lookups findSchema / findOp / findSchemaOrThrow take no lock: the name index
// is read-mostly and published like the tables (call_section.h). Calls never
// lock.
#ifndef TURNOUT_DISPATCHER_DISPATCHER_H_
#define TURNOUT_DISPATCHER_DISPATCHER_H_

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/operator_entry.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/registration_handle.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/operator_name.h"

namespace turnout {

/// Told of every operator def and undef (c10's OpRegistrationListener).
/// Called with the registry lock held: must not register anything.
class OpRegistrationListener {
 public:
  virtual ~OpRegistrationListener() = default;
  virtual void onOperatorRegistered(const OperatorHandle& op) = 0;
  virtual void onOperatorDeregistered(const OperatorHandle& op) = 0;
};

class Dispatcher {
 public:
  /// The process-wide dispatcher (never destroyed).
  static Dispatcher& singleton();

  // ---- Lookup ------------------------------------------------------------------
  /// The operator if it has a schema.
  std::optional<OperatorHandle> findSchema(const OperatorName& name) const;
  /// The operator if it has a schema or at least one kernel.
  std::optional<OperatorHandle> findOp(const OperatorName& name) const;
  /// The operator with a schema, or InvalidArgument "Could not find schema
  /// for ns::op.overload".
  OperatorHandle findSchemaOrThrow(std::string_view name,
                                   std::string_view overload_name) const;
  /// Names of every operator with a schema, sorted.
  std::vector<OperatorName> getAllOpNames() const;
  /// Operators with kernels but no schema.
  std::vector<OperatorHandle> findDanglingImpls() const;
  /// Operators with a kernel registered for `k` (alias keys included), or
  /// with any registration at all when `k` is nullopt.
  std::vector<OperatorName> getRegistrationsForDispatchKey(
      std::optional<DispatchKey> k) const;
  bool hasBackendFallbackForDispatchKey(DispatchKey k) const;
  /// Checks every operator's invariants (throws Internal on a violation).
  void checkInvariants() const;

  // ---- Registration ---------------------------------------------------------------
  /// Precondition for all: the schema / names are already parsed and checked
  /// for namespace rules (Library does that).
  /// `tags` are stored with the schema (OperatorHandle::tags); throws
  /// InvalidArgument, registering nothing, for a bad tag (checkOperatorTags).
  RegistrationHandleRAII registerDef(FunctionSchema schema, std::string debug,
                                     AliasAnalysisKind kind =
                                         AliasAnalysisKind::FROM_SCHEMA,
                                     std::vector<std::string> tags = {});
  /// `key` nullopt means CompositeImplicitAutograd.
  RegistrationHandleRAII registerImpl(
      OperatorName name, std::optional<DispatchKey> key, KernelFunction kernel,
      std::optional<CppSignature> cpp_signature,
      std::optional<std::string> inferred_schema, std::string debug);
  /// A backend fallback for a runtime key, or for every runtime key of an
  /// alias key. A second fallback for a key is an error naming both sites.
  RegistrationHandleRAII registerFallback(DispatchKey key, KernelFunction kernel,
                                          std::string debug);
  /// Replaces the framework's default fallback (a fallthrough) for every
  /// runtime key of `key`: how the layer that owns a key's meaning changes
  /// what operators without a kernel there do (kernels/autograd warns for
  /// differentiable operators with no autograd kernel). A user's fallback
  /// still comes first. An invalid `kernel` restores the fallthrough.
  /// `filter` lets calls the fallback has nothing to do with pass it unboxed
  /// (fallback_filter.h); InvalidArgument for a filter with a null test or
  /// on a fallthrough.
  void setFrameworkFallback(DispatchKey key, KernelFunction kernel,
                            std::string debug,
                            std::optional<FallbackFilter> filter = std::nullopt);
  /// Claims namespace `ns` for one DEF library. A second claim is an error
  /// naming both sites.
  RegistrationHandleRAII registerLibrary(std::string ns, std::string debug);
  /// Calls listener->onOperatorRegistered for every existing operator, then
  /// for every future def, and onOperatorDeregistered for every undef.
  RegistrationHandleRAII addRegistrationListener(
      std::unique_ptr<OpRegistrationListener> listener);

  // Implementation details, for OperatorEntry / OperatorHandle.
  const AnnotatedKernel* backendFallback(int slot) const {
    const FallbackSlot& s = fallbacks_[slot];
    if (s.user) return &*s.user;
    if (s.framework) return &*s.framework;
    return nullptr;
  }
  std::mutex& registryMutex() const { return mu_; }
  // The table of an operator with no kernels: backend fallbacks only. Its
  // `table` is also the published table of every operator with no def and no
  // kernel (calls read it), so a replaced one is retired, never deleted.
  // `table` comes first: it is what readers load and what is retired.
  struct FallbackTable {
    DispatchTable table;
    std::array<ComputedEntry, kNumRuntimeEntries> info;
  };
  const FallbackTable& fallbackTable() const { return *fallback_table_; }

 private:
  Dispatcher();
  OperatorEntry* findEntry(std::string_view name,
                           std::string_view overload) const;
  // An entry to change: the existing one, or a new one that becomes visible
  // (in entries_ and the index) only in publishLocked, after the change
  // succeeded. A failed registration thus leaves no trace.
  struct EntryForUpdate {
    OperatorEntry* entry;
    std::unique_ptr<OperatorEntry> fresh;
  };
  EntryForUpdate entryForUpdateLocked(const OperatorName& name);
  void publishLocked(EntryForUpdate& e);
  void deregisterDef(OperatorEntry* entry);
  void deregisterImpl(OperatorEntry* entry, DispatchKey key,
                      OperatorEntry::KernelIterator it);
  void deregisterFallback(const std::vector<int>& slots, bool framework);
  void registerFrameworkFallthroughs();
  // Rebuilds fallback_table_, then every operator's table.
  void updateAllTablesLocked();

  // The name index: a hash table whose buckets readers walk without a lock.
  // A node names its entry by pointer (the entry's name is immutable and the
  // entry never freed): every operator ever named costs one small node.
  struct IndexNode {
    size_t hash;
    OperatorEntry* entry;
    IndexNode* next;
  };
  struct Index {
    explicit Index(size_t n);
    ~Index();
    size_t mask;
    std::unique_ptr<std::atomic<IndexNode*>[]> buckets;
    std::vector<IndexNode*> nodes;  // owned, freed with the index
  };
  void insertIndexLocked(OperatorEntry* entry);
  static void deleteIndex(void* index);
  static void deleteFallbackTable(void* table);

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<OperatorEntry>> entries_;  // never shrinks
  std::atomic<Index*> index_;
  // Per runtime table slot: the user's fallback and the framework's default.
  struct FallbackSlot {
    std::optional<AnnotatedKernel> user;
    std::optional<AnnotatedKernel> framework;
  };
  std::array<FallbackSlot, kNumRuntimeEntries> fallbacks_;
  FallbackTable* fallback_table_ = nullptr;  // owned; retired when replaced
  absl::flat_hash_map<std::string, std::string> libraries_;  // ns -> debug
  std::vector<std::unique_ptr<OpRegistrationListener>> listeners_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DISPATCHER_H_

// OperatorHandle: how clients call and inspect one operator.
//
//   OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow("aten::relu", "");
//   Stack stack{IValue(x)};
//   op.callBoxed(stack);                 // boxed: stack now holds the result
//   auto relu = op.typed<Tensor(const Tensor&)>();
//   Tensor y = relu.call(x);             // unboxed: no IValue in between
//
// A handle is a pointer to a never-freed OperatorEntry: cheap to copy, valid
// for the life of the process (an operator whose registrations are all gone
// keeps only that entry; calling it is the usual "Could not run" error). Calls
// take no lock and allocate nothing (for unboxed kernels); each protects the
// table it reads with a HazardGuard (call_section.h) for as long as the
// kernel runs. Queries take the registry lock.
#ifndef TURNOUT_DISPATCHER_OPERATOR_HANDLE_H_
#define TURNOUT_DISPATCHER_OPERATOR_HANDLE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dispatcher/call_section.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/cpp_signature.h"
#include "dispatcher/dispatch_observer.h"
#include "dispatcher/infer_schema.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/operator_entry.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/operator_name.h"
#include "dispatcher/stack.h"

namespace turnout {

template <class Sig>
class TypedOperatorHandle;

class OperatorHandle {
 public:
  // ---- Identity ----------------------------------------------------------------
  const OperatorName& operator_name() const { return entry_->operator_name(); }
  /// The schema. Throws InvalidArgument when the operator has only impls.
  const FunctionSchema& schema() const;
  bool hasSchema() const;
  /// Where the schema was registered.
  std::string debug() const;
  /// The tags given with the schema (Library::def), in order; empty when the
  /// operator has none or no schema.
  std::vector<std::string> tags() const;
  /// True when `tag` is among tags().
  bool hasTag(std::string_view tag) const;

  // ---- Calls ---------------------------------------------------------------------
  /// Pops the arguments off `stack` and pushes the results.
  void callBoxed(Stack* stack) const;
  void callBoxed(Stack& stack) const { callBoxed(&stack); }
  /// Calls with `ks` as the key set (no thread-local sets applied): what a
  /// kernel does to pass the call to the keys below its own.
  void redispatchBoxed(DispatchKeySet ks, Stack* stack) const;
  /// Calls the table entry of one runtime key, whatever the arguments say.
  void callBoxedForDispatchKey(DispatchKey k, Stack& stack) const;

  /// The typed handle. Throws Type when `Sig` does not fit the schema, or
  /// differs from the C++ signature of the operator's unboxed kernels,
  /// saying what differs.
  template <class Sig>
  TypedOperatorHandle<Sig> typed() const;

  // ---- Queries (take the registry lock) -------------------------------------------
  bool hasKernelForDispatchKey(DispatchKey k) const;
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const;
  /// True when the computed table has a kernel (not "missing") for runtime
  /// key `k`.
  bool hasComputedKernelForDispatchKey(DispatchKey k) const;
  /// True when the computed entry for runtime key `k` is a fallthrough.
  bool isKernelFallthroughKernel(DispatchKey k) const;
  std::string dumpState() const;
  std::string dumpComputedTable() const;
  void checkInvariants() const;

  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }
  bool operator!=(const OperatorHandle& o) const { return entry_ != o.entry_; }

  // Implementation details.
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) {}
  OperatorEntry* entry() const { return entry_; }

 protected:
  void checkTyped(const CppSignature& sig,
                  const std::string& inferred_schema) const;
  // The traced / profiled boxed call (out of line, cold).
  __attribute__((noinline, cold)) void callBoxedObserved(
      const KernelFunction& kernel, DispatchKeySet ks, detail::CallKind kind,
      Stack* stack) const;
  OperatorEntry* entry_;
};

/// An OperatorHandle whose calls are typed: `call(args...)` dispatches on the
/// arguments' key sets and calls the kernel unboxed.
template <class Return, class... Args>
class TypedOperatorHandle<Return(Args...)> : public OperatorHandle {
 public:
  /// Dispatches on the tensor arguments and the thread-local sets.
  Return call(Args... args) const {
    detail::HazardGuard<DispatchTable> table(entry_->publishedTable());
    DispatchKeySet ks =
        table->computeDispatchKeySet(detail::extractKeySetFromArgs(args...));
    const KernelFunction& kernel = table->lookup(ks);
    if (__builtin_expect(detail::dispatchObserved(), 0)) {
      return callObserved(kernel, ks, detail::CallKind::Call,
                          std::forward<Args>(args)...);
    }
    return kernel.template call<Return, Args...>(*this, ks,
                                                 std::forward<Args>(args)...);
  }
  /// Dispatches on `ks` alone (after removing fallthrough keys).
  Return redispatch(DispatchKeySet ks, Args... args) const {
    detail::HazardGuard<DispatchTable> table(entry_->publishedTable());
    ks = table->maskFallthrough(ks);
    const KernelFunction& kernel = table->lookup(ks);
    if (__builtin_expect(detail::dispatchObserved(), 0)) {
      return callObserved(kernel, ks, detail::CallKind::Redispatch,
                          std::forward<Args>(args)...);
    }
    return kernel.template call<Return, Args...>(*this, ks,
                                                 std::forward<Args>(args)...);
  }

 private:
  friend class OperatorHandle;
  // The traced / profiled call, out of line so that the usual path stays
  // small.
  __attribute__((noinline, cold)) Return callObserved(
      const KernelFunction& kernel, DispatchKeySet ks, detail::CallKind kind,
      Args... args) const {
    detail::ObservedDispatch scope(*this, ks, kind);
    return kernel.template call<Return, Args...>(*this, ks,
                                                 std::forward<Args>(args)...);
  }
  explicit TypedOperatorHandle(const OperatorHandle& op) : OperatorHandle(op) {}
};

// Implementation details.

template <class Sig>
TypedOperatorHandle<Sig> OperatorHandle::typed() const {
  checkTyped(CppSignature::make<Sig>(), inferSchemaString<Sig>());
  return TypedOperatorHandle<Sig>(*this);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_OPERATOR_HANDLE_H_

// FallbackFilter: lets a boxed backend fallback that has nothing to do on
// most calls pass those calls on unboxed, with no Stack.
//
//   FallbackFilter filter;
//   filter.selects = &requiresGrad;             // per tensor with autograd state
//   filter.active = &GradMode::is_enabled;      // once a tensor is selected
//   filter.pass_through = DispatchKeySet(DispatchKeySet::FULL_AFTER,
//                                        DispatchKey::AutogradOther);
//   dispatcher.setFrameworkFallback(DispatchKey::Autograd, kernel, debug,
//                                   filter);
//
// A boxed fallback makes every unboxed call that reaches it a boxed one (a
// Stack allocated per call), even where it only passes the call on. With a
// filter, the table entry of such a key in an operator's own table is the
// fallback specialised for that operator and that table: a call goes to the
// fallback only when `selects` holds for one of its tensor arguments (a
// Tensor, a defined Tensor?, any tensor of a list) and then `active()`;
// every other call goes on at `ks & pass_through`, looked up in the same
// table, unboxed for a typed call: no allocation, no lock, no second
// HazardGuard. The filter serves fallbacks about autograd: `selects` is
// asked only about tensors with autograd state (TensorImpl::autograd_meta()
// non-null), so a call on plain tensors costs a load and a test per tensor
// and the table lookup. The unboxed entry point is generated for the
// operator's C++ signature, Sig, wherever a kernel of Sig is registered
// (CppSignature::make<Sig> takes its address); an operator with no typed
// kernel gets only the boxed side. Boxed calls test the same on the stack
// (their stack exists already), then pass on or call the fallback.
//
// The filter must be exact: a call that it passes on must be one the
// fallback would only have passed on to `ks & pass_through`. Dumps and
// explain() show the entry as the fallback ("backend fallback").
//
// Invariant: a filtered entry's functor names the table that holds it
// (OperatorEntry::checkInvariants asserts it); tables that copy another's
// entries (the fallback-only prototype) hold the plain fallback instead.
// Thread safety: immutable once built; `selects` and `active` run on the
// calling thread and must take no lock.
#ifndef TURNOUT_DISPATCHER_FALLBACK_FILTER_H_
#define TURNOUT_DISPATCHER_FALLBACK_FILTER_H_

#include <optional>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/boxing.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatch_table.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/operator_kernel.h"
#include "dispatcher/stack.h"

namespace turnout {

class OperatorHandle;

/// When a filtered backend fallback must see a call (see the file comment).
struct FallbackFilter {
  /// Per tensor argument with autograd state: true when the fallback may
  /// have to see the call. Never null.
  bool (*selects)(const Tensor&) = nullptr;
  /// Asked once a tensor was selected: false passes the call on all the
  /// same (e.g. grad mode is off). Never null.
  bool (*active)() = nullptr;
  /// What a call that is passed on keeps of its key set: the keys below the
  /// fallback's.
  DispatchKeySet pass_through;
};

namespace detail {

/// The functor of a filtered table entry: the fallback, its filter, and the
/// table and operator the entry belongs to. Built by
/// makeFilteredFallbackEntry (registration side); read by calls.
struct FilteredFallback : OperatorKernel {
  const DispatchTable* table = nullptr;  // the table holding this entry
  const OperatorHandle* op = nullptr;    // this entry's operator
  FallbackFilter filter;
  KernelFunction fallback;  // the boxed fallback itself
};

/// The entry for one slot of `table`, the table of operator `op`: calls
/// `fallback` when `filter` selects the call, else passes it on in `table`.
/// `unboxed` is the operator's UnboxedFilteredFallback<Sig>::call (from its
/// CppSignature), or null when it has no typed kernel.
KernelFunction makeFilteredFallbackEntry(const KernelFunction& fallback,
                                         const FallbackFilter& filter,
                                         const DispatchTable* table,
                                         const OperatorHandle& op,
                                         void* unboxed);
/// The table a filtered entry names, or null when `kernel` is not one.
const DispatchTable* filteredFallbackTable(const KernelFunction& kernel);

// Whether `selects` holds for one tensor of the typed arguments.
struct TensorArgumentScan {
  bool (*selects)(const Tensor&);
  bool scan(const Tensor& t) const {
    const TensorImpl* impl = t.unsafeGetTensorImpl();
    return impl != nullptr &&
           __builtin_expect(impl->autograd_meta() != nullptr, 0) && selects(t);
  }
  bool scan(const std::optional<Tensor>& t) const {
    return t.has_value() && scan(*t);
  }
  bool scan(absl::Span<const Tensor> ts) const {
    for (const Tensor& t : ts) {
      if (scan(t)) return true;
    }
    return false;
  }
  bool scan(const std::vector<Tensor>& ts) const {
    return scan(absl::Span<const Tensor>(ts));
  }
  bool scan(const std::vector<std::optional<Tensor>>& ts) const {
    for (const std::optional<Tensor>& t : ts) {
      if (scan(t)) return true;
    }
    return false;
  }
  template <class T>
  bool scan(const T&) const {
    return false;
  }
};

/// The unboxed entry point of a filtered entry for an operator whose typed
/// kernels have signature `Sig` (callers' form: no leading DispatchKeySet).
template <class Sig>
struct UnboxedFilteredFallback;
template <class R, class... A>
struct UnboxedFilteredFallback<R(A...)> {
  static R call(OperatorKernel* functor, DispatchKeySet ks, A... args) {
    const auto& self = *static_cast<const FilteredFallback*>(functor);
    const TensorArgumentScan scan{self.filter.selects};
    if (__builtin_expect((scan.scan(args) || ...), 0) &&
        self.filter.active()) {
      // The fallback is boxed: this boxes the arguments.
      return self.fallback.template call<R, A...>(*self.op, ks,
                                                  std::forward<A>(args)...);
    }
    const DispatchTable& table = *self.table;
    const DispatchKeySet next =
        table.maskFallthrough(ks & self.filter.pass_through);
    return table.lookup(next).template call<R, A...>(
        *self.op, next, std::forward<A>(args)...);
  }
};

/// The address CppSignature keeps for signature `Sig`.
template <class Sig>
void* unboxedFilteredFallbackEntry() {
  return reinterpret_cast<void*>(&UnboxedFilteredFallback<Sig>::call);
}

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_FALLBACK_FILTER_H_

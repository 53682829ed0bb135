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
// and the lookup below, which the entry precomputes when the table is built
// for the usual case (only Dense left: one bit scan for the backend, no
// functionality scan). The unboxed entry point is generated for the
// operator's C++ signature, Sig, wherever a kernel of Sig is registered
// (CppSignature::make<Sig> takes its address); an operator with no typed
// kernel gets only the boxed side. Boxed calls test the same on the stack
// (their stack exists already), then pass on or call the fallback.
//
// The filter must be exact: a call that it passes on must be one the
// fallback would only have passed on to `ks & pass_through`. Dumps and
// explain() show the entry as the fallback ("backend fallback").
//
// Invariant: a filtered entry's functor names the table that holds it, and
// what it precomputed agrees with that table's fallthrough masks
// (OperatorEntry::checkInvariants asserts both); tables that copy another's
// entries (the fallback-only prototype) hold the plain fallback instead.
// Thread safety: immutable once built; `selects` and `active` run on the
// calling thread and must take no lock.
#ifndef TURNOUT_DISPATCHER_FALLBACK_FILTER_H_
#define TURNOUT_DISPATCHER_FALLBACK_FILTER_H_

#include <cstddef>
#include <cstdint>
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
///
/// Invariant: `dense_pass_mask` is `filter.pass_through` masked by the
/// table's non-fallthrough keys when those masks do not depend on the
/// backend, else 0 (OperatorEntry::checkInvariants asserts it). The table is
/// immutable and every registration builds a new one with new functors, so
/// what is precomputed here is never stale for the table that holds it.
struct FilteredFallback : OperatorKernel {
  /// Where a passed-on call goes when the only functionality it keeps is
  /// Dense (a plain tensor of one backend: the usual call): its kernel in
  /// `table`, skipping the general lookup's functionality scan and offset
  /// load; null for every other call (passOnKeySet and DispatchTable::lookup
  /// then). `next` is the call's key set & dense_pass_mask, which is then
  /// also what the kernel gets.
  const KernelFunction* denseKernelBelow(uint64_t next) const;
  /// The key set a passed-on call keeps, for every call (the general path).
  DispatchKeySet passOnKeySet(DispatchKeySet ks) const {
    return table->maskFallthrough(ks & filter.pass_through);
  }

  // The fields the pass-through reads first.
  uint64_t dense_pass_mask = 0;
  const DispatchTable* table = nullptr;  // the table holding this entry
  const OperatorHandle* op = nullptr;    // this entry's operator
  FallbackFilter filter;
  KernelFunction fallback;  // the boxed fallback itself
};

/// The entry for one slot of `table`, the table of operator `op`: calls
/// `fallback` when `filter` selects the call, else passes it on in `table`.
/// `unboxed` is the operator's UnboxedFilteredFallback<Sig>::call (from its
/// CppSignature), or null when it has no typed kernel. Precondition: the
/// table's fallthrough masks are final (the entry precomputes from them).
KernelFunction makeFilteredFallbackEntry(const KernelFunction& fallback,
                                         const FallbackFilter& filter,
                                         const DispatchTable* table,
                                         const OperatorHandle& op,
                                         void* unboxed);
/// Where a boxed call with `stack` goes from `kernel`, the entry of `table`
/// at key set `ks`: `kernel` itself, or, for a filtered entry that passes
/// this call on, the entry below that it passes it to. For callers that
/// decide something before making the call (the Python bindings keep the
/// GIL for a call that goes to a Python kernel).
const KernelFunction& kernelCalledFor(const KernelFunction& kernel,
                                      const DispatchTable& table,
                                      DispatchKeySet ks, const Stack& stack);
/// Whether `kernel`, an entry of `table`, is either no filtered entry or
/// one that names `table` and whose precomputed pass-through agrees with
/// the table's fallthrough masks (for checkInvariants).
bool filteredFallbackAgreesWith(const KernelFunction& kernel,
                                const DispatchTable& table);

// Whether `pred` holds for one tensor of the typed arguments (a Tensor, a
// defined Tensor?, any tensor of a list).
template <class Pred>
struct TensorArgumentScan {
  Pred pred;
  bool scan(const Tensor& t) const { return pred(t); }
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

// A tensor's impl is never null (an undefined tensor points at the
// UndefinedTensorImpl singleton, which has no autograd state).
struct HasAutogradState {
  bool operator()(const Tensor& t) const {
    return __builtin_expect(
        t.unsafeGetTensorImpl()->autograd_meta() != nullptr, 0);
  }
};
// The filter's test, asked only about tensors with autograd state.
struct Selects {
  bool (*selects)(const Tensor&);
  bool operator()(const Tensor& t) const {
    return HasAutogradState()(t) && selects(t);
  }
};

/// The unboxed entry point of a filtered entry for an operator whose typed
/// kernels have signature `Sig` (callers' form: no leading DispatchKeySet).
///
/// `call` is the hot path: a load and a test per tensor argument, then the
/// kernel below found by denseKernelBelow, called unboxed. Everything else
/// is out of line, so that `call` keeps nothing in registers across a call
/// but what returning needs: a tensor with autograd state
/// (withAutogradState; the boxing for the fallback is in the cold
/// callFallback), and a call that keeps more than Dense or whose kernel
/// below is boxed only (passOn). Where `R` is returned in registers the
/// kernel is tail-called; GCC 12 does not tail-call a function returning
/// in memory (a Tensor), so there `call` keeps a small frame.
template <class Sig>
struct UnboxedFilteredFallback;
template <class R, class... A>
struct UnboxedFilteredFallback<R(A...)> {
  static R call(OperatorKernel* functor, DispatchKeySet ks, A... args) {
    const auto& self = *static_cast<const FilteredFallback*>(functor);
    // maybe_unused: an operator without arguments never reads it.
    [[maybe_unused]] const TensorArgumentScan<HasAutogradState> scan{};
    if (__builtin_expect((scan.scan(args) || ...), 0)) {
      return withAutogradState(self, ks, std::forward<A>(args)...);
    }
    const uint64_t next = ks.raw_repr() & self.dense_pass_mask;
    const KernelFunction* kernel = self.denseKernelBelow(next);
    if (__builtin_expect(kernel != nullptr && kernel->isValidUnboxed(), 1)) {
      return kernel->template callUnboxed<R, A...>(
          DispatchKeySet(DispatchKeySet::RAW, next), std::forward<A>(args)...);
    }
    return passOn(self, ks, std::forward<A>(args)...);
  }

 private:
  // The general pass-through: any key set, any kernel below (a boxed-only
  // one is called boxed).
  __attribute__((noinline)) static R passOn(const FilteredFallback& self,
                                            DispatchKeySet ks, A... args) {
    const DispatchKeySet next = self.passOnKeySet(ks);
    return self.table->lookup(next).template call<R, A...>(
        *self.op, next, std::forward<A>(args)...);
  }
  // Some tensor argument has autograd state: ask the filter.
  __attribute__((noinline)) static R withAutogradState(
      const FilteredFallback& self, DispatchKeySet ks, A... args) {
    [[maybe_unused]] const TensorArgumentScan<Selects> scan{
        {self.filter.selects}};
    if ((scan.scan(args) || ...) && self.filter.active()) {
      return callFallback(self, ks, std::forward<A>(args)...);
    }
    return passOn(self, ks, std::forward<A>(args)...);
  }
  // The fallback is boxed: this boxes the arguments (a Stack per call).
  __attribute__((noinline, cold)) static R callFallback(
      const FilteredFallback& self, DispatchKeySet ks, A... args) {
    return self.fallback.template call<R, A...>(*self.op, ks,
                                                std::forward<A>(args)...);
  }
};

// Implementation details.

inline const KernelFunction* FilteredFallback::denseKernelBelow(
    uint64_t next) const {
  // `next` keeps Dense and no other functionality exactly when removing the
  // Dense bit leaves backend bits only (an absent Dense bit wraps around).
  constexpr uint64_t kDenseBit = DispatchKeySet(DispatchKey::Dense).raw_repr();
  constexpr int kDenseOffset =
      kOffsetsAndMasks.entries[static_cast<int>(DispatchKey::Dense)].offset;
  const uint64_t backends = next - kDenseBit;
  if (__builtin_expect(backends > DispatchKeySet::kBackendMask, 0)) {
    return nullptr;
  }
  // The slot DispatchKeySet::getDispatchTableIndexForDispatchKeySet gives:
  // Dense's first slot + the highest backend's index (0 for none). The
  // "63 ^" form compiles to one bit scan.
  const auto backend_index =
      static_cast<size_t>(63 ^ __builtin_clzll((backends << 1) | 1));
  const KernelFunction* first = &table->kernels[kDenseOffset];
  return first + backend_index;
}

/// The address CppSignature keeps for signature `Sig`.
template <class Sig>
void* unboxedFilteredFallbackEntry() {
  return reinterpret_cast<void*>(&UnboxedFilteredFallback<Sig>::call);
}

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_FALLBACK_FILTER_H_

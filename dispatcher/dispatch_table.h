// DispatchTable: one operator's computed table, immutable once published.
//
// The call path reads it without a lock:
//
//   const DispatchTable& table = entry.table();            // one acquire load
//   DispatchKeySet ks = table.computeDispatchKeySet(keys_of_the_arguments);
//   const KernelFunction& kernel = table.lookup(ks);        // one index, one load
//
// Registration never edits a published table: it builds a new one, publishes
// it with one pointer store, and retires the old one (call_section.h). A
// reader therefore sees one whole table, old or new, never a mix: the
// kernels, the fallthrough masks and the argument layout always agree.
//
// Thread safety: immutable after publication.
#ifndef TURNOUT_DISPATCHER_DISPATCH_TABLE_H_
#define TURNOUT_DISPATCHER_DISPATCH_TABLE_H_

#include <cstdint>

#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/kernel_function.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/stack.h"

namespace turnout {

struct DispatchTable {
  /// The call's key set: the arguments' keys with the thread-local sets
  /// applied ((ks | included) - excluded), masked by the non-fallthrough
  /// keys so that fallthrough keys are skipped with no call at all.
  DispatchKeySet computeDispatchKeySet(DispatchKeySet from_arguments) const {
    LocalDispatchKeySet local = tls_local_dispatch_key_set();
    uint64_t bits =
        (from_arguments.raw_repr() | local.included_.raw_repr()) &
        ~(local.excluded_.raw_repr() & ~DispatchKeySet::kBackendMask);
    return maskFallthrough(DispatchKeySet(DispatchKeySet::RAW, bits));
  }

  /// `ks` without the operator's fallthrough keys.
  DispatchKeySet maskFallthrough(DispatchKeySet ks) const {
    uint64_t mask = non_fallthrough_keys;
    if (__builtin_expect(per_backend_fallthrough, 0)) {
      mask = non_fallthrough_keys_per_backend[static_cast<int>(
          ks.highestBackendKey())];
    }
    return DispatchKeySet(DispatchKeySet::RAW, ks.raw_repr() & mask);
  }

  /// The kernel for an already computed key set.
  const KernelFunction& lookup(DispatchKeySet ks) const {
    return kernels[ks.getDispatchTableIndexForDispatchKeySet()];
  }

  /// The OR of the key sets of the tensor arguments on top of `stack`.
  /// Precondition: the stack holds at least num_arguments values (callers
  /// check, to name the operator in the error).
  DispatchKeySet extractFromStack(const Stack& stack) const {
    uint64_t bits = 0;
    const IValue* base = stack.data() + (stack.size() - num_arguments);
    for (uint64_t args = dispatch_arg_mask; args != 0; args &= args - 1) {
      const IValue& v = base[__builtin_ctzll(args)];
      if (v.isTensor()) {
        const Tensor& t = v.toTensor();
        if (t.defined()) bits |= t.key_set().raw_repr();
      } else if (v.isTensorList()) {
        for (const Tensor& t : v.toTensorListRef()) {
          if (t.defined()) bits |= t.key_set().raw_repr();
        }
      } else if (v.isList()) {
        for (const IValue& e : v.toListRef()) {
          if (e.isTensor() && e.toTensor().defined()) {
            bits |= e.toTensor().key_set().raw_repr();
          }
        }
      }
    }
    return DispatchKeySet(DispatchKeySet::RAW, bits);
  }

  // Masks first: the call path touches them, then one kernel.
  uint64_t non_fallthrough_keys = ~uint64_t{0};
  bool per_backend_fallthrough = false;
  // Bit p: argument p can carry tensors (Tensor, Tensor?, Tensor[], Tensor?[]).
  uint64_t dispatch_arg_mask = 0;
  uint32_t num_arguments = 0;
  // Indexed by highestBackendKey(): used when some per-backend key is a
  // fallthrough for some backends only.
  uint64_t non_fallthrough_keys_per_backend[kNumBackends + 1] = {};
  KernelFunction kernels[kNumRuntimeEntries];
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DISPATCH_TABLE_H_

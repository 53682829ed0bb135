#include "dispatcher/fallback_filter.h"

#include <memory>

#include "dispatcher/core/error.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace detail {
namespace {

// The functor with the handle its `op` points at.
struct FilteredFallbackForOperator final : FilteredFallback {
  explicit FilteredFallbackForOperator(const OperatorHandle& handle)
      : handle(handle) {
    op = &this->handle;
  }
  const OperatorHandle handle;
};

bool stackSelects(const FallbackFilter& filter, const DispatchTable& table,
                  const Stack& stack) {
  const IValue* base = stack.data() + (stack.size() - table.num_arguments);
  const TensorArgumentScan<Selects> scan{{filter.selects}};
  for (uint64_t args = table.dispatch_arg_mask; args != 0; args &= args - 1) {
    const IValue& v = base[__builtin_ctzll(args)];
    if (v.isTensor()) {
      if (scan.scan(v.toTensor())) return true;
    } else if (v.isTensorList()) {
      if (scan.scan(v.toTensorListRef())) return true;
    } else if (v.isList()) {
      for (const IValue& e : v.toListRef()) {
        if (e.isTensor() && scan.scan(e.toTensor())) return true;
      }
    }
  }
  return false;
}

// The boxed side: the same test on the stack's tensor arguments, and the
// same pass-through.
void boxedFilteredFallback(OperatorKernel* functor, const OperatorHandle& op,
                           DispatchKeySet ks, Stack* stack) {
  const auto& self = *static_cast<const FilteredFallback*>(functor);
  const DispatchTable& table = *self.table;
  checkStackHasArguments(op, table.num_arguments, stack->size());
  if (stackSelects(self.filter, table, *stack) && self.filter.active()) {
    self.fallback.callBoxed(op, ks, stack);
    return;
  }
  const uint64_t dense_next = ks.raw_repr() & self.dense_pass_mask;
  if (const KernelFunction* kernel = self.denseKernelBelow(dense_next)) {
    kernel->callBoxed(op, DispatchKeySet(DispatchKeySet::RAW, dense_next),
                      stack);
    return;
  }
  const DispatchKeySet next = self.passOnKeySet(ks);
  table.lookup(next).callBoxed(op, next, stack);
}

// What dense_pass_mask must be for `table` (FilteredFallback's invariant).
uint64_t densePassMask(const FallbackFilter& filter,
                       const DispatchTable& table) {
  if (table.per_backend_fallthrough) return 0;
  return filter.pass_through.raw_repr() & table.non_fallthrough_keys;
}

}  // namespace

KernelFunction makeFilteredFallbackEntry(const KernelFunction& fallback,
                                         const FallbackFilter& filter,
                                         const DispatchTable* table,
                                         const OperatorHandle& op,
                                         void* unboxed) {
  TURNOUT_INTERNAL_ASSERT(filter.selects != nullptr && filter.active != nullptr,
                          "a fallback filter of ",
                          toString(op.operator_name()), " has a null test");
  auto functor = std::make_unique<FilteredFallbackForOperator>(op);
  functor->dense_pass_mask = densePassMask(filter, *table);
  functor->table = table;
  functor->filter = filter;
  functor->fallback = fallback;
  return KernelFunction::makeFromEntryPoints(
      std::move(functor), &boxedFilteredFallback, unboxed);
}

const KernelFunction& kernelCalledFor(const KernelFunction& kernel,
                                      const DispatchTable& table,
                                      DispatchKeySet ks, const Stack& stack) {
  if (kernel.boxedFunction() != &boxedFilteredFallback) return kernel;
  const auto& self = *static_cast<const FilteredFallback*>(kernel.functor());
  if (stack.size() < table.num_arguments ||
      (stackSelects(self.filter, table, stack) && self.filter.active())) {
    return kernel;
  }
  return table.lookup(self.passOnKeySet(ks));
}

bool filteredFallbackAgreesWith(const KernelFunction& kernel,
                                const DispatchTable& table) {
  if (kernel.boxedFunction() != &boxedFilteredFallback) return true;
  const auto& self = *static_cast<const FilteredFallback*>(kernel.functor());
  return self.table == &table &&
         self.dense_pass_mask == densePassMask(self.filter, table);
}

}  // namespace detail
}  // namespace turnout

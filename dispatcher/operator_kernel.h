// OperatorKernel: the base class of kernel functors, the objects that hold a
// kernel's state (a lambda's captures, a Python callable, a fallback's
// configuration).
//
//   struct AddN final : OperatorKernel {
//     explicit AddN(int64_t n) : n(n) {}
//     Tensor operator()(const Tensor& x) { ... }
//     int64_t n;
//   };
//
// A functor is shared by every KernelFunction that copies it: the
// registration record and each published dispatch table. Retired tables are
// freed late (see call_section.h), so a functor lives until no call can be
// running it.
//
// Thread safety: the reference count is atomic; the functor's own state is
// the kernel author's business (kernels run concurrently).
#ifndef TURNOUT_DISPATCHER_OPERATOR_KERNEL_H_
#define TURNOUT_DISPATCHER_OPERATOR_KERNEL_H_

#include <atomic>
#include <cstdint>

namespace turnout {

class OperatorKernel {
 public:
  virtual ~OperatorKernel() = default;

  // Implementation details: reference counting used by KernelFunction.
  void incref() { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() {
    // acq_rel: the last owner's delete sees every other owner's writes.
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::atomic<int64_t> refcount_{1};
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_OPERATOR_KERNEL_H_

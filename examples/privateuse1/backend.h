// An example backend of the user's own, on DeviceType::PrivateUse1
// ("privateuseone"), registered entirely through turnout's public API:
//
//   - an Allocator for the device type (plain host memory behind it, but a
//     distinct device: its tensors carry the PrivateUse1 key and dispatch to
//     this backend's kernels, never to the CPU's);
//   - kernels of its own for the operators every backend needs
//     (empty.memory_format, empty_strided, copy_ to and from the CPU, view,
//     item) and for a couple of others (add.Tensor, fill_.Scalar);
//   - a boxed backend fallback that runs every other operator on the CPU:
//     it copies the tensor arguments to the CPU, calls the CPU kernel, and
//     copies the results, and the arguments the operator wrote, back.
//
// Linking the library is all it takes (its registrations run at load time):
//
//   Tensor x = turnout::ones({2, 3}, turnout::Device("privateuseone"));
//   Tensor y = x.add(x);              // this backend's add.Tensor kernel
//   Tensor z = y.mul(y).relu();       // the CPU fallback, twice
//   z.device();                       // privateuseone
//   z.to(turnout::kCPU);              // copy_ from the device
//
// See README.md beside this file for a walk through the code.
//
// Thread safety: every kernel and the fallback may be called from any
// thread; the counters are atomic.
#ifndef TURNOUT_EXAMPLES_PRIVATEUSE1_BACKEND_H_
#define TURNOUT_EXAMPLES_PRIVATEUSE1_BACKEND_H_

#include <cstdint>

#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/stack.h"

namespace privateuse1_example {

/// The device of this backend: Device("privateuseone").
turnout::Device device();

/// The boxed fallback registered for every operator without a PrivateUse1
/// kernel (exposed so that other kernels, and tests, can call it directly).
/// Precondition: the top of `stack` holds the arguments of `op`'s schema.
///
/// Throws NotImplemented, before changing anything, for an operator that
/// returns a view of an argument (its result must share the argument's
/// memory, which a copy cannot) and for one with no PrivateUse1 tensor or
/// device argument. An error of the CPU kernel propagates unchanged; the
/// device arguments are then left as they were.
void cpuFallback(const turnout::OperatorHandle& op, turnout::Stack* stack);

/// What the backend has done since the process started.
struct Stats {
  int64_t live_allocations;  // blocks allocated and not yet freed
  int64_t allocations;       // blocks allocated in all
  int64_t fallback_calls;    // operators run by cpuFallback
  int64_t add_kernel_calls;  // calls of this backend's own add.Tensor kernel
};
Stats stats();

}  // namespace privateuse1_example

#endif  // TURNOUT_EXAMPLES_PRIVATEUSE1_BACKEND_H_

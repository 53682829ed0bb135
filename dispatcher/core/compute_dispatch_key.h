// computeDispatchKey: the backend dispatch key of a tensor with a given dtype,
// layout and device, as c10 computes it for TensorOptions.
//
//   computeDispatchKey(kFloat, Layout::Strided, Device("cuda:0"));  // CUDA
//   computeDispatchKey(kFloat, Layout::Sparse, Device("cpu"));      //
//   SparseCPU computeDispatchKey(kFloat, Layout::Mkldnn, Device("cpu")); //
//   MkldnnCPU computeDispatchKey(kFloat, Layout::Mkldnn, Device("cuda")); //
//   throws
//
// A pure function: thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_COMPUTE_DISPATCH_KEY_H_
#define TURNOUT_DISPATCHER_CORE_COMPUTE_DISPATCH_KEY_H_

#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/scalar_type.h"

namespace turnout {

/// The backend key of a tensor:
///   Strided   -> the Dense key of the device's backend (CPU, CUDA, Meta,
///                PrivateUse1, ...);
///   Sparse    -> SparseCPU, SparseCUDA, SparseHIP, SparseXPU, SparseVE,
///                SparseMPS, SparseMeta, SparsePrivateUse1;
///   SparseCsr, SparseCsc, SparseBsr, SparseBsc -> SparseCsrCPU /
///   SparseCsrCUDA; Mkldnn    -> MkldnnCPU.
/// The dtype does not change the key yet (c10 uses it for quantized dtypes,
/// which turnout does not have). Throws Error(NotImplemented) naming the
/// layout and the device for any other combination (e.g. Mkldnn on CUDA,
/// Jagged anywhere).
DispatchKey computeDispatchKey(ScalarType dtype, Layout layout, Device device);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_COMPUTE_DISPATCH_KEY_H_

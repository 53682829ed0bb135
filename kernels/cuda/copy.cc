// CUDA kernels of aten::copy_, aten::fill_.Scalar and aten::item. copy_ dispatches here
// whenever either argument is a CUDA tensor (CUDA's backend bit is above
// CPU's), so it copies device to device, host to device and device to host;
// clone, _to_copy and to.device (CompositeExplicit/ImplicitAutograd) work on
// CUDA through it and the CUDA allocator.
//
// Host-device copies go through a contiguous staging tensor in src's dtype:
// the conversion and broadcast run on the device (host to device) or in the
// CPU copy_ kernel (device to host). cudaMemcpy on pageable memory is
// synchronous, so non_blocking is accepted and ignored.
#include <cuda_runtime_api.h>

#include "dispatcher/dispatcher.h"
#include "dispatcher/error.h"
#include "dispatcher/library.h"
#include "kernels/copy.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/factory_utils.h"
#include "kernels/scalar_ops.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

// A meta stand-in for every tensor, CPU scalars included (copy_ has no
// scalar operands).
Tensor toMeta(const Tensor& t) {
  if (!t.defined() || t.is_meta()) return t;
  return emptyStridedTensor(t.sizes(), t.strides(), t.scalar_type(),
                            Device(DeviceType::Meta), "copy_");
}

bool sharesStorage(const Tensor& a, const Tensor& b) {
  return a.has_storage() && b.has_storage() &&
         a.storage().is_alias_of(b.storage());
}

size_t nbytesOf(const Tensor& t) {
  return static_cast<size_t>(t.numel()) * elementSize(t.scalar_type());
}

// A contiguous CUDA tensor on `device` with src's sizes, dtype and values.
Tensor stagedOn(const Tensor& src, Device device) {
  if (src.is_cpu()) {
    const Tensor host = src.is_contiguous()
                            ? src
                            : clone(src, MemoryFormat::Contiguous);
    Tensor staged = emptyTensor(src.sizes(), src.scalar_type(), device);
    CUDADeviceGuard guard(device);
    checkCuda(cudaMemcpy(staged.data_ptr(), host.data_ptr(), nbytesOf(host),
                         cudaMemcpyHostToDevice),
              "copy_ (host to device)");
    return staged;
  }
  const Tensor dense = contiguousAs(src, src.scalar_type(), src.device());
  if (src.device() == device) return dense;
  Tensor staged = emptyTensor(src.sizes(), src.scalar_type(), device);
  checkCuda(cudaMemcpyPeer(staged.data_ptr(), device.index(), dense.data_ptr(),
                           src.device().index(), nbytesOf(dense)),
            "copy_ (device to device)");
  return staged;
}

Tensor& copyKernel(Tensor& self, const Tensor& src, bool non_blocking) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::copy_", "")
          .typed<Tensor&(Tensor&, const Tensor&, bool)>();
  // Layout, broadcast, overlap and meta-source checks: the Meta kernel's.
  Tensor ms = toMeta(self);
  op.redispatch(metaKeys(), ms, toMeta(src), non_blocking);
  TURNOUT_CHECK(!src.is_meta(), ErrorKind::NotImplemented,
                "copy_(): Cannot copy out of meta tensor; no data! (to a ",
                self.device(), " tensor)");
  for (const Tensor* t : {static_cast<const Tensor*>(&self), &src}) {
    TURNOUT_CHECK(t->is_cuda() || t->is_cpu(), ErrorKind::NotImplemented,
                  "copy_(): the CUDA kernel copies between CUDA and CPU "
                  "tensors, got a copy from ",
                  src.device(), " to ", self.device());
  }
  if (self.numel() == 0 || self.is_same(src)) return self;

  if (self.is_cpu()) {  // device to host
    const Tensor dense = contiguousAs(src, src.scalar_type(), src.device());
    Tensor host = emptyTensor(src.sizes(), src.scalar_type(),
                              Device(DeviceType::CPU));
    CUDADeviceGuard guard(src.device());
    checkCuda(cudaMemcpy(host.data_ptr(), dense.data_ptr(), nbytesOf(dense),
                         cudaMemcpyDeviceToHost),
              "copy_ (device to host)");
    copy_(self, host);  // the CPU kernel converts, broadcasts and strides
    return self;
  }
  // To the device: src staged there unless it already is, then one
  // converting, broadcasting, strided elementwise copy.
  // Memory shared with self in another layout is staged too, so that no
  // element is overwritten before it is read.
  const bool overlaps = sharesStorage(self, src) &&
                        !(src.data_ptr() == self.data_ptr() &&
                          src.sizes() == self.sizes() &&
                          src.strides() == self.strides());
  Tensor from = src;
  if (src.is_cpu() || src.device() != self.device() || overlaps) {
    from = stagedOn(src, self.device());
  }
  runElementwise("copy_", ElementwiseOp::Copy, self.scalar_type(), self,
                 {from});
  return self;
}

Tensor& fillKernel(Tensor& self, const Scalar& value) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::fill_", "Scalar")
                             .typed<Tensor&(Tensor&, const Scalar&)>();
  Tensor ms = toMeta(self);
  op.redispatch(metaKeys(), ms, value);  // layout and overflow checks
  checkCudaDevices("fill_", {}, &self);
  runElementwise("fill_", ElementwiseOp::Fill, self.scalar_type(), self, {},
                 {scalarArg(value, self.scalar_type(), "fill_")});
  return self;
}

// The value of a one-element CUDA tensor: copied to the host, then read by
// the CPU's item.
Scalar itemKernel(const Tensor& self) {
  return item(to(self, Device(DeviceType::CPU)));
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("copy_", TURNOUT_FN(turnout::cuda::copyKernel));
  m.impl("fill_.Scalar", TURNOUT_FN(turnout::cuda::fillKernel));
  m.impl("item", TURNOUT_FN(turnout::cuda::itemKernel));
}

// CUDA kernels of aten::copy_, aten::fill_.Scalar and
// aten::_local_scalar_dense (what item() reads), and the
// pinned host memory behind is_pinned / _pin_memory. copy_ dispatches here
// whenever either argument is a CUDA tensor (CUDA's backend bit is above
// CPU's), so it copies device to device, host to device and device to host;
// clone, _to_copy and to.device (CompositeExplicit/ImplicitAutograd) work on
// CUDA through it and the CUDA allocator.
//
// Host-device copies go through a contiguous staging tensor in src's dtype:
// the conversion and broadcast run on the device (host to device) or in the
// CPU copy_ kernel (device to host). Every copy is queued on the current
// stream. As in torch, a copy returns before the device has finished it
// only with non_blocking=True and a pinned host tensor that needs no
// staging on the host side (contiguous, same dtype and sizes); otherwise
// device-to-host copies wait for the stream, and host-to-device copies from
// pageable memory return once the source has been read.
#include <cuda_runtime_api.h>

#include "dispatcher/core/error.h"
#include "dispatcher/core/storage.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/copy.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/factory_utils.h"
#include "kernels/mem_overlap.h"
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

// True for host memory cudaHostAlloc gave (page-locked, mapped for the
// device): a copy from or to it can run asynchronously.
bool isPinnedHostMemory(const void* ptr) {
  if (ptr == nullptr) return false;
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();  // memory CUDA does not know of
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

// One host-device cudaMemcpyAsync on the current stream of `device`. A copy
// to pageable host memory, or any copy the caller wants finished
// (`blocking`), waits for the stream.
void memcpyOnStream(void* dst, const void* src, size_t nbytes,
                    cudaMemcpyKind kind, Device device, bool blocking,
                    const char* what) {
  CUDADeviceGuard guard(device);
  cudaStream_t stream = currentStreamHandle();
  checkCuda(cudaMemcpyAsync(dst, src, nbytes, kind, stream), what);
  if (blocking) checkCuda(cudaStreamSynchronize(stream), what);
}

// A contiguous CUDA tensor on `device` with src's sizes, dtype and values.
Tensor stagedOn(const Tensor& src, Device device, bool non_blocking) {
  if (src.is_cpu()) {
    const Tensor host = src.is_contiguous()
                            ? src
                            : clone(src, MemoryFormat::Contiguous);
    Tensor staged = emptyTensor(src.sizes(), src.scalar_type(), device);
    // From pageable memory the driver stages the source before returning;
    // from pinned memory the caller keeps it alive and unchanged (torch's
    // contract for non_blocking=True), or we wait.
    const bool pinned = isPinnedHostMemory(host.data_ptr());
    const bool async = non_blocking && host.is_same(src) && pinned;
    memcpyOnStream(staged.data_ptr(), host.data_ptr(), nbytesOf(host),
                   cudaMemcpyHostToDevice, device,
                   /*blocking=*/pinned && !async, "copy_ (host to device)");
    return staged;
  }
  const Tensor dense = contiguousAs(src, src.scalar_type(), src.device());
  if (src.device() == device) return dense;
  // Between devices: wait for src's producers, then copy on the
  // destination's current stream.
  checkCuda(cudaStreamSynchronize(currentStreamHandle()),
            "copy_ (device to device)");
  Tensor staged = emptyTensor(src.sizes(), src.scalar_type(), device);
  CUDADeviceGuard guard(device);
  checkCuda(cudaMemcpyPeerAsync(staged.data_ptr(), device.index(),
                                dense.data_ptr(), src.device().index(),
                                nbytesOf(dense), currentStreamHandle()),
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
  // As PyTorch (the Meta kernel's stand-ins share no memory).
  checkNoPartialOverlap(self, src, "copy_");

  if (self.is_cpu()) {  // device to host
    CUDADeviceGuard guard(src.device());
    const Tensor dense = contiguousAs(src, src.scalar_type(), src.device());
    // Straight into self when it has dense's layout; asynchronously only
    // into pinned memory with non_blocking=True.
    const bool direct = self.scalar_type() == src.scalar_type() &&
                        self.sizes() == src.sizes() && self.is_contiguous();
    if (direct) {
      memcpyOnStream(self.data_ptr(), dense.data_ptr(), nbytesOf(dense),
                     cudaMemcpyDeviceToHost, src.device(),
                     !(non_blocking && isPinnedHostMemory(self.data_ptr())),
                     "copy_ (device to host)");
      return self;
    }
    Tensor host = emptyTensor(src.sizes(), src.scalar_type(),
                              Device(DeviceType::CPU));
    memcpyOnStream(host.data_ptr(), dense.data_ptr(), nbytesOf(dense),
                   cudaMemcpyDeviceToHost, src.device(), /*blocking=*/true,
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
    from = stagedOn(src, self.device(), non_blocking);
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

// Page-locked host memory from cudaHostAlloc, for pinned CPU tensors.
// Not cached: cudaFreeHost waits for the device, so a block is never freed
// while an asynchronous copy still reads or writes it.
class PinnedHostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
    checkDeviceAvailable("pin_memory");
    void* ptr = nullptr;
    checkCuda(cudaHostAlloc(&ptr, nbytes, cudaHostAllocDefault),
              "pin_memory: cudaHostAlloc");
    return DataPtr(ptr, ptr, &PinnedHostAllocator::free,
                   Device(DeviceType::CPU));
  }

 private:
  static void free(void* ptr) { cudaFreeHost(ptr); }
};

// Device memory is never pinned host memory: false for a CUDA tensor, as
// torch answers.
bool isPinnedKernel(const Tensor& self, std::optional<Device> device) {
  if (!self.is_cpu()) return false;
  return self.has_storage() && isPinnedHostMemory(self.storage().data());
}

// A pinned CPU copy of self, laid out densely like self.
Tensor pinMemoryKernel(const Tensor& self, std::optional<Device> device) {
  TURNOUT_CHECK(self.is_cpu(), ErrorKind::InvalidArgument,
                "pin_memory(): cannot pin a ", self.device(),
                " tensor, only dense CPU tensors can be pinned");
  static PinnedHostAllocator* allocator = new PinnedHostAllocator();
  const DimVector strides = stridesLike(self, MemoryFormat::Preserve,
                                        "pin_memory");
  int64_t storage_numel = self.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < self.dim() && storage_numel > 0; ++d) {
    storage_numel += (self.size(d) - 1) * strides[d];
  }
  Storage storage = Storage::allocate(
      static_cast<size_t>(storage_numel) * elementSize(self.scalar_type()),
      allocator);
  Tensor out(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), self.scalar_type(), Device(DeviceType::CPU)));
  out.unsafeGetTensorImpl()->set_sizes_and_strides(self.sizes(), strides);
  copy_(out, self);
  return out;
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  m.impl("copy_", TURNOUT_FN(turnout::cuda::copyKernel));
  m.impl("fill_.Scalar", TURNOUT_FN(turnout::cuda::fillKernel));
  m.impl("_local_scalar_dense", TURNOUT_FN(turnout::cuda::itemKernel));
  // Reached through BackendSelect (the device argument), from CPU tensors.
  m.impl("is_pinned", TURNOUT_FN(turnout::cuda::isPinnedKernel));
  m.impl("_pin_memory", TURNOUT_FN(turnout::cuda::pinMemoryKernel));
}

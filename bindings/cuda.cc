// turnout._C_cuda's functions, behind turnout.cuda (python/turnout/cuda.py):
// streams as (handle, device) pairs of ints, events as _CudaEvent objects,
// the current device and stream, and the caching allocator's statistics.
// Built when the CUDA toolkit was found (cuda_module.cc); without it the
// module does not exist and turnout.cuda says so.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <utility>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/tensor.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

using cuda::CUDAStream;

CUDAStream streamOf(intptr_t handle, int device) {
  return CUDAStream(reinterpret_cast<cudaStream_t>(handle), device);
}

py::tuple pack(const CUDAStream& s) {
  return py::make_tuple(reinterpret_cast<intptr_t>(s.stream()),
                        s.deviceIndex());
}

}  // namespace

void initCuda(py::module_& m) {
  m.def("_cuda_getDeviceCount", [] { return cuda::cudaDeviceCount(); });
  m.def("_cuda_getDevice", [] {
    cuda::checkDeviceAvailable("current_device");
    return cuda::currentDevice();
  });
  m.def("_cuda_setDevice", [](int device) {
    cuda::checkDeviceAvailable("set_device");
    cuda::checkCuda(cudaSetDevice(device), "set_device");
  });
  m.def("_cuda_synchronize", [](int device) {
    withoutGil([&] { cuda::deviceSynchronize(device); });
  });

  // Streams: (handle, device index) pairs; handle 0 is the default stream.
  m.def("_cuda_getCurrentStream",
        [](int device) { return pack(cuda::getCurrentCUDAStream(device)); });
  m.def("_cuda_getDefaultStream",
        [](int device) { return pack(cuda::getDefaultCUDAStream(device)); });
  m.def("_cuda_setStream", [](intptr_t handle, int device) {
    cuda::setCurrentCUDAStream(streamOf(handle, device));
  });
  m.def("_cuda_streamFromPool", [](bool high_priority, int device) {
    return pack(cuda::getStreamFromPool(high_priority, device));
  });
  m.def("_cuda_streamQuery", [](intptr_t handle, int device) {
    return streamOf(handle, device).query();
  });
  m.def("_cuda_streamSynchronize", [](intptr_t handle, int device) {
    withoutGil([&] { streamOf(handle, device).synchronize(); });
  });
  m.def("_cuda_streamPriority", [](intptr_t handle, int device) {
    return streamOf(handle, device).priority();
  });
  m.def("_cuda_recordStream", [](const Tensor& t, intptr_t handle, int device) {
    TURNOUT_CHECK(t.is_cuda(), ErrorKind::InvalidArgument,
                  "record_stream(): expected a CUDA tensor, got a ", t.device(),
                  " tensor");
    if (!t.has_storage()) return;
    cuda::recordStream(t.storage().unsafeGetStorageImpl()->data_ptr(),
                       streamOf(handle, device));
  });

  py::class_<cuda::CUDAEvent>(m, "_CudaEvent")
      .def(py::init<bool, bool>(), py::arg("enable_timing") = false,
           py::arg("blocking") = false)
      .def("record", [](cuda::CUDAEvent& e, intptr_t handle,
                        int device) { e.record(streamOf(handle, device)); })
      .def("block", [](const cuda::CUDAEvent& e, intptr_t handle,
                       int device) { e.block(streamOf(handle, device)); })
      .def("query", &cuda::CUDAEvent::query)
      .def("synchronize",
           [](const cuda::CUDAEvent& e) {
             withoutGil([&] { e.synchronize(); });
           })
      .def("elapsed_time", &cuda::CUDAEvent::elapsedTime)
      .def_property_readonly("device_index", &cuda::CUDAEvent::deviceIndex)
      .def_property_readonly("was_recorded", &cuda::CUDAEvent::wasRecorded)
      .def_property_readonly("cuda_event", [](const cuda::CUDAEvent& e) {
        return reinterpret_cast<intptr_t>(e.event());
      });

  m.def("_cuda_emptyCache", [] { cuda::emptyCache(); });
  m.def("_cuda_memoryStats", [] {
    const cuda::CachingAllocatorStats s = cuda::cachingAllocatorStats();
    py::dict d;
    d["allocated_bytes"] = s.allocated_bytes;
    d["cached_bytes"] = s.cached_bytes;
    d["pending_bytes"] = s.pending_bytes;
    d["num_device_allocs"] = s.num_device_allocs;
    d["num_cache_hits"] = s.num_cache_hits;
    return d;
  });
}

}  // namespace bindings
}  // namespace turnout

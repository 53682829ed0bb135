#include "kernels/cuda/stream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "kernels/cuda/cuda_utils.h"

namespace turnout {
namespace cuda {
namespace {

// The calling thread's current stream per device; nullptr (the default
// stream) until set. On the heap, not in the thread-local block: a process
// that dlopens libturnout_cuda.so places its thread-locals in the static TLS
// block (see dispatcher/core/thread_local.h), which is small.
thread_local std::vector<cudaStream_t> tls_current_streams;

cudaStream_t* currentStreams() {
  std::vector<cudaStream_t>& streams = tls_current_streams;
  if (streams.empty()) streams.resize(kMaxDevices, nullptr);
  return streams.data();
}

int resolveDevice(int device_index, const char* op) {
  if (device_index < 0) {
    checkDeviceAvailable(op);
    device_index = currentDevice();
  }
  TURNOUT_CHECK(device_index < kMaxDevices, ErrorKind::NotImplemented, op,
                ": device index ", device_index,
                " is above turnout's limit of ", kMaxDevices);
  TURNOUT_CHECK(device_index < cudaDeviceCount(), ErrorKind::InvalidArgument,
                op, ": invalid device cuda:", device_index, " (",
                cudaDeviceCount(), " CUDA devices are visible)");
  return device_index;
}

// A query's answer: true when done, false for cudaErrorNotReady (cleared),
// an Error naming `op` for anything else.
bool doneOrThrow(cudaError_t e, const char* op) {
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  checkCuda(e, op);
  return true;
}

constexpr int kStreamsPerPool = 32;

// 32 streams per device and priority, created together on first use.
struct StreamPool {
  std::once_flag created;
  std::array<cudaStream_t, kStreamsPerPool> streams{};
  std::atomic<uint32_t> next{0};
};

StreamPool& pool(int device_index, bool high_priority) {
  // Never destroyed: the streams outlive static destruction.
  static auto* pools = new std::array<StreamPool, 2 * kMaxDevices>();
  StreamPool& p = (*pools)[2 * device_index + (high_priority ? 1 : 0)];
  std::call_once(p.created, [&] {
    CUDADeviceGuard guard(Device(DeviceType::CUDA, device_index));
    int least = 0;
    int greatest = 0;
    checkCuda(cudaDeviceGetStreamPriorityRange(&least, &greatest),
              "getStreamFromPool");
    for (cudaStream_t& s : p.streams) {
      checkCuda(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking,
                                             high_priority ? greatest : least),
                "getStreamFromPool");
    }
  });
  return p;
}

}  // namespace

int CUDAStream::priority() const {
  int priority = 0;
  CUDADeviceGuard guard(device());
  checkCuda(cudaStreamGetPriority(stream_, &priority), "Stream.priority");
  return priority;
}

bool CUDAStream::query() const {
  CUDADeviceGuard guard(device());
  return doneOrThrow(cudaStreamQuery(stream_), "Stream.query");
}

void CUDAStream::synchronize() const {
  CUDADeviceGuard guard(device());
  checkCuda(cudaStreamSynchronize(stream_), "Stream.synchronize");
}

CUDAStream getDefaultCUDAStream(int device_index) {
  return CUDAStream(nullptr, resolveDevice(device_index, "default_stream"));
}

CUDAStream getCurrentCUDAStream(int device_index) {
  const int d = resolveDevice(device_index, "current_stream");
  return CUDAStream(currentStreams()[d], d);
}

void setCurrentCUDAStream(CUDAStream stream) {
  const int d = resolveDevice(stream.deviceIndex(), "set_stream");
  currentStreams()[d] = stream.stream();
}

CUDAStream getStreamFromPool(bool high_priority, int device_index) {
  const int d = resolveDevice(device_index, "Stream");
  StreamPool& p = pool(d, high_priority);
  const uint32_t i = p.next.fetch_add(1, std::memory_order_relaxed);
  return CUDAStream(p.streams[i % kStreamsPerPool], d);
}

void deviceSynchronize(int device_index) {
  const int d = resolveDevice(device_index, "synchronize");
  CUDADeviceGuard guard(Device(DeviceType::CUDA, d));
  checkCuda(cudaDeviceSynchronize(), "synchronize");
}

cudaStream_t currentStreamHandle() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device >= kMaxDevices) {
    cudaGetLastError();
    return nullptr;
  }
  return currentStreams()[device];
}

cudaStream_t currentStreamHandle(int device_index) {
  if (device_index < 0 || device_index >= kMaxDevices) {
    return currentStreamHandle();
  }
  return currentStreams()[device_index];
}

CUDAStreamGuard::CUDAStreamGuard(CUDAStream stream)
    : device_guard_(stream.device()),
      original_stream_(getCurrentCUDAStream(stream.deviceIndex())),
      current_stream_(stream) {
  setCurrentCUDAStream(stream);
}

CUDAStreamGuard::~CUDAStreamGuard() {
  currentStreams()[current_stream_.deviceIndex()] =
      original_stream_.stream();
}

CUDAEvent::CUDAEvent(bool enable_timing, bool blocking)
    : flags_((enable_timing ? cudaEventDefault : cudaEventDisableTiming) |
             (blocking ? cudaEventBlockingSync : 0u)) {}

CUDAEvent::~CUDAEvent() {
  // No device guard: cudaEventDestroy needs none, and a destructor must not
  // throw (the guard's cudaGetDevice can fail at exit).
  if (event_ != nullptr) cudaEventDestroy(event_);
}

CUDAEvent::CUDAEvent(CUDAEvent&& other) noexcept
    : flags_(other.flags_),
      was_recorded_(std::exchange(other.was_recorded_, false)),
      device_index_(std::exchange(other.device_index_, -1)),
      event_(std::exchange(other.event_, nullptr)) {}

CUDAEvent& CUDAEvent::operator=(CUDAEvent&& other) noexcept {
  if (this != &other) {
    CUDAEvent old(std::move(*this));  // destroys our event, if any
    flags_ = other.flags_;
    was_recorded_ = std::exchange(other.was_recorded_, false);
    device_index_ = std::exchange(other.device_index_, -1);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void CUDAEvent::record(const CUDAStream& stream) {
  CUDADeviceGuard guard(stream.device());
  if (event_ == nullptr) {
    checkCuda(cudaEventCreateWithFlags(&event_, flags_), "Event.record");
    device_index_ = stream.deviceIndex();
  }
  TURNOUT_CHECK(device_index_ == stream.deviceIndex(),
                ErrorKind::InvalidArgument,
                "Event.record: the event was "
                "created on cuda:",
                device_index_,
                " and cannot be recorded "
                "on a stream of cuda:",
                stream.deviceIndex(), "; use one event per device");
  checkCuda(cudaEventRecord(event_, stream.stream()), "Event.record");
  was_recorded_ = true;
}

void CUDAEvent::block(const CUDAStream& stream) const {
  if (event_ == nullptr) return;
  CUDADeviceGuard guard(stream.device());
  checkCuda(cudaStreamWaitEvent(stream.stream(), event_, 0), "Event.wait");
}

bool CUDAEvent::query() const {
  if (event_ == nullptr) return true;
  return doneOrThrow(cudaEventQuery(event_), "Event.query");
}

void CUDAEvent::synchronize() const {
  if (event_ == nullptr) return;
  checkCuda(cudaEventSynchronize(event_), "Event.synchronize");
}

float CUDAEvent::elapsedTime(const CUDAEvent& end) const {
  TURNOUT_CHECK(was_recorded_ && end.was_recorded_, ErrorKind::InvalidArgument,
                "Event.elapsed_time: both events must be recorded before "
                "measuring the time between them");
  TURNOUT_CHECK((flags_ & cudaEventDisableTiming) == 0 &&
                    (end.flags_ & cudaEventDisableTiming) == 0,
                ErrorKind::InvalidArgument,
                "Event.elapsed_time: both events must be created with "
                "enable_timing=True");
  float ms = 0;
  CUDADeviceGuard guard(Device(DeviceType::CUDA, device_index_));
  checkCuda(cudaEventElapsedTime(&ms, event_, end.event_),
            "Event.elapsed_time");
  return ms;
}

}  // namespace cuda
}  // namespace turnout

// CUDA streams and events, as torch.cuda's. Each thread has a current
// stream per device, the device's default stream until it is changed; every
// turnout CUDA kernel (elementwise, reductions, copies, cuBLAS) is queued on
// the current stream of its device. Events order work across streams.
//
//   CUDAStream side = getStreamFromPool();      // a non-blocking stream
//   CUDAEvent done;
//   {
//     CUDAStreamGuard guard(side);              // side is current in scope
//     y = add(x, x);                            // queued on side
//     done.record(side);
//   }
//   done.block(getCurrentCUDAStream());         // the default stream waits
//   z = mul(y, y);                              // safe: after add finished
//
// The default stream is CUDA's legacy default stream (handle 0), which
// waits for and is waited on by every blocking stream; pool streams are
// created non-blocking, so work on them is ordered against the default
// stream only by events (or synchronize), as in torch.
//
// Thread safety: the current stream is thread-local. Pool streams are
// shared, created on first use and never destroyed (a tensor's memory may
// still be in use on one at exit). A CUDAEvent belongs to one owner at a
// time; its methods are not synchronised.
#ifndef TURNOUT_KERNELS_CUDA_STREAM_H_
#define TURNOUT_KERNELS_CUDA_STREAM_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dispatcher/core/device.h"
#include "kernels/cuda/cuda_utils.h"

namespace turnout {
namespace cuda {

/// The most devices turnout's per-device state (current streams, pools,
/// cuBLAS handles) covers.
constexpr int kMaxDevices = 64;

/// A CUDA stream on one device: a value (copy it freely); it does not own
/// the cudaStream_t.
class CUDAStream {
 public:
  /// `stream` (nullptr: the default stream) of device `device_index`.
  CUDAStream(cudaStream_t stream, int device_index)
      : stream_(stream), device_index_(device_index) {}

  cudaStream_t stream() const { return stream_; }
  int deviceIndex() const { return device_index_; }
  Device device() const { return Device(DeviceType::CUDA, device_index_); }
  bool isDefault() const { return stream_ == nullptr; }
  /// A number naming the stream among those of its device (0 for the
  /// default stream), as torch's stream_id.
  int64_t id() const { return reinterpret_cast<intptr_t>(stream_); }
  /// The stream's priority (lower is higher priority; 0 is the default).
  int priority() const;

  /// True when all work queued on the stream so far has finished.
  bool query() const;
  /// Blocks the calling thread until all work queued so far has finished.
  void synchronize() const;

  bool operator==(const CUDAStream& o) const {
    return stream_ == o.stream_ && device_index_ == o.device_index_;
  }
  bool operator!=(const CUDAStream& o) const { return !(*this == o); }

 private:
  cudaStream_t stream_;
  int device_index_;
};

/// `device_index` < 0 means the calling thread's current device.
CUDAStream getDefaultCUDAStream(int device_index = -1);
/// The calling thread's current stream on the device.
CUDAStream getCurrentCUDAStream(int device_index = -1);
/// Makes `stream` the calling thread's current stream on its device (the
/// current device is not changed: see CUDAStreamGuard for that).
void setCurrentCUDAStream(CUDAStream stream);
/// A stream from the device's pool: 32 non-blocking streams per device and
/// priority, handed out round-robin, as torch's getStreamFromPool.
CUDAStream getStreamFromPool(bool high_priority = false, int device_index = -1);
/// cudaDeviceSynchronize on the device: every stream's work has finished.
void deviceSynchronize(int device_index = -1);

/// The calling thread's current stream handle on its current device: what
/// the kernels launch on. Cheap (one thread-local load after cudaGetDevice).
cudaStream_t currentStreamHandle();
/// The same for a device the caller knows is current (no cudaGetDevice,
/// which costs hundreds of nanoseconds on some systems); an index out of
/// [0, kMaxDevices) falls back to asking the runtime.
cudaStream_t currentStreamHandle(int device_index);

/// Makes `stream`'s device current and `stream` its current stream for
/// the scope; restores both on exit.
class CUDAStreamGuard {
 public:
  explicit CUDAStreamGuard(CUDAStream stream);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  CUDAStreamGuard& operator=(const CUDAStreamGuard&) = delete;

  CUDAStream originalStream() const { return original_stream_; }
  CUDAStream currentStream() const { return current_stream_; }

 private:
  CUDADeviceGuard device_guard_;  // restores the device after the stream
  CUDAStream original_stream_;    // of the guarded stream's device
  CUDAStream current_stream_;
};

/// A CUDA event: recorded on a stream, it completes when the work queued
/// before it has; other streams (block) or the host (synchronize) can wait
/// for it. Created lazily, on the device of the first stream it is
/// recorded on. Move-only.
class CUDAEvent {
 public:
  /// `enable_timing`: elapsedTime works (costs a little per record).
  /// `blocking`: synchronize() sleeps instead of spinning.
  explicit CUDAEvent(bool enable_timing = false, bool blocking = false);
  ~CUDAEvent();
  CUDAEvent(CUDAEvent&& other) noexcept;
  CUDAEvent& operator=(CUDAEvent&& other) noexcept;
  CUDAEvent(const CUDAEvent&) = delete;
  CUDAEvent& operator=(const CUDAEvent&) = delete;

  /// Captures the work queued on `stream` so far. Throws InvalidArgument
  /// when the event was created on another device.
  void record(const CUDAStream& stream);
  /// Makes future work on `stream` wait for this event (nothing to wait
  /// for before the first record).
  void block(const CUDAStream& stream) const;
  /// True when the captured work has finished (or nothing was recorded).
  bool query() const;
  /// Waits on the host for the captured work.
  void synchronize() const;
  /// Milliseconds from this event to `end`; both must have been recorded
  /// with timing enabled and have completed.
  float elapsedTime(const CUDAEvent& end) const;

  bool isCreated() const { return event_ != nullptr; }
  bool wasRecorded() const { return was_recorded_; }
  int deviceIndex() const { return device_index_; }
  cudaEvent_t event() const { return event_; }

 private:
  unsigned flags_;
  bool was_recorded_ = false;
  int device_index_ = -1;
  cudaEvent_t event_ = nullptr;
};

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_STREAM_H_

// A small thread pool for the CPU kernels: parallel_for over an index range,
// with a user-settable number of threads (c10's at::parallel_for and
// at::set_num_threads, without OpenMP).
//
//   set_num_threads(4);
//   parallel_for(0, n, /*grain_size=*/32768, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
//   });
//
// Thread safety: every function may be called from any thread. fn runs on
// the calling thread and on pool threads at once, so it must be safe to call
// concurrently on disjoint ranges. A parallel_for inside fn runs inline on
// its thread (no nested parallelism, no deadlock). set_num_threads while
// other threads are inside parallel_for is safe: they finish on the pool
// they started with.
#ifndef TURNOUT_KERNELS_PARALLEL_H_
#define TURNOUT_KERNELS_PARALLEL_H_

#include <cstdint>
#include <functional>

namespace turnout {

/// Elements below which a kernel should not bother splitting work: c10's
/// at::internal::GRAIN_SIZE.
constexpr int64_t kGrainSize = 32768;

/// Calls fn(chunk_begin, chunk_end) over disjoint chunks covering
/// [begin, end), each at least `grain_size` long (but the last), using up to
/// get_num_threads() threads including the caller. Returns when every chunk
/// is done. An exception thrown by fn is rethrown here (the first one; the
/// other chunks still run to completion). Runs inline when the range is at
/// most `grain_size` long, when one thread is set, or when called from inside
/// another parallel_for.
void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& fn);

/// Sets the number of threads parallel_for uses (the caller counts as one).
/// Throws Error(InvalidArgument) unless n >= 1. The default is the number of
/// hardware threads, or TURNOUT_NUM_THREADS from the environment when set.
void set_num_threads(int n);

/// The number of threads parallel_for uses.
int get_num_threads();

/// True on a thread that is running a chunk of a parallel_for (the caller's
/// own chunk included).
bool in_parallel_region();

}  // namespace turnout

#endif  // TURNOUT_KERNELS_PARALLEL_H_

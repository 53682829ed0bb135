// Walks over every element of a shape with two stride sets at once, handing
// a body the two element offsets: what a kernel that reads one tensor and
// writes another (copy, fill, reductions, softmax) loops with when it does
// not go through cpuKernel (kernels/loops.h).
//
//   forEachOffset(dst.sizes(), src_strides, dst.strides(),
//                 [&](int64_t s, int64_t d) { out[d] = in[s]; });
//   parallelForEachOffset(sizes, in_strides, out_strides, /*work=*/n,
//                         [&](int64_t i, int64_t o) { row(in + i, out + o); });
//
// Thread safety: forEachOffset is a pure loop; parallelForEachOffset runs
// its body concurrently (see there).
#ifndef TURNOUT_KERNELS_STRIDED_WALK_H_
#define TURNOUT_KERNELS_STRIDED_WALK_H_

#include <algorithm>
#include <cstdint>

#include "dispatcher/core/tensor.h"
#include "kernels/parallel.h"

namespace turnout {

/// Calls `f(a_offset, b_offset)` for every index of `sizes` in row-major
/// order, the offsets (in elements) being the index dotted with `a_strides`
/// and `b_strides`. The innermost dimension is a plain loop; a 0-dim shape
/// is one call f(0, 0), a shape with a zero size none.
/// Precondition: all three have the same length.
template <class F>
void forEachOffset(IntArrayRef sizes, IntArrayRef a_strides,
                   IntArrayRef b_strides, F&& f);

/// forEachOffset, split over parallel_for's threads along the largest
/// dimension when the tensor has at least 2 * kGrainSize elements' worth of
/// work (`work_per_element` says how much each call of `f` does). `f` runs
/// concurrently on disjoint elements, so it must only write what its
/// offsets name. Elements within a chunk come in row-major order.
template <class F>
void parallelForEachOffset(IntArrayRef sizes, IntArrayRef a_strides,
                           IntArrayRef b_strides, int64_t work_per_element,
                           F&& f);

// Implementation details.

template <class F>
void forEachOffset(IntArrayRef sizes, IntArrayRef a_strides,
                   IntArrayRef b_strides, F&& f) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  if (nd == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  DimVector index(nd, 0);
  int64_t a = 0;
  int64_t b = 0;
  const int64_t inner = sizes[nd - 1];
  const int64_t inner_a = a_strides[nd - 1];
  const int64_t inner_b = b_strides[nd - 1];
  while (true) {
    for (int64_t i = 0; i < inner; ++i) f(a + i * inner_a, b + i * inner_b);
    // Advance the outer dimensions like an odometer, keeping the offsets
    // current.
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      a += a_strides[d];
      b += b_strides[d];
      if (++index[d] < sizes[d]) break;
      a -= a_strides[d] * sizes[d];
      b -= b_strides[d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

template <class F>
void parallelForEachOffset(IntArrayRef sizes, IntArrayRef a_strides,
                           IntArrayRef b_strides, int64_t work_per_element,
                           F&& f) {
  int64_t numel = 1;
  size_t split = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    numel *= sizes[d];
    if (sizes[d] > sizes[split]) split = d;
  }
  const int64_t work = numel * std::max<int64_t>(work_per_element, 1);
  if (sizes.empty() || numel == 0 || work < 2 * kGrainSize ||
      get_num_threads() <= 1 || in_parallel_region() || sizes[split] < 2) {
    forEachOffset(sizes, a_strides, b_strides, f);
    return;
  }
  const int64_t per_unit = work / sizes[split];
  const int64_t grain =
      std::max<int64_t>(kGrainSize / std::max<int64_t>(per_unit, 1), 1);
  parallel_for(0, sizes[split], grain, [&](int64_t begin, int64_t end) {
    DimVector sub(sizes.begin(), sizes.end());
    sub[split] = end - begin;
    const int64_t a0 = begin * a_strides[split];
    const int64_t b0 = begin * b_strides[split];
    forEachOffset(sub, a_strides, b_strides,
                  [&](int64_t ao, int64_t bo) { f(a0 + ao, b0 + bo); });
  });
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_STRIDED_WALK_H_

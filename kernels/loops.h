// Elementwise loops for CPU kernels (a small TensorIterator): run a typed
// function over the broadcast shape of an output and its inputs, whatever
// their strides, with a contiguous fast path the compiler vectorises and
// parallel_for over large tensors.
//
//   Tensor out = emptyTensor(inferBroadcastSize(a.sizes(), b.sizes()),
//                            ScalarType::Float, a.device());
//   cpuKernel(out, a, b, [](float x, float y) { return x + y; });
//
//   visitDtype(t.scalar_type(), "neg", [&](auto tag) {
//     using scalar_t = typename decltype(tag)::type;
//     cpuKernel(out, t, [](scalar_t x) -> scalar_t { return -x; });
//   });
//
// Contract of cpuKernel(out, inputs..., f):
//   - f takes one argument per input, of exactly the C++ type of that
//     input's dtype, and returns exactly the C++ type of out's dtype (cast
//     inputs first, with castTo, when they differ: the loop never converts);
//   - every input broadcasts to out.sizes() (the caller checked the shapes,
//     e.g. with inferBroadcastSize; a violation is an internal error);
//   - out does not partially overlap an input (being the same memory with
//     the same strides, as in-place operators do, is fine);
//   - f is pure: it runs concurrently on disjoint ranges, and must not throw.
//   - every tensor is on the CPU (else NotImplemented: a composite kernel's
//     CPU helper reached with another device's tensors).
// Works for 0-dim and empty tensors. Thread safety: as parallel_for.
#ifndef TURNOUT_KERNELS_LOOPS_H_
#define TURNOUT_KERNELS_LOOPS_H_

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/parallel.h"

namespace turnout {

// ---- Loops -----------------------------------------------------------------------

/// out[i] = f(a[i]) over out's shape (see the contract in the file comment).
template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, Func f);
/// out[i] = f(a[i], b[i]).
template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, const Tensor& b, Func f);
/// out[i] = f(a[i], b[i], c[i]).
template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, const Tensor& b,
               const Tensor& c, Func f);

// ---- Converting copies ------------------------------------------------------

/// Writes src, broadcast to dst's shape and converted to dst's dtype (with
/// convertElement), into dst (any strides): the one converting copy of the
/// CPU kernels, copy_'s included. Nothing happens when either is on Meta;
/// when either is on another device (CUDA), the call is dst.copy_(src),
/// that device's kernel. Preconditions: src broadcasts to dst.sizes();
/// dst does not partially overlap src and has no two elements at one
/// address (the overlap check throws InvalidArgument).
void copyCast(const Tensor& dst, const Tensor& src);

/// `t` when it already has dtype `dtype` (whatever its strides); else a new
/// contiguous tensor of t's sizes holding t's values converted (on Meta: no
/// data).
Tensor castTo(const Tensor& t, ScalarType dtype);

/// `t` when it is already contiguous with dtype `dtype`; else a new
/// contiguous tensor of t's sizes holding t's values converted (on Meta: no
/// data). For kernels that index their input as a flat array.
Tensor contiguousCastTo(const Tensor& t, ScalarType dtype);

// Implementation details.
namespace detail {

constexpr int kMaxLoopOperands = 4;

// The geometry of a loop: out's shape with broadcast inputs, dimensions of
// size 1 dropped and mergeable dimensions merged, innermost first (out's
// last dimension, or its smallest stride when it is not contiguous).
// Strides are in bytes, operand 0 is the output. ndim >= 1 unless
// numel == 0.
struct LoopGeometry {
  int num_operands = 0;
  int64_t numel = 0;
  DimVector sizes;  // innermost first
  absl::InlinedVector<DimVector, kMaxLoopOperands> strides;
  char* data[kMaxLoopOperands] = {};
};

LoopGeometry makeLoopGeometry(const Tensor& out,
                              absl::Span<const Tensor* const> inputs);

// Checks that each operand's dtype is the C++ type the function uses.
void checkLoopDtypes(const Tensor& out, ScalarType out_type,
                     absl::Span<const Tensor* const> inputs,
                     absl::Span<const ScalarType> input_types);

// The signature of a lambda or functor with one non-template operator().
template <class T>
struct LoopFunctionTraits : LoopFunctionTraits<decltype(&T::operator())> {};
template <class C, class R, class... A>
struct LoopFunctionTraits<R (C::*)(A...) const> {
  using Return = R;
  using Args = std::tuple<std::decay_t<A>...>;
  static constexpr size_t kArity = sizeof...(A);
};
template <class C, class R, class... A>
struct LoopFunctionTraits<R (C::*)(A...)>
    : LoopFunctionTraits<R (C::*)(A...) const> {};

template <size_t I, class Args>
using LoopArg = std::tuple_element_t<I, Args>;

// Input I's element i: a hoisted value when its bit in kScalarMask is set
// (stride 0), else the i-th element of a contiguous array.
template <unsigned kScalarMask, size_t I, class T>
inline T loadOperand(const T* p, const T& value, int64_t i) {
  if constexpr (((kScalarMask >> I) & 1u) != 0) {
    return value;
  } else {
    return p[i];
  }
}

// The fast path: a contiguous output, each input contiguous or broadcast
// (stride 0, per kScalarMask). Typed pointers and no aliasing between
// iterations (ivdep: in-place operands share indices) let it vectorise.
template <unsigned kScalarMask, class Traits, class Func, size_t... I>
inline void contiguousLoop(char* const* data, int64_t n, const Func& f,
                           std::index_sequence<I...>) {
  using R = typename Traits::Return;
  using Args = typename Traits::Args;
  R* out = reinterpret_cast<R*>(data[0]);
  const std::tuple<const LoopArg<I, Args>*...> in(
      reinterpret_cast<const LoopArg<I, Args>*>(data[I + 1])...);
  const std::tuple<LoopArg<I, Args>...> values(
      (((kScalarMask >> I) & 1u) != 0 ? std::get<I>(in)[0]
                                      : LoopArg<I, Args>())...);
#pragma GCC ivdep
  for (int64_t i = 0; i < n; ++i) {
    out[i] = f(loadOperand<kScalarMask, I>(std::get<I>(in),
                                           std::get<I>(values), i)...);
  }
}

// Any strides.
template <class Traits, class Func, size_t... I>
inline void stridedLoop(char* const* data, const int64_t* strides, int64_t n,
                        const Func& f, std::index_sequence<I...>) {
  using R = typename Traits::Return;
  using Args = typename Traits::Args;
  char* out = data[0];
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(out + i * strides[0]) =
        f(*reinterpret_cast<const LoopArg<I, Args>*>(data[I + 1] +
                                                     i * strides[I + 1])...);
  }
}

template <class Traits, class Func, unsigned kMask = 0>
inline void dispatchContiguousLoop(unsigned mask, char* const* data,
                                   int64_t n, const Func& f) {
  constexpr size_t kInputs = Traits::kArity;
  if constexpr (kMask + 1 < (1u << kInputs)) {
    if (mask != kMask) {
      dispatchContiguousLoop<Traits, Func, kMask + 1>(mask, data, n, f);
      return;
    }
  }
  contiguousLoop<kMask, Traits>(data, n, f,
                                std::make_index_sequence<kInputs>());
}

// Sets bit I of *mask for each broadcast input (stride 0); true when every
// other input is contiguous.
template <class Args, size_t... I>
inline bool classifyInputs(const int64_t* strides, unsigned* mask,
                           std::index_sequence<I...>) {
  bool fast = true;
  ((strides[I + 1] == 0
        ? static_cast<void>(*mask |= 1u << I)
        : static_cast<void>(fast &= strides[I + 1] ==
                                    static_cast<int64_t>(
                                        sizeof(LoopArg<I, Args>)))),
   ...);
  return fast;
}

// One innermost run of n elements from the operand pointers `data`.
template <class Traits, class Func>
inline void innerLoop(char* const* data, const int64_t* strides, int64_t n,
                      const Func& f) {
  using R = typename Traits::Return;
  using Args = typename Traits::Args;
  constexpr size_t kInputs = Traits::kArity;
  if (strides[0] == static_cast<int64_t>(sizeof(R))) {
    unsigned mask = 0;
    const bool fast = classifyInputs<Args>(strides, &mask,
                                           std::make_index_sequence<kInputs>());
    if (fast) {
      dispatchContiguousLoop<Traits>(mask, data, n, f);
      return;
    }
  }
  stridedLoop<Traits>(data, strides, n, f, std::make_index_sequence<kInputs>());
}

// Runs f over elements [begin, end) of the geometry, in order.
template <class Traits, class Func>
void runLoopRange(const LoopGeometry& g, int64_t begin, int64_t end,
                  const Func& f) {
  const int nops = g.num_operands;
  const int ndim = static_cast<int>(g.sizes.size());
  DimVector index(ndim, 0);
  int64_t rest = begin;
  for (int d = 0; d < ndim; ++d) {
    index[d] = rest % g.sizes[d];
    rest /= g.sizes[d];
  }
  char* ptrs[kMaxLoopOperands];
  int64_t inner_strides[kMaxLoopOperands];
  for (int k = 0; k < nops; ++k) {
    ptrs[k] = g.data[k];
    for (int d = 0; d < ndim; ++d) ptrs[k] += index[d] * g.strides[k][d];
    inner_strides[k] = g.strides[k][0];
  }
  while (begin < end) {
    const int64_t n = std::min(g.sizes[0] - index[0], end - begin);
    innerLoop<Traits>(ptrs, inner_strides, n, f);
    begin += n;
    if (begin >= end) break;
    // Carry into the outer dimensions.
    for (int k = 0; k < nops; ++k) ptrs[k] -= index[0] * g.strides[k][0];
    index[0] = 0;
    for (int d = 1; d < ndim; ++d) {
      if (++index[d] < g.sizes[d]) {
        for (int k = 0; k < nops; ++k) ptrs[k] += g.strides[k][d];
        break;
      }
      for (int k = 0; k < nops; ++k) {
        ptrs[k] -= (g.sizes[d] - 1) * g.strides[k][d];
      }
      index[d] = 0;
    }
  }
}

// a == b, without a library call for the few dimensions tensors have.
inline bool sameSizes(IntArrayRef a, IntArrayRef b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// True when every input has out's sizes and all are contiguous (a shape
// with no elements counts: the loop then runs zero times). The stored
// values (*_default): a kernel runs below the Python key, where a subclass
// that answers its sizes (TensorImpl::python_custom) is not asked, and the
// readers' cold branches would keep GCC from inlining this.
template <size_t N>
inline bool allContiguousLike(const Tensor& out,
                              const Tensor* const (&inputs)[N]) {
  const TensorImpl* o = out.unsafeGetTensorImpl();
  if (!o->is_contiguous_default()) return false;
  const IntArrayRef sizes = o->sizes_default();
  for (const Tensor* t : inputs) {
    const TensorImpl* i = t->unsafeGetTensorImpl();
    if (!i->is_contiguous_default() || !sameSizes(i->sizes_default(), sizes)) {
      return false;
    }
  }
  return true;
}

template <class Args, size_t... I>
inline void checkDtypesFor(const Tensor& out, ScalarType out_type,
                           const Tensor* const* inputs,
                           std::index_sequence<I...>) {
  const ScalarType input_types[] = {
      CppTypeToScalarType<LoopArg<I, Args>>::value...};
  // Inline comparisons; the out-of-line call only builds the message.
  bool ok = out.scalar_type() == out_type;
  ((ok &= inputs[I]->scalar_type() == input_types[I]), ...);
  if (__builtin_expect(!ok, 0)) {
    checkLoopDtypes(out, out_type, absl::MakeConstSpan(inputs, sizeof...(I)),
                    input_types);
  }
}

template <class Func, class... Inputs>
void cpuKernelImpl(const Tensor& out, Func f, const Inputs&... inputs) {
  using Traits = LoopFunctionTraits<Func>;
  static_assert(Traits::kArity == sizeof...(Inputs),
                "cpuKernel: the function must take one argument per input");
  using Args = typename Traits::Args;
  const Tensor* input_ptrs[] = {&inputs...};
  checkDtypesFor<Args>(out, CppTypeToScalarType<typename Traits::Return>::value,
                       input_ptrs, std::make_index_sequence<sizeof...(Inputs)>());
  // Fast path: every operand contiguous with out's shape. One flat loop, no
  // geometry (the common case of same-shape operands; a 1-element add pays
  // for nothing else).
  if (allContiguousLike(out, input_ptrs)) {
    const int64_t n = out.unsafeGetTensorImpl()->numel_default();
    char* data[] = {static_cast<char*>(out.data_ptr()),
                    static_cast<char*>(inputs.data_ptr())...};
    if (n <= kGrainSize) {
      contiguousLoop<0, Traits>(data, n, f,
                                std::make_index_sequence<sizeof...(Inputs)>());
      return;
    }
    parallel_for(0, n, kGrainSize, [&](int64_t begin, int64_t end) {
      char* chunk[] = {data[0] + begin * static_cast<int64_t>(out.itemsize()),
                       (static_cast<char*>(inputs.data_ptr()) +
                        begin * static_cast<int64_t>(inputs.itemsize()))...};
      contiguousLoop<0, Traits>(chunk, end - begin, f,
                                std::make_index_sequence<sizeof...(Inputs)>());
    });
    return;
  }
  const LoopGeometry g = makeLoopGeometry(out, input_ptrs);
  if (g.numel == 0) return;
  if (g.numel <= kGrainSize) {
    runLoopRange<Traits>(g, 0, g.numel, f);
    return;
  }
  parallel_for(0, g.numel, kGrainSize, [&](int64_t begin, int64_t end) {
    runLoopRange<Traits>(g, begin, end, f);
  });
}

}  // namespace detail

template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, Func f) {
  detail::cpuKernelImpl(out, std::move(f), a);
}
template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, const Tensor& b, Func f) {
  detail::cpuKernelImpl(out, std::move(f), a, b);
}
template <class Func>
void cpuKernel(const Tensor& out, const Tensor& a, const Tensor& b,
               const Tensor& c, Func f) {
  detail::cpuKernelImpl(out, std::move(f), a, b, c);
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_LOOPS_H_

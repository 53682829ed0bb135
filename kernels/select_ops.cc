// Operators that select or move a tensor's elements, which kernels are
// written with (issue 18): tril and triu (with tril_, triu_, .out), roll,
// masked_select (and .out) and equal, torch 1.13's schemas, CPU kernels and,
// where torch 1.13 has them, Meta kernels (their gradients:
// kernels/autograd/select_pointwise_autograd.cc; on CUDA through
// kernels/cuda/cpu_round_trip.cc).
//
//   tril(x, k)     x with the elements above diagonal k zeroed (triu: below)
//   roll(x, s, d)  elements shifted by s[i] along dims d[i], wrapping round;
//                  no dims: x rolled as a flat array, shape kept
//   masked_select  x's elements where the mask (broadcast together) holds,
//                  as a 1-D tensor, in row-major order
//   equal(a, b)    same sizes and the same values (compared in the promoted
//                  dtype; NaN is not equal to itself) -> bool
//
// torch 1.13's rules and errors: tril/triu need 2+ dimensions (IndexError
// "Dimension out of range ... but got -2"), work on every dtype, in place
// on any layout (an expanded self too, as torch's), and their out= wants
// self's dtype ("Expected out tensor to have dtype float, but got long int
// instead"); roll wants shifts ("`shifts` required") and as many dims as
// shifts ("shifts and dimensions must align. shifts: 2, dims:1"); the mask
// of masked_select is Bool (uint8 with torch's deprecation warning) and
// broadcasts with self, its out= has self's dtype. Results are new
// contiguous tensors, as torch's. masked_select and equal have no Meta
// kernel, as in torch 1.13 (masked_select's size depends on the mask's
// values; equal's answer on the data): on Meta they report the missing
// kernel.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/core/tensor_impl.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

void checkDefined(const char* op, const Tensor& t, const char* arg) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, ": expected `",
                arg, "` to be a defined tensor, but got an undefined one");
}

void checkSameDeviceAs(const char* op, const Tensor& a, const Tensor& b) {
  TURNOUT_CHECK(a.device() == b.device(), ErrorKind::InvalidArgument, op,
                ": Expected all tensors to be on the same device, but found "
                "at least two devices, ",
                a.device(), " and ", b.device(), "!");
}

// t's strides (in elements) as a tensor broadcast to `sizes` (0 along the
// dimensions it is broadcast in). Precondition: t broadcasts to sizes.
DimVector broadcastStrides(const Tensor& t, IntArrayRef sizes) {
  DimVector s(sizes.size(), 0);
  const int64_t lead = static_cast<int64_t>(sizes.size()) - t.dim();
  for (int64_t d = 0; d < t.dim(); ++d) {
    s[lead + d] = t.size(d) == 1 ? 0 : t.stride(d);
  }
  return s;
}

// Steps a row-major index over `sizes`, keeping the element offsets of the
// operands (strides in elements, one set per operand) up to date.
template <size_t N>
struct IndexWalk {
  IntArrayRef sizes;
  DimVector index;
  const DimVector* strides[N];
  int64_t offset[N] = {};

  bool next() {  // false after the last element
    for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
      if (++index[d] < sizes[d]) {
        for (size_t k = 0; k < N; ++k) offset[k] += (*strides[k])[d];
        return true;
      }
      for (size_t k = 0; k < N; ++k) {
        offset[k] -= (sizes[d] - 1) * (*strides[k])[d];
      }
      index[d] = 0;
    }
    return false;
  }
};

char* bytesOf(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// ---- tril, triu ---------------------------------------------------------------------

enum class Tri { Lower, Upper };

const char* triName(Tri k) { return k == Tri::Lower ? "tril" : "triu"; }

void checkTri(Tri k, const char* op, const Tensor& self) {
  checkDefined(op, self, "self");
  TURNOUT_CHECK(self.dim() != 0, ErrorKind::Index,
                "Dimension specified as -2 but tensor has no dimensions (",
                op, " needs a tensor of 2 or more dimensions: a matrix or a "
                "batch of matrices)");
  TURNOUT_CHECK(self.dim() >= 2, ErrorKind::Index,
                "Dimension out of range (expected to be in range of [-1, 0], "
                "but got -2) (", op, " needs a tensor of 2 or more "
                "dimensions, got a 1-D one; ", triName(k),
                " of a vector: unsqueeze it to a matrix first)");
}

// Zeroes, in place, the elements of t (CPU, any strides) outside the kept
// triangle: for tril those above diagonal k (j - i > k), for triu those
// below it (j - i < k).
void zeroOutside(Tri kind, const Tensor& t, int64_t k) {
  if (t.numel() == 0) return;
  const int64_t nd = t.dim();
  const int64_t rows = t.size(nd - 2);
  const int64_t cols = t.size(nd - 1);
  const int64_t rs = t.stride(nd - 2);
  const int64_t cs = t.stride(nd - 1);
  // Clamped so that i + k cannot overflow; the kept set is the same.
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  const size_t item = t.itemsize();
  char* base = bytesOf(t);
  const IntArrayRef batch(t.sizes().data(), nd - 2);
  DimVector batch_strides(t.strides().begin(), t.strides().begin() + nd - 2);
  IndexWalk<1> walk{batch, DimVector(nd - 2, 0), {&batch_strides}};
  do {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t lo = kind == Tri::Lower ? std::max<int64_t>(0, i + k + 1)
                                            : 0;
      const int64_t hi = kind == Tri::Lower ? cols
                                            : std::min<int64_t>(cols, i + k);
      char* row = base + (walk.offset[0] + i * rs) * static_cast<int64_t>(item);
      for (int64_t j = lo; j < hi; ++j) {
        std::memset(row + j * cs * static_cast<int64_t>(item), 0, item);
      }
    }
  } while (walk.next());
}

template <bool kCpu, Tri kKind>
Tensor triFunctional(const Tensor& self, int64_t diagonal) {
  checkTri(kKind, triName(kKind), self);
  Tensor out = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if constexpr (kCpu) {
    copyCast(out, self);
    zeroOutside(kKind, out, diagonal);
  }
  return out;
}

template <bool kCpu, Tri kKind>
Tensor& triInplace(Tensor& self, int64_t diagonal) {
  const std::string op = std::string(triName(kKind)) + "_";
  checkTri(kKind, op.c_str(), self);
  if constexpr (kCpu) zeroOutside(kKind, self, diagonal);
  return self;
}

template <bool kCpu, Tri kKind>
Tensor& triOut(const Tensor& self, int64_t diagonal, Tensor& out) {
  const std::string op = std::string(triName(kKind)) + ".out";
  checkTri(kKind, op.c_str(), self);
  checkDefined(op.c_str(), out, "out");
  TURNOUT_CHECK(out.scalar_type() == self.scalar_type(),
                ErrorKind::InvalidArgument,
                "Expected out tensor to have dtype ",
                typeMetaName(self.scalar_type()), ", but got ",
                typeMetaName(out.scalar_type()), " instead");
  checkSameDeviceAs(op.c_str(), self, out);
  if constexpr (kCpu) {
    // Computed aside: out may be self.
    const Tensor result = triFunctional<true, kKind>(self, diagonal);
    reduce_internal::resizeOutput(out, self.sizes(), op.c_str());
    copyCast(out, result);
  } else {
    reduce_internal::resizeOutput(out, self.sizes(), op.c_str());
  }
  return out;
}

// ---- roll -------------------------------------------------------------------------

// Per dimension, the shift in [0, size) (all dimensions' shifts summed);
// `flat`: no dims, the tensor rolled as a flat array by shifts[0].
struct RollPlan {
  bool flat = false;
  int64_t flat_shift = 0;
  DimVector shift;
};

int64_t floorMod(int64_t a, int64_t n) {
  const int64_t r = a % n;
  return r < 0 ? r + n : r;
}

RollPlan planRoll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  checkDefined("roll", self, "self");
  TURNOUT_CHECK(!shifts.empty(), ErrorKind::InvalidArgument,
                "`shifts` required (roll: pass one shift per dimension in "
                "dims, or one shift to roll the flattened tensor)");
  RollPlan p;
  if (dims.empty() && shifts.size() == 1) {
    p.flat = true;
    if (self.numel() > 0) p.flat_shift = floorMod(shifts[0], self.numel());
    return p;
  }
  TURNOUT_CHECK(shifts.size() == dims.size(), ErrorKind::InvalidArgument,
                "shifts and dimensions must align. shifts: ", shifts.size(),
                ", dims:", dims.size());
  p.shift.assign(self.dim(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    TURNOUT_CHECK(self.dim() > 0, ErrorKind::Index, "Dimension specified as ",
                  dims[i], " but tensor has no dimensions (roll of a 0-dim "
                  "tensor takes no dims)");
    const int64_t d = maybeWrapDim(dims[i], self.dim());
    const int64_t size = self.size(d);
    if (size > 0) p.shift[d] = floorMod(p.shift[d] + floorMod(shifts[i], size),
                                        size);
  }
  return p;
}

// dst (contiguous, self's sizes and dtype) = self rolled.
void computeRoll(const Tensor& dst, const Tensor& self, const RollPlan& p) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const Tensor src = contiguousCastTo(self, self.scalar_type());
  const int64_t item = static_cast<int64_t>(self.itemsize());
  const char* in = bytesOf(src);
  char* out = bytesOf(dst);
  if (p.flat) {
    const int64_t s = p.flat_shift;
    std::memcpy(out + s * item, in, static_cast<size_t>((n - s) * item));
    std::memcpy(out, in + (n - s) * item, static_cast<size_t>(s * item));
    return;
  }
  // Output element idx reads input element (idx - shift) mod size, per
  // dimension; the source offsets of the last dimension are a rotation, so
  // each output row is two copies.
  const int64_t nd = self.dim();
  if (nd == 0) {
    std::memcpy(out, in, static_cast<size_t>(item));
    return;
  }
  const DimVector strides = contiguousStrides(self.sizes());
  const int64_t cols = self.size(nd - 1);
  const int64_t s = p.shift[nd - 1];
  const IntArrayRef outer(self.sizes().data(), nd - 1);
  DimVector index(nd - 1, 0);
  int64_t out_row = 0;
  while (true) {
    int64_t src_row = 0;
    for (int64_t d = 0; d < nd - 1; ++d) {
      src_row += floorMod(index[d] - p.shift[d], self.size(d)) * strides[d];
    }
    char* o = out + out_row * item;
    const char* r = in + src_row * item;
    std::memcpy(o + s * item, r, static_cast<size_t>((cols - s) * item));
    std::memcpy(o, r + (cols - s) * item, static_cast<size_t>(s * item));
    out_row += cols;
    int64_t d = nd - 2;
    for (; d >= 0; --d) {
      if (++index[d] < outer[d]) break;
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

template <bool kCpu>
Tensor rollKernel(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  const RollPlan p = planRoll(self, shifts, dims);
  Tensor out = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if constexpr (kCpu) computeRoll(out, self, p);
  return out;
}

// ---- masked_select ------------------------------------------------------------------

DimVector planMaskedSelect(const char* op, const Tensor& self,
                           const Tensor& mask) {
  checkDefined(op, self, "self");
  checkDefined(op, mask, "mask");
  TURNOUT_CHECK(mask.scalar_type() == ScalarType::Bool ||
                    mask.scalar_type() == ScalarType::Byte,
                ErrorKind::InvalidArgument,
                "masked_select: expected BoolTensor or ByteTensor for mask, "
                "got a ", toString(mask.scalar_type()),
                " one (pass mask.to(bool), e.g. x > 0)");
  checkSameDeviceAs(op, self, mask);
  if (mask.scalar_type() == ScalarType::Byte) {
    TURNOUT_WARN(
        "masked_select received a mask with dtype torch.uint8, this behavior "
        "is now deprecated,please use a mask with dtype torch.bool instead.");
  }
  return inferBroadcastSize(self.sizes(), mask.sizes());
}

// self's elements where mask holds, both broadcast to `sizes`, row-major.
Tensor computeMaskedSelect(const Tensor& self, const Tensor& mask,
                           IntArrayRef sizes) {
  const int64_t numel = numelOf(sizes);
  const DimVector self_strides = broadcastStrides(self, sizes);
  const DimVector mask_strides = broadcastStrides(mask, sizes);
  const auto* m = reinterpret_cast<const uint8_t*>(mask.data_ptr());
  int64_t count = 0;
  if (numel > 0) {
    IndexWalk<1> walk{sizes, DimVector(sizes.size(), 0), {&mask_strides}};
    do {
      count += m[walk.offset[0]] != 0;
    } while (walk.next());
  }
  Tensor result = emptyTensor({count}, self.scalar_type(), self.device());
  if (count == 0) return result;
  const size_t item = self.itemsize();
  const char* in = bytesOf(self);
  char* out = bytesOf(result);
  IndexWalk<2> walk{
      sizes, DimVector(sizes.size(), 0), {&self_strides, &mask_strides}};
  do {
    if (m[walk.offset[1]] != 0) {
      std::memcpy(out, in + walk.offset[0] * static_cast<int64_t>(item), item);
      out += item;
    }
  } while (walk.next());
  return result;
}

Tensor maskedSelect(const Tensor& self, const Tensor& mask) {
  const DimVector sizes = planMaskedSelect("masked_select", self, mask);
  return computeMaskedSelect(self, mask, sizes);
}

Tensor& maskedSelectOut(const Tensor& self, const Tensor& mask, Tensor& out) {
  const char* op = "masked_select.out";
  const DimVector sizes = planMaskedSelect(op, self, mask);
  checkDefined(op, out, "out");
  TURNOUT_CHECK(out.scalar_type() == self.scalar_type(),
                ErrorKind::InvalidArgument,
                "masked_select(): self and result must have the same scalar "
                "type (self is ", toString(self.scalar_type()), ", out is ",
                toString(out.scalar_type()), ")");
  checkSameDeviceAs(op, self, out);
  // Computed aside: out may be self or mask.
  const Tensor result = computeMaskedSelect(self, mask, sizes);
  reduce_internal::resizeOutput(out, result.sizes(), op);
  copyCast(out, result);
  return out;
}

// ---- equal ------------------------------------------------------------------------

bool equalKernel(const Tensor& self, const Tensor& other) {
  checkDefined("equal", self, "self");
  checkDefined("equal", other, "other");
  checkSameDeviceAs("equal", self, other);
  if (self.sizes() != other.sizes()) return false;
  if (self.numel() == 0) return true;
  const ScalarType common = resultType(self, other);
  const Tensor a = castTo(self, common);
  const Tensor b = castTo(other, common);
  const DimVector as(a.strides().begin(), a.strides().end());
  const DimVector bs(b.strides().begin(), b.strides().end());
  return visitDtype(common, "equal", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    const T* pa = static_cast<const T*>(a.data_ptr());
    const T* pb = static_cast<const T*>(b.data_ptr());
    IndexWalk<2> walk{a.sizes(), DimVector(a.dim(), 0), {&as, &bs}};
    do {
      if (!(M(pa[walk.offset[0]]) == M(pb[walk.offset[1]]))) return false;
    } while (walk.next());
    return true;
  });
}

template <bool kCpu>
void registerSelectOps(Library& m) {
  m.impl("tril", TURNOUT_FN((triFunctional<kCpu, Tri::Lower>)));
  m.impl("tril_", TURNOUT_FN((triInplace<kCpu, Tri::Lower>)));
  m.impl("tril.out", TURNOUT_FN((triOut<kCpu, Tri::Lower>)));
  m.impl("triu", TURNOUT_FN((triFunctional<kCpu, Tri::Upper>)));
  m.impl("triu_", TURNOUT_FN((triInplace<kCpu, Tri::Upper>)));
  m.impl("triu.out", TURNOUT_FN((triOut<kCpu, Tri::Upper>)));
  m.impl("roll", TURNOUT_FN(rollKernel<kCpu>));
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  // torch 1.13's schemas.
  m.def("tril(Tensor self, int diagonal=0) -> Tensor");
  m.def("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)");
  m.def("tril.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("triu(Tensor self, int diagonal=0) -> Tensor");
  m.def("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)");
  m.def("triu.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor");
  m.def("masked_select(Tensor self, Tensor mask) -> Tensor");
  m.def("masked_select.out(Tensor self, Tensor mask, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("equal(Tensor self, Tensor other) -> bool");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  turnout::registerSelectOps<true>(m);
  m.impl("masked_select", TURNOUT_FN(turnout::maskedSelect));
  m.impl("masked_select.out", TURNOUT_FN(turnout::maskedSelectOut));
  m.impl("equal", TURNOUT_FN(turnout::equalKernel));
}
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { turnout::registerSelectOps<false>(m); }

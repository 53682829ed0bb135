// The general operators of issue 20 item 3 that small TorchScript models
// call: schemas (torch 1.13's), CPU and Meta kernels, and composite kernels.
//
// - Pointwise, CPU and Meta: maximum, minimum, fmod.Tensor (fmod_),
//   remainder.Tensor (remainder_.Tensor; Python's %, the result taking the
//   divisor's sign), floor_divide (floor_divide_), bitwise_xor.Tensor
//   (bitwise_xor_), pow.Tensor_Tensor (pow_.Tensor; integers as torch's:
//   wrapping, 0 for a negative exponent but of a base of 1 or -1),
//   logical_not (logical_not_): broadcasting and type promotion as add's
//   (kernels/type_promotion.h), PyTorch's errors ("ZeroDivisionError" for
//   an integer division by zero).
// - Reductions, CPU and Meta: all, any (full and .dim; Bool results, uint8
//   for uint8 inputs, as torch 1.13), prod (full and .dim_int, with dtype=;
//   integers and Bool give Long).
// - resize_, CPU and Meta (and CUDA, kernels/cuda/shape.cc): torch's
//   Tensor.resize_ (kernels/reduce_utils.h resizeTensor); its Autograd
//   kernel refuses a tensor that requires grad.
// - gather and scatter_add, CPU and Meta (gather's gradient is scatter_add,
//   scatter_add's is gather: both in kernels/autograd/misc_autograd.cc).
// - CompositeExplicitAutograd (their gradients in misc_autograd.cc):
//   logsumexp, norm.Scalar, norm.ScalarOpt_dim over amax/exp/sum/abs/pow,
//   and norm's dtype= overloads (ScalarOpt_dtype, ScalarOpt_dim_dtype) over
//   to() and those, whose out= overloads are in kernels/out_variants.cc;
//   remainder.Scalar, remainder_.Scalar and remainder.Scalar_Tensor over
//   remainder.Tensor (their own gradients, as torch 1.13's: `x % 4` is
//   RemainderBackward0, `4 % x` is not differentiable); pow.Scalar and
//   pow_.Scalar over pow.Tensor_Tensor (pow_.Tensor); clamp.Tensor,
//   clamp_min.Tensor and clamp_max.Tensor over maximum/minimum (their
//   gradients, torch 1.13's, in autograd/nn_autograd.cc).
// - The out= overloads of remainder and pow (torch 1.13's schemas and out=
//   rules): remainder.Tensor_out, pow.Tensor_Tensor_out and
//   pow.Tensor_Scalar_out, CPU and Meta, over the functional kernels;
//   remainder.Scalar_out and pow.Scalar_out, CompositeExplicitAutograd over
//   those with the Scalar as a wrapped number (on CUDA through
//   kernels/cuda/pointwise.cc's); remainder.Scalar_Tensor_out, as torch
//   generates it, the functional result copied into out (any dtype).
// - CompositeImplicitAutograd (gradients, Meta and other devices from the
//   operators they call): narrow (.Tensor), expand_as, type_as, squeeze()
//   without a dim, repeat, flip, dot, mv, new_zeros (new_ones, new_full),
//   sum_to_size, zero_, fill_.Tensor,
//   eye (.m), fmod.Scalar (fmod_.Scalar), floor_divide.Scalar
//   (floor_divide_.Scalar), bitwise_xor.Scalar (bitwise_xor_.Scalar),
//   __xor__ and __ixor__; max.other, min.other, isnan, isinf,
//   copy and bitwise_xor.Scalar_Tensor.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/factory_utils.h"
#include "kernels/indexing.h"
#include "kernels/int_pow.h"
#include "kernels/linalg.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/output_layout.h"
#include "kernels/reduce.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/shape_ops.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

void checkDefined(const char* op, const Tensor& t) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined tensor, but got an undefined one");
}

// ---- Pointwise binary operators ----------------------------------------------

enum class Bin {
  Maximum,
  Minimum,
  Fmod,
  Remainder,
  FloorDivide,
  BitwiseXor,
  Pow
};

const char* binName(Bin k) {
  switch (k) {
    case Bin::Maximum: return "maximum";
    case Bin::Minimum: return "minimum";
    case Bin::Fmod: return "fmod";
    case Bin::Remainder: return "remainder";
    case Bin::FloorDivide: return "floor_divide";
    case Bin::BitwiseXor: return "bitwise_xor";
    case Bin::Pow: return "pow";
  }
  return "";
}

// The name torch's dtype errors use.
const char* binKernelName(Bin k) {
  switch (k) {
    case Bin::Maximum: return "maximum_cpu";
    case Bin::Minimum: return "minimum_cpu";
    case Bin::Fmod: return "fmod_cpu";
    case Bin::Remainder: return "remainder_cpu";
    case Bin::FloorDivide: return "div_floor_cpu";
    case Bin::BitwiseXor: return "bitwise_xor_cpu";
    case Bin::Pow: return "pow";
  }
  return "";
}

void checkBinDtype(Bin k, ScalarType common) {
  const bool bad =
      (k == Bin::BitwiseXor && !isIntegralType(common, /*include_bool=*/true)) ||
      ((k == Bin::Fmod || k == Bin::Remainder || k == Bin::FloorDivide ||
        k == Bin::Pow) &&
       common == ScalarType::Bool);
  TURNOUT_CHECK(!bad, ErrorKind::NotImplemented, "\"", binKernelName(k),
                "\" not implemented for '", toString(common), "'");
}

template <class M>
bool isNanValue(M v) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// The operator on compute values. Integer division by zero is reported
// through *zero (the loop must not throw).
template <Bin kKind, class M>
M binApply(M a, M b, bool* zero) {
  if constexpr (kKind == Bin::Maximum || kKind == Bin::Minimum) {
    if (isNanValue(a)) return a;
    if (isNanValue(b)) return b;
    if constexpr (kKind == Bin::Maximum) {
      return a < b ? b : a;
    } else {
      return b < a ? b : a;
    }
  } else if constexpr (kKind == Bin::Fmod) {
    if constexpr (std::is_floating_point_v<M>) {
      return std::fmod(a, b);
    } else {
      if (b == 0) {
        *zero = true;
        return M(0);
      }
      if constexpr (std::is_signed_v<M>) {
        if (b == M(-1)) return M(0);  // avoids INT_MIN % -1
      }
      return static_cast<M>(a % b);
    }
  } else if constexpr (kKind == Bin::Pow) {
    if constexpr (std::is_floating_point_v<M>) {
      return std::pow(a, b);
    } else if constexpr (std::is_same_v<M, bool>) {
      return a;  // not reached: checkBinDtype refuses Bool
    } else {
      return int_pow_internal::intPow(a, b);  // torch's integer rules
    }
  } else if constexpr (kKind == Bin::Remainder) {
    // Python's %: the remainder of the floor division, with the divisor's
    // sign (fmod's result moved by one divisor when the signs differ).
    if constexpr (std::is_floating_point_v<M>) {
      M mod = std::fmod(a, b);
      if (mod != M(0) && ((b < M(0)) != (mod < M(0)))) mod += b;
      return mod;
    } else {
      if (b == 0) {
        *zero = true;
        return M(0);
      }
      if constexpr (std::is_signed_v<M>) {
        if (b == M(-1)) return M(0);  // avoids INT_MIN % -1
        M r = static_cast<M>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<M>(r + b);
        return r;
      } else {
        return static_cast<M>(a % b);
      }
    }
  } else if constexpr (kKind == Bin::FloorDivide) {
    if constexpr (std::is_floating_point_v<M>) {
      // Python's //: floor of the true quotient, computed from fmod so that
      // a // b * b + a % b == a holds as in torch.
      if (b == M(0)) return a / b;
      M mod = std::fmod(a, b);
      M div = (a - mod) / b;
      if (mod != M(0) && ((b < M(0)) != (mod < M(0)))) div -= M(1);
      if (div != M(0)) {
        M floordiv = std::floor(div);
        if (div - floordiv > M(0.5)) floordiv += M(1);
        return floordiv;
      }
      return std::copysign(M(0), a / b);
    } else {
      if (b == 0) {
        *zero = true;
        return M(0);
      }
      if constexpr (std::is_signed_v<M>) {
        if (b == M(-1)) {
          using U = std::make_unsigned_t<
              std::conditional_t<(sizeof(M) < sizeof(int)), int, M>>;
          return static_cast<M>(U(0) - static_cast<U>(a));
        }
        M q = static_cast<M>(a / b);
        M r = static_cast<M>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) --q;
        return q;
      } else {
        return static_cast<M>(a / b);
      }
    }
  } else {
    if constexpr (std::is_same_v<M, bool>) {
      return a != b;
    } else if constexpr (std::is_integral_v<M>) {
      return static_cast<M>(a ^ b);
    } else {
      return a;  // not reached: checkBinDtype refuses floating types
    }
  }
}

struct BinPlan {
  ScalarType common;
  DimVector sizes;
};

BinPlan planBin(Bin k, const char* op, const Tensor& self,
                const Tensor& other) {
  checkDefined(op, self);
  checkDefined(op, other);
  BinPlan p;
  p.common = resultType(self, other);
  checkBinDtype(k, p.common);
  p.sizes = inferBroadcastSize(self.sizes(), other.sizes());
  const bool self_scalar = self.dim() == 0 && self.is_cpu();
  const bool other_scalar = other.dim() == 0 && other.is_cpu();
  TURNOUT_CHECK(self.device() == other.device() || self_scalar || other_scalar,
                ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                self.device(), " and ", other.device(), "!");
  return p;
}

// dst (dtype p.common, sizes p.sizes, CPU) = op(self, other).
template <Bin kKind>
void computeBin(const Tensor& dst, const Tensor& self, const Tensor& other,
                ScalarType common) {
  if (dst.numel() == 0) return;
  // Set by any thread that divides an integer by zero (the loop runs on
  // parallel_for's threads and must not throw).
  std::atomic<bool> zero{false};
  visitDtype(common, binName(kKind), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    if constexpr (kKind == Bin::BitwiseXor &&
                  !std::is_integral_v<T>) {
      TURNOUT_INTERNAL_ASSERT(false, "bitwise_xor of a floating dtype");
    } else {
      std::atomic<bool>* z = &zero;
      cpuKernel(dst, castTo(self, common), castTo(other, common),
                [z](T a, T b) -> T {
                  bool local = false;
                  const T r = T(binApply<kKind, M>(M(a), M(b), &local));
                  if (local) z->store(true, std::memory_order_relaxed);
                  return r;
                });
    }
  });
  TURNOUT_CHECK(!zero.load(std::memory_order_relaxed),
                ErrorKind::InvalidArgument, "ZeroDivisionError");
}

template <bool kCpu, Bin kKind>
Tensor binFunctional(const Tensor& self, const Tensor& other) {
  const BinPlan p = planBin(kKind, binName(kKind), self, other);
  Device device = self.dim() == 0 && self.is_cpu() ? other.device()
                                                   : self.device();
  // torch 1.13's layout (kernels/output_layout.h).
  Tensor out = emptyElementwiseOutput(p.sizes, p.common, device,
                                      {&self, &other});
  if constexpr (kCpu) computeBin<kKind>(out, self, other, p.common);
  return out;
}

template <bool kCpu, Bin kKind>
Tensor& binInplace(Tensor& self, const Tensor& other) {
  const std::string op = std::string(binName(kKind)) + "_";
  const BinPlan p = planBin(kKind, op.c_str(), self, other);
  TURNOUT_CHECK(canCast(p.common, self.scalar_type()),
                ErrorKind::InvalidArgument, "result type ", toString(p.common),
                " can't be cast to the desired output type ",
                toString(self.scalar_type()));
  TURNOUT_CHECK(self.sizes() == IntArrayRef(p.sizes),
                ErrorKind::InvalidArgument, "output with shape ",
                shapeString(self.sizes()), " doesn't match the broadcast shape ",
                shapeString(p.sizes));
  checkNoInternalOverlap(self, op);
  if constexpr (kCpu) {
    // Computed aside, then copied: `other` may share self's memory.
    Tensor result = emptyTensor(p.sizes, p.common, self.device());
    computeBin<kKind>(result, self, other, p.common);
    copyCast(self, result);
  }
  return self;
}

// remainder.Tensor_out, pow.Tensor_Tensor_out: torch's out= rules for a
// broadcasting binary operator (TensorIterator's): the promoted dtype must
// cast to out's ("result type Float can't be cast to the desired output
// type Long"), out on the inputs' device, no expanded out and no partial
// overlap with an input; then out takes the broadcast shape (resizeOutput:
// a warning when it had elements) and the result, computed aside and cast
// to its dtype. Every check comes before the resize, so a refused call
// leaves out as it was.
template <bool kCpu, Bin kKind>
Tensor& binOut(const Tensor& self, const Tensor& other, Tensor& out) {
  const std::string op = std::string(binName(kKind)) +
                         (kKind == Bin::Pow ? ".Tensor_Tensor_out"
                                            : ".Tensor_out");
  const BinPlan p = planBin(kKind, op.c_str(), self, other);
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined out tensor, but got an undefined one");
  TURNOUT_CHECK(canCast(p.common, out.scalar_type()),
                ErrorKind::InvalidArgument, "result type ", toString(p.common),
                " can't be cast to the desired output type ",
                toString(out.scalar_type()));
  const Device device =
      self.dim() == 0 && self.is_cpu() ? other.device() : self.device();
  TURNOUT_CHECK(out.device() == device, ErrorKind::InvalidArgument, op,
                ": expected the out tensor on ", device,
                ", the inputs' device, but it is on ", out.device(),
                "; pass an out tensor on ", device);
  checkNoInternalOverlap(out, op);
  checkNoPartialOverlap(out, self, op);
  checkNoPartialOverlap(out, other, op);
  if constexpr (kCpu) {
    // Computed aside: out may be one of the inputs, or be resized below.
    Tensor result = emptyElementwiseOutput(p.sizes, p.common, out.device(),
                                           {&self, &other});
    computeBin<kKind>(result, self, other, p.common);
    reduce_internal::resizeElementwiseOutput(out, p.sizes, {&self, &other},
                                             op.c_str());
    copyCast(out, result);
  } else {
    reduce_internal::resizeElementwiseOutput(out, p.sizes, {&self, &other},
                                             op.c_str());
  }
  return out;
}

// logical_not: Bool result; in place keeps self's dtype (0 / 1).
template <bool kCpu>
Tensor logicalNot(const Tensor& self) {
  checkDefined("logical_not", self);
  Tensor out = emptyElementwiseOutput(self.sizes(), ScalarType::Bool,
                                      self.device(), {&self});
  if constexpr (kCpu) {
    if (out.numel() > 0) {
      cpuKernel(out, castTo(self, ScalarType::Bool),
                [](bool x) -> bool { return !x; });
    }
  }
  return out;
}

template <bool kCpu>
Tensor& logicalNotInplace(Tensor& self) {
  checkDefined("logical_not_", self);
  checkNoInternalOverlap(self, "logical_not_");
  if constexpr (kCpu) copyCast(self, logicalNot<true>(self));
  return self;
}

// ---- Reductions: all, any, prod ---------------------------------------------------

// self with dimension `d` moved last, as a contiguous [outer, inner] array
// of dtype `compute` (d < 0: every dimension reduced, outer = 1).
struct Rows {
  Tensor data;
  int64_t outer = 1;
  int64_t inner = 1;
};

Rows rowsOf(const Tensor& self, int64_t d, ScalarType compute) {
  Rows r;
  if (d < 0 || self.dim() == 0) {
    r.inner = self.numel();
    r.outer = 1;
    r.data = contiguousCastTo(self, compute);
    return r;
  }
  const int64_t nd = self.dim();
  DimVector sizes, strides;
  for (int64_t i = 0; i < nd; ++i) {
    if (i == d) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  sizes.push_back(self.sizes()[d]);
  strides.push_back(self.strides()[d]);
  const Tensor moved = makeView(self, sizes, strides, self.storage_offset());
  r.inner = self.sizes()[d];
  r.outer = numelOf(absl::MakeConstSpan(sizes.data(), sizes.size() - 1));
  r.data = contiguousCastTo(moved, compute);
  return r;
}

DimVector reducedSizes(const Tensor& self, int64_t d, bool keepdim) {
  DimVector out;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i != d) {
      out.push_back(self.sizes()[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

enum class Red { All, Any, Prod };

// out (contiguous, dtype of T's accumulator written as `out`'s dtype) gets
// the reduction of each row.
template <Red kKind>
void reduceRows(const Rows& r, const Tensor& out) {
  if (out.numel() == 0) return;
  if constexpr (kKind == Red::Prod) {
    visitDtype(out.scalar_type(), "prod", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      const T* in = r.data.data_ptr<T>();
      T* o = out.data_ptr<T>();
      for (int64_t i = 0; i < r.outer; ++i) {
        M acc = M(1);
        for (int64_t j = 0; j < r.inner; ++j) {
          if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
            using U = std::make_unsigned_t<M>;  // wraps, as torch's
            acc = static_cast<M>(static_cast<U>(acc) *
                                 static_cast<U>(M(in[i * r.inner + j])));
          } else if constexpr (std::is_same_v<M, bool>) {
            acc = acc && in[i * r.inner + j];
          } else {
            acc = acc * M(in[i * r.inner + j]);
          }
        }
        o[i] = T(acc);
      }
    });
  } else {
    const bool* in = r.data.data_ptr<bool>();
    visitDtype(out.scalar_type(), kKind == Red::All ? "all" : "any",
               [&](auto tag) {
                 using T = typename decltype(tag)::type;
                 T* o = out.data_ptr<T>();
                 for (int64_t i = 0; i < r.outer; ++i) {
                   bool acc = kKind == Red::All;
                   for (int64_t j = 0; j < r.inner; ++j) {
                     const bool v = in[i * r.inner + j];
                     if (kKind == Red::All ? !v : v) {
                       acc = !acc;
                       break;
                     }
                   }
                   o[i] = convertElement<T>(acc);
                 }
               });
  }
}

ScalarType logicalResult(const Tensor& self) {
  return self.scalar_type() == ScalarType::Byte ? ScalarType::Byte
                                                : ScalarType::Bool;
}

template <bool kCpu, Red kKind>
Tensor logicalAll(const Tensor& self) {
  checkDefined(kKind == Red::All ? "all" : "any", self);
  Tensor out = emptyTensor({}, logicalResult(self), self.device());
  if constexpr (kCpu) {
    reduceRows<kKind>(rowsOf(self, -1, ScalarType::Bool), out);
  }
  return out;
}

template <bool kCpu, Red kKind>
Tensor logicalDim(const Tensor& self, int64_t dim, bool keepdim) {
  checkDefined(kKind == Red::All ? "all" : "any", self);
  const int64_t d = maybeWrapDim(dim, self.dim());
  Tensor out = emptyTensor(reducedSizes(self, d, keepdim), logicalResult(self),
                           self.device());
  if constexpr (kCpu) {
    reduceRows<kKind>(rowsOf(self, self.dim() == 0 ? -1 : d, ScalarType::Bool),
                      out);
  }
  return out;
}

ScalarType prodDtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return isIntegralType(self.scalar_type(), /*include_bool=*/true)
             ? ScalarType::Long
             : self.scalar_type();
}

template <bool kCpu>
Tensor prodAll(const Tensor& self, std::optional<ScalarType> dtype) {
  checkDefined("prod", self);
  const ScalarType t = prodDtype(self, dtype);
  Tensor out = emptyTensor({}, t, self.device());
  if constexpr (kCpu) reduceRows<Red::Prod>(rowsOf(self, -1, t), out);
  return out;
}

template <bool kCpu>
Tensor prodDim(const Tensor& self, int64_t dim, bool keepdim,
               std::optional<ScalarType> dtype) {
  checkDefined("prod", self);
  const int64_t d = maybeWrapDim(dim, self.dim());
  const ScalarType t = prodDtype(self, dtype);
  Tensor out = emptyTensor(reducedSizes(self, d, keepdim), t, self.device());
  if constexpr (kCpu) {
    reduceRows<Red::Prod>(rowsOf(self, self.dim() == 0 ? -1 : d, t), out);
  }
  return out;
}

// ---- gather, scatter_add --------------------------------------------------------------

// torch's gather/scatter shape checks: index has self's number of
// dimensions (a 0-dim counts as 1) and is no larger than self (and src)
// along every dimension but `dim` (along every one for src).
void checkGatherShape(const char* op, const Tensor& self, int64_t d,
                      const Tensor& index, const Tensor* src) {
  TURNOUT_CHECK(index.scalar_type() == ScalarType::Long,
                ErrorKind::InvalidArgument, op,
                "(): Expected dtype int64 for index");
  const int64_t self_dims = std::max<int64_t>(self.dim(), 1);
  const int64_t index_dims = std::max<int64_t>(index.dim(), 1);
  if (index.numel() == 0) return;
  TURNOUT_CHECK(index_dims == self_dims, ErrorKind::InvalidArgument,
                "Index tensor must have the same number of dimensions as ",
                src ? "self tensor" : "input tensor");
  auto size = [](const Tensor& t, int64_t i) {
    return t.dim() == 0 ? int64_t{1} : t.sizes()[i];
  };
  for (int64_t i = 0; i < self_dims; ++i) {
    if (i != d) {
      TURNOUT_CHECK(size(index, i) <= size(self, i),
                    ErrorKind::InvalidArgument,
                    "Size does not match at dimension ", i,
                    " expected index ", shapeString(index.sizes()),
                    " to be smaller than self ", shapeString(self.sizes()),
                    " apart from dimension ", d,
                    src ? std::string(" and to be smaller size than src ") +
                              shapeString(src->sizes())
                        : std::string());
    }
    if (src) {
      TURNOUT_CHECK(size(index, i) <= size(*src, i),
                    ErrorKind::InvalidArgument,
                    "Size does not match at dimension ", i,
                    " expected index ", shapeString(index.sizes()),
                    " to be smaller than self ", shapeString(self.sizes()),
                    " apart from dimension ", d,
                    " and to be smaller size than src ",
                    shapeString(src->sizes()));
    }
  }
}

// Calls f(self_offset, other_offset, index_value) for every element of
// `index` (elements counted, strides in elements): self's position is the
// index element's with dimension d replaced by the index value, other's
// (out for gather, src for scatter_add) the index element's own.
template <class F>
void forEachIndex(const char* op, const Tensor& self, int64_t d,
                  const Tensor& index, const Tensor& other, F f) {
  const int64_t nd = index.dim();
  const int64_t n = index.numel();
  if (n == 0) return;
  const int64_t limit = self.dim() == 0 ? 1 : self.sizes()[d];
  const int64_t* ip = index.data_ptr<int64_t>();
  DimVector pos(std::max<int64_t>(nd, 1), 0);
  auto stride = [](const Tensor& t, int64_t i) {
    return t.dim() == 0 ? int64_t{0} : t.strides()[i];
  };
  for (int64_t k = 0; k < n; ++k) {
    int64_t io = 0, so = 0, oo = 0;
    for (int64_t i = 0; i < nd; ++i) {
      io += pos[i] * index.strides()[i];
      oo += pos[i] * stride(other, i);
      if (i != d) so += pos[i] * stride(self, i);
    }
    const int64_t v = ip[io];
    TURNOUT_CHECK(v >= 0 && v < limit, ErrorKind::Index, "index ", v,
                  " is out of bounds for dimension ", d, " with size ", limit);
    so += v * stride(self, d);
    f(so, oo);
    for (int64_t i = nd - 1; i >= 0; --i) {
      if (++pos[i] < index.sizes()[i]) break;
      pos[i] = 0;
    }
  }
  (void)op;
}

template <bool kCpu>
Tensor gatherKernel(const Tensor& self, int64_t dim, const Tensor& index,
                    bool sparse_grad) {
  checkDefined("gather", self);
  checkDefined("gather", index);
  TURNOUT_CHECK(!sparse_grad, ErrorKind::NotImplemented,
                "gather: sparse_grad=True is not supported (turnout has no "
                "sparse tensors); pass sparse_grad=False");
  const int64_t d = maybeWrapDim(dim, self.dim());
  checkGatherShape("gather", self, d, index, nullptr);
  TURNOUT_CHECK(index.device() == self.device(), ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                self.device(), " and ", index.device(), "!");
  Tensor out = emptyTensor(index.sizes(), self.scalar_type(), self.device());
  if constexpr (kCpu) {
    visitDtype(self.scalar_type(), "gather", [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* sp = self.data_ptr<T>();
      T* op = out.data_ptr<T>();
      forEachIndex("gather", self, d, index, out,
                   [&](int64_t so, int64_t oo) { op[oo] = sp[so]; });
    });
  }
  return out;
}

template <bool kCpu>
Tensor scatterAddKernel(const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& src) {
  checkDefined("scatter_add", self);
  checkDefined("scatter_add", index);
  checkDefined("scatter_add", src);
  const int64_t d = maybeWrapDim(dim, self.dim());
  checkGatherShape("scatter", self, d, index, &src);
  TURNOUT_CHECK(src.scalar_type() == self.scalar_type(),
                ErrorKind::InvalidArgument,
                "scatter(): Expected self.dtype to be equal to src.dtype");
  TURNOUT_CHECK(index.device() == self.device() &&
                    src.device() == self.device(),
                ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices");
  Tensor out = emptyTensor(self.sizes(), self.scalar_type(), self.device());
  if constexpr (kCpu) {
    copyCast(out, self);
    visitDtype(self.scalar_type(), "scatter_add", [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      T* op = out.data_ptr<T>();
      const T* sp = src.data_ptr<T>();
      forEachIndex("scatter_add", out, d, index, src,
                   [&](int64_t so, int64_t oo) {
                     if constexpr (std::is_same_v<T, bool>) {
                       op[so] = op[so] || sp[oo];
                     } else {
                       op[so] = T(M(op[so]) + M(sp[oo]));
                     }
                   });
    });
  }
  return out;
}

// ---- CompositeExplicitAutograd: logsumexp, norm -----------------------------------

DimVector wrapDims(const char* op, IntArrayRef dims, int64_t ndim) {
  DimVector out;
  std::vector<bool> seen(std::max<int64_t>(ndim, 1), false);
  for (int64_t dim : dims) {
    const int64_t d = maybeWrapDim(dim, ndim);
    TURNOUT_CHECK(!seen[d], ErrorKind::InvalidArgument, "dim ", d,
                  " appears multiple times in the list of dims");
    seen[d] = true;
    out.push_back(d);
  }
  (void)op;
  return out;
}

Tensor logsumexpKernel(const Tensor& self, IntArrayRef dim, bool keepdim) {
  checkDefined("logsumexp", self);
  TURNOUT_CHECK(!dim.empty(), ErrorKind::InvalidArgument,
                "logsumexp: expected at least one dimension in dim (torch "
                "1.13 fails on an empty list too)");
  wrapDims("logsumexp", dim, self.dim());
  const Tensor x = isFloatingType(self.scalar_type())
                       ? self
                       : to(self, kDefaultFloatType);
  if (x.numel() == 0) {
    return turnout::log(turnout::sum(turnout::exp(x), dim, keepdim));
  }
  // The maximum, with infinities replaced by 0 so that inf - inf is not NaN.
  Tensor m = amax(x, dim, /*keepdim=*/true);
  m = masked_fill(m, eq(turnout::abs(m), INFINITY), 0);
  Tensor s = turnout::log(turnout::sum(turnout::exp(sub(x, m)), dim, keepdim));
  return add(s, keepdim ? m : reshape(m, s.sizes()));
}

void checkNormDtype(const Tensor& self) {
  TURNOUT_CHECK(isFloatingType(self.scalar_type()), ErrorKind::InvalidArgument,
                "norm(): input dtype should be either floating point or "
                "complex. Got ",
                toString(self.scalar_type()), " instead.");
}

Tensor normImpl(const Tensor& self, const std::optional<Scalar>& p_opt,
                IntArrayRef dim, bool keepdim) {
  checkDefined("norm", self);
  checkNormDtype(self);
  wrapDims("norm", dim, self.dim());
  const double p = p_opt ? p_opt->toDouble() : 2.0;
  const Tensor a = turnout::abs(self);
  if (std::isinf(p)) {
    return p > 0 ? amax(a, dim, keepdim) : amin(a, dim, keepdim);
  }
  if (p == 0) {
    return turnout::sum(to(ne(self, 0), self.scalar_type()), dim, keepdim);
  }
  if (p == 1) return turnout::sum(a, dim, keepdim);
  if (p == 2) return turnout::sqrt(turnout::sum(mul(a, a), dim, keepdim));
  return pow(turnout::sum(pow(a, p), dim, keepdim), 1.0 / p);
}

Tensor normScalar(const Tensor& self, const Scalar& p) {
  return normImpl(self, p, {}, false);
}
Tensor normScalarOptDim(const Tensor& self, const std::optional<Scalar>& p,
                        IntArrayRef dim, bool keepdim) {
  return normImpl(self, p, dim, keepdim);
}
// norm with dtype=: self converted to dtype (up or down, as torch's), then
// the norm computed in it.
Tensor normInDtype(const Tensor& self, ScalarType dtype) {
  checkDefined("norm", self);
  TURNOUT_CHECK(isFloatingType(dtype), ErrorKind::InvalidArgument,
                "norm(): the desired output dtype should be either floating "
                "point or complex. Got ",
                dtype, " instead.");
  return to(self, dtype);
}
// Through the norm operators (p None is 2); below autograd, their
// gradients being norm's formula (autograd/misc_autograd.cc, as torch's).
Tensor normScalarOptDtype(const Tensor& self, const std::optional<Scalar>& p,
                          ScalarType dtype) {
  static const auto op =
      lookup<Tensor(const Tensor&, const Scalar&)>("aten::norm", "Scalar");
  return op.call(normInDtype(self, dtype), p.value_or(Scalar(2)));
}
Tensor normScalarOptDimDtype(const Tensor& self, const std::optional<Scalar>& p,
                             IntArrayRef dim, bool keepdim, ScalarType dtype) {
  static const auto op =
      lookup<Tensor(const Tensor&, const std::optional<Scalar>&, IntArrayRef,
                    bool)>("aten::norm", "ScalarOpt_dim");
  return op.call(normInDtype(self, dtype), p, dim, keepdim);
}

// ---- CompositeImplicitAutograd ------------------------------------------------------

// sum_to_size: sums the leading dimensions `size` lacks and those it has
// as 1 where self's is not (keeping them), then views to `size`: the
// reduction of a broadcast, as torch's.
Tensor sumToSizeKernel(const Tensor& self, IntArrayRef size) {
  checkDefined("sum_to_size", self);
  const int64_t lead = self.dim() - static_cast<int64_t>(size.size());
  std::vector<int64_t> dims;
  bool expandable = lead >= 0;
  for (int64_t i = 0; expandable && i < self.dim(); ++i) {
    if (i < lead) {
      dims.push_back(i);
    } else if (size[i - lead] == 1 && self.size(i) != 1) {
      dims.push_back(i);
    } else {
      expandable = size[i - lead] == self.size(i);
    }
  }
  TURNOUT_CHECK(expandable, ErrorKind::InvalidArgument,
                "sum_to_size: size ", shapeString(size),
                " is not expandable to the tensor's size ",
                shapeString(self.sizes()),
                "; give at most its number of dimensions, each 1 or equal "
                "to the tensor's");
  if (dims.empty()) return self;
  Tensor r = turnout::sum(self, IntArrayRef(dims), /*keepdim=*/true);
  return lead > 0 ? view(r, size) : r;
}

Tensor narrowKernel(const Tensor& self, int64_t dim, int64_t start,
                    int64_t length) {
  checkDefined("narrow", self);
  TURNOUT_CHECK(self.dim() > 0, ErrorKind::InvalidArgument,
                "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t d = maybeWrapDim(dim, self.dim());
  const int64_t size = self.sizes()[d];
  TURNOUT_CHECK(start >= -size && start <= size, ErrorKind::Index,
                "start out of range (expected to be in range of [", -size,
                ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  TURNOUT_CHECK(length >= 0 && start <= size - length,
                ErrorKind::InvalidArgument, "start (", start, ") + length (",
                length, ") exceeds dimension size (", size, ").");
  return slice(self, d, start, start + length, 1);
}

Tensor narrowTensorKernel(const Tensor& self, int64_t dim, const Tensor& start,
                          int64_t length) {
  checkDefined("narrow", start);
  TURNOUT_CHECK(start.dim() == 0 && isIntegralType(start.scalar_type(), false),
                ErrorKind::InvalidArgument,
                "start must be an 0-dim integral Tensor.");
  return narrowKernel(self, dim, start.item().toLong(), length);
}

Tensor expandAs(const Tensor& self, const Tensor& other) {
  checkDefined("expand_as", other);
  return expand(self, other.sizes());
}

Tensor typeAs(const Tensor& self, const Tensor& other) {
  checkDefined("type_as", other);
  return to(self, other.scalar_type());
}

// squeeze(): every size-1 dimension removed, from the last (so the dims
// left to remove keep their positions).
Tensor squeezeAll(const Tensor& self) {
  checkDefined("squeeze", self);
  Tensor out = self;
  bool any = false;
  for (int64_t d = self.dim() - 1; d >= 0; --d) {
    if (self.sizes()[d] == 1) {
      out = squeeze(out, d);
      any = true;
    }
  }
  // A view even when nothing is removed, as torch's.
  return any ? out : view(self, self.sizes());
}

Tensor repeatKernel(const Tensor& self, IntArrayRef repeats) {
  checkDefined("repeat", self);
  const int64_t n = static_cast<int64_t>(repeats.size());
  TURNOUT_CHECK(n >= self.dim(), ErrorKind::InvalidArgument,
                "Number of dimensions of repeat dims can not be smaller than "
                "number of dimensions of tensor");
  DimVector padded(n - self.dim(), 1);
  padded.insert(padded.end(), self.sizes().begin(), self.sizes().end());
  DimVector target;
  for (int64_t i = 0; i < n; ++i) target.push_back(padded[i] * repeats[i]);
  for (int64_t r : repeats) {
    TURNOUT_CHECK(r >= 0, ErrorKind::InvalidArgument,
                  "Trying to create tensor with negative dimension ", r, ": ",
                  shapeString(target));
  }
  // [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...], then merged.
  DimVector interleaved, expanded;
  for (int64_t i = 0; i < n; ++i) {
    interleaved.push_back(1);
    interleaved.push_back(padded[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(padded[i]);
  }
  const Tensor e = expand(reshape(self, interleaved), expanded);
  // A new tensor always (contiguous() would give self back for all-1s).
  return reshape(clone(e, MemoryFormat::Contiguous), target);
}

Tensor flipKernel(const Tensor& self, IntArrayRef dims) {
  checkDefined("flip", self);
  const DimVector ds = wrapDims("flip", dims, self.dim());
  Tensor out = self;
  for (int64_t d : ds) {
    if (self.dim() == 0) break;
    const int64_t size = self.sizes()[d];
    Tensor index = arange(size - 1, -1, -1,
                          TensorOptions(ScalarType::Long).device(self.device()));
    out = index_select(out, d, index);
  }
  return ds.empty() || self.dim() == 0 ? clone(self) : out;
}

Tensor dotKernel(const Tensor& self, const Tensor& tensor) {
  checkDefined("dot", self);
  checkDefined("dot", tensor);
  TURNOUT_CHECK(self.dim() == 1 && tensor.dim() == 1,
                ErrorKind::InvalidArgument, "1D tensors expected, but got ",
                self.dim(), "D and ", tensor.dim(), "D tensors");
  TURNOUT_CHECK(self.scalar_type() == tensor.scalar_type(),
                ErrorKind::InvalidArgument,
                "dot : expected both vectors to have same dtype, but found ",
                toString(self.scalar_type()), " and ",
                toString(tensor.scalar_type()));
  TURNOUT_CHECK(self.numel() == tensor.numel(), ErrorKind::InvalidArgument,
                "inconsistent tensor size, expected tensor [", self.numel(),
                "] and src [", tensor.numel(),
                "] to have the same number of elements, but got ",
                self.numel(), " and ", tensor.numel(),
                " elements respectively");
  return turnout::sum(mul(self, tensor), self.scalar_type());
}

Tensor mvKernel(const Tensor& self, const Tensor& vec) {
  checkDefined("mv", self);
  checkDefined("mv", vec);
  TURNOUT_CHECK(self.dim() == 2 && vec.dim() == 1, ErrorKind::InvalidArgument,
                "vector + matrix @ vector expected, got 1, ", self.dim(), ", ",
                vec.dim());
  TURNOUT_CHECK(self.sizes()[1] == vec.sizes()[0], ErrorKind::InvalidArgument,
                "size mismatch, got ", self.sizes()[0], ", ", self.sizes()[0],
                "x", self.sizes()[1], ",", vec.sizes()[0]);
  TURNOUT_CHECK(self.scalar_type() == vec.scalar_type(),
                ErrorKind::InvalidArgument, "expected scalar type ",
                toString(self.scalar_type()), " but found ",
                toString(vec.scalar_type()));
  if (isFloatingType(self.scalar_type())) {
    return squeeze(mm(self, unsqueeze(vec, 1)), 1);
  }
  return turnout::sum(mul(self, vec), {1}, false,
                      self.scalar_type());  // integers: mm is float-only
}

Tensor newZeros(const Tensor& self, IntArrayRef size,
                std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  checkDefined("new_zeros", self);
  return zeros(size, TensorOptions()
                         .dtype(dtype ? dtype : self.scalar_type())
                         .layout(layout)
                         .device(device ? device : self.device())
                         .pinned_memory(pin_memory));
}

Tensor newOnes(const Tensor& self, IntArrayRef size,
               std::optional<ScalarType> dtype, std::optional<Layout> layout,
               std::optional<Device> device, std::optional<bool> pin_memory) {
  checkDefined("new_ones", self);
  return ones(size, TensorOptions()
                        .dtype(dtype ? dtype : self.scalar_type())
                        .layout(layout)
                        .device(device ? device : self.device())
                        .pinned_memory(pin_memory));
}

Tensor newFull(const Tensor& self, IntArrayRef size, const Scalar& fill_value,
               std::optional<ScalarType> dtype, std::optional<Layout> layout,
               std::optional<Device> device, std::optional<bool> pin_memory) {
  checkDefined("new_full", self);
  return full(size, fill_value,
              TensorOptions()
                  .dtype(dtype ? dtype : self.scalar_type())
                  .layout(layout)
                  .device(device ? device : self.device())
                  .pinned_memory(pin_memory));
}

// resize_ on every device (CUDA registers it too): the storage grows
// through the device's own copy (kernels/reduce_utils.h).
Tensor& resizeInplace(Tensor& self, IntArrayRef size,
                      std::optional<MemoryFormat> memory_format) {
  reduce_internal::resizeTensor(self, size, memory_format);
  return self;
}

// resize_as_: resize_ to the template's sizes, with the memory format as
// given (Preserve: the template's own, ChannelsLast for a 4-d template
// strided as NHWC, else Contiguous). Errors are resize_'s.
Tensor& resizeAsInplace(Tensor& self, const Tensor& the_template,
                        std::optional<MemoryFormat> memory_format) {
  TURNOUT_CHECK(the_template.defined(), ErrorKind::InvalidArgument,
                "resize_as_: expected a defined template tensor");
  if (memory_format == MemoryFormat::Preserve) {
    const bool nhwc = the_template.dim() == 4 &&
                      !isContiguousAs(the_template, MemoryFormat::Contiguous) &&
                      isContiguousAs(the_template, MemoryFormat::ChannelsLast);
    memory_format =
        nhwc ? MemoryFormat::ChannelsLast : MemoryFormat::Contiguous;
  }
  static const auto op =
      lookup<Tensor&(Tensor&, IntArrayRef, std::optional<MemoryFormat>)>(
          "aten::resize_", "");
  op.call(self, the_template.sizes(), memory_format);
  return self;
}

Tensor& zeroInplace(Tensor& self) {
  checkDefined("zero_", self);
  fill_(self, 0);
  return self;
}

Tensor& fillTensor(Tensor& self, const Tensor& value) {
  checkDefined("fill_", self);
  checkDefined("fill_", value);
  TURNOUT_CHECK(value.dim() == 0, ErrorKind::InvalidArgument,
                "fill_ only supports 0-dimension value tensor but got tensor "
                "with ",
                value.dim(), " dimensions.");
  copy_(self, value);
  return self;
}

Tensor eyeKernel(int64_t n, int64_t m, std::optional<ScalarType> dtype,
                 std::optional<Layout> layout, std::optional<Device> device,
                 std::optional<bool> pin_memory) {
  TURNOUT_CHECK(n >= 0, ErrorKind::InvalidArgument,
                "n must be greater or equal to 0, got ", n);
  TURNOUT_CHECK(m >= 0, ErrorKind::InvalidArgument,
                "m must be greater or equal to 0, got ", m);
  Tensor out = zeros({n, m}, TensorOptions()
                                 .dtype(dtype)
                                 .layout(layout)
                                 .device(device)
                                 .pinned_memory(pin_memory));
  if (n > 0 && m > 0) fill_(diagonal(out, 0, 0, 1), 1);
  return out;
}
Tensor eyeN(int64_t n, std::optional<ScalarType> dtype,
            std::optional<Layout> layout, std::optional<Device> device,
            std::optional<bool> pin_memory) {
  return eyeKernel(n, n, dtype, layout, device, pin_memory);
}

// The Scalar overloads: the Scalar as a 0-dim tensor of the promoted dtype
// (so that promotion is the Scalar's, not a 0-dim tensor's), then the
// Tensor overload.
Tensor wrapScalar(const Tensor& self, const Scalar& other) {
  checkDefined("scalar operand", self);
  return scalar_tensor(other, resultType(self, other), self.device());
}

const auto& fmodTensorOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::fmod", "Tensor");
  return op;
}
const auto& fmodInplaceOp() {
  static const auto op =
      lookup<Tensor&(Tensor&, const Tensor&)>("aten::fmod_", "Tensor");
  return op;
}
const auto& floorDivideOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::floor_divide", "");
  return op;
}
const auto& floorDivideInplaceOp() {
  static const auto op =
      lookup<Tensor&(Tensor&, const Tensor&)>("aten::floor_divide_", "Tensor");
  return op;
}
const auto& xorOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::bitwise_xor",
                                                   "Tensor");
  return op;
}
const auto& xorInplaceOp() {
  static const auto op =
      lookup<Tensor&(Tensor&, const Tensor&)>("aten::bitwise_xor_", "Tensor");
  return op;
}

Tensor fmodScalar(const Tensor& self, const Scalar& other) {
  return fmodTensorOp().call(self, wrapScalar(self, other));
}
Tensor& fmodScalarInplace(Tensor& self, const Scalar& other) {
  return fmodInplaceOp().call(self, wrapScalar(self, other));
}
Tensor floorDivideScalar(const Tensor& self, const Scalar& other) {
  return floorDivideOp().call(self, wrapScalar(self, other));
}
Tensor& floorDivideScalarInplace(Tensor& self, const Scalar& other) {
  return floorDivideInplaceOp().call(self, wrapScalar(self, other));
}
const auto& remainderTensorOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::remainder", "Tensor");
  return op;
}
const auto& remainderInplaceOp() {
  static const auto op =
      lookup<Tensor&(Tensor&, const Tensor&)>("aten::remainder_", "Tensor");
  return op;
}
// The Scalar as a wrapped number, as torch's: it promotes as a number and
// converts to the result dtype as a cast would (a uint8 tensor % -2 divides
// by 254).
Tensor remainderScalar(const Tensor& self, const Scalar& other) {
  checkDefined("remainder", self);
  return remainderTensorOp().call(self, wrappedScalarTensor(other));
}
Tensor& remainderScalarInplace(Tensor& self, const Scalar& other) {
  checkDefined("remainder_", self);
  return remainderInplaceOp().call(self, wrappedScalarTensor(other));
}
const auto& powTensorOp() {
  static const auto op = lookup<Tensor(const Tensor&, const Tensor&)>(
      "aten::pow", "Tensor_Tensor");
  return op;
}
// torch.pow(2, x): the base as a wrapped number (pow(2.5, an int64 tensor)
// is float32, pow(True, one) int64, as torch's).
// torch 1.13 gives pow.Scalar's result (and an out= it resizes) the
// contiguous strides of its sizes whatever the exponent's layout, where
// pow.Tensor_Tensor would follow the exponent's order: the exponent is read
// from a contiguous copy when it is not contiguous, and a result that is
// contiguous gets the canonical strides of its size-1 and size-0
// dimensions (which moves no element).
void giveContiguousStrides(const Tensor& t) {
  TURNOUT_INTERNAL_ASSERT(t.is_contiguous(), "pow.Scalar: a result that is "
                          "not contiguous");
  if (t.strides() != IntArrayRef(contiguousStrides(t.sizes()))) {
    t.unsafeGetTensorImpl()->set_sizes_contiguous(t.sizes());
  }
}
Tensor powScalar(const Scalar& self, const Tensor& exponent) {
  checkDefined("pow", exponent);
  Tensor r = powTensorOp().call(
      wrappedScalarTensor(self),
      exponent.is_contiguous() ? exponent : contiguous(exponent));
  giveContiguousStrides(r);
  return r;
}
// x.pow_(2): pow.Tensor_Scalar (its checks, and its formulas for the
// exponents torch computes specially), written back into self, whose dtype
// the result must have ("Found dtype Long but expected Float", as torch's).
Tensor& powScalarInplace(Tensor& self, const Scalar& exponent) {
  checkDefined("pow_", self);
  const ScalarType result = resultType(self, exponent);
  TURNOUT_CHECK(result == self.scalar_type(), ErrorKind::InvalidArgument,
                "Found dtype ", toString(self.scalar_type()), " but expected ",
                toString(result));
  checkNoInternalOverlap(self, "pow_");
  const Tensor value = pow(self, exponent);
  copy_(self, value);
  return self;
}
// `4 % x`: the Scalar as a wrapped number, so that it promotes as one
// (4.5 % an int64 tensor is float32, as torch's).
Tensor remainderScalarTensor(const Scalar& self, const Tensor& other) {
  checkDefined("remainder", other);
  return remainderTensorOp().call(wrappedScalarTensor(self), other);
}
// ---- The out= overloads of remainder and pow ---------------------------------
//
// remainder.Scalar_out: the Scalar as a wrapped number, then
// remainder.Tensor_out (as the functional Scalar overloads above), below
// autograd: an out= call records no graph.
const auto& remainderOutOp() {
  static const auto op =
      lookup<Tensor&(const Tensor&, const Tensor&, Tensor&)>("aten::remainder",
                                                             "Tensor_out");
  return op;
}
const auto& powTensorTensorOutOp() {
  static const auto op =
      lookup<Tensor&(const Tensor&, const Tensor&, Tensor&)>(
          "aten::pow", "Tensor_Tensor_out");
  return op;
}
Tensor& remainderScalarOut(const Tensor& self, const Scalar& other,
                           Tensor& out) {
  checkDefined("remainder.Scalar_out", self);
  AutoDispatchBelowAutograd below;
  return remainderOutOp().call(self, wrappedScalarTensor(other), out);
}
// remainder.Scalar_Tensor_out is one torch 1.13 generates from the
// functional overload: the result computed (its errors first), then out
// resized to it and assigned by copy_, which converts to any dtype (a
// Float result into a Long out truncates; no castability check).
Tensor& remainderScalarTensorOut(const Scalar& self, const Tensor& other,
                                 Tensor& out) {
  static const auto functional =
      lookup<Tensor(const Scalar&, const Tensor&)>("aten::remainder",
                                                   "Scalar_Tensor");
  const char* name = "remainder.Scalar_Tensor_out";
  checkDefined(name, other);
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, name,
                ": expected a defined out tensor, but got an undefined one");
  AutoDispatchBelowAutograd below;
  const Tensor value = functional.call(self, other);
  reduce_internal::resizeOutput(out, value.sizes(), name);
  copy_(out, value);
  return out;
}

// pow.Scalar_out, as torch 1.13's: a base equal to 1 (an int or a float;
// True is not) fills out with ones whatever its dtype (out takes the
// exponent's shape, on the exponent's device); any other base is a
// wrapped number raised by pow.Tensor_Tensor_out, whose out= rules apply.
bool equalsOne(const Scalar& s) {
  if (s.isFloatingPoint()) return s.toDouble() == 1.0;
  if (s.isIntegral(/*include_bool=*/false)) return s.toLong() == 1;
  return false;
}
Tensor& powScalarOut(const Scalar& self, const Tensor& exponent, Tensor& out) {
  checkDefined("pow.Scalar_out", exponent);
  checkDefined("pow.Scalar_out", out);
  if (equalsOne(self)) {
    TURNOUT_CHECK(out.device() == exponent.device(), ErrorKind::InvalidArgument,
                  "pow.Scalar_out: expected the out tensor on ",
                  exponent.device(), ", the exponent's device, but it is on ",
                  out.device(), "; pass an out tensor on ", exponent.device());
    checkNoInternalOverlap(out, "pow.Scalar_out");
    reduce_internal::resizeOutput(out, exponent.sizes(), "pow.Scalar_out");
    AutoDispatchBelowAutograd below;
    fill_(out, 1);
    return out;
  }
  AutoDispatchBelowAutograd below;
  // An out that is resized gets contiguous strides, as pow.Scalar's result.
  const bool resized = out.sizes() != exponent.sizes();
  Tensor& r = powTensorTensorOutOp().call(
      wrappedScalarTensor(self),
      resized && !exponent.is_contiguous() ? contiguous(exponent) : exponent,
      out);
  if (resized) giveContiguousStrides(r);
  return r;
}

// pow.Tensor_Scalar_out: pow.Tensor_Scalar's kernel at this backend (its
// dtype, its checks and its formulas for the special exponents), written
// into out, which must have the result's dtype exactly (torch runs it as a
// unary operator: "Found dtype Double but expected Float") and is resized
// to self's shape.
template <bool kCpu>
Tensor& powTensorScalarOut(const Tensor& self, const Scalar& exponent,
                           Tensor& out) {
  static const auto op = lookup<Tensor(const Tensor&, const Scalar&)>(
      "aten::pow", "Tensor_Scalar");
  const char* name = "pow.Tensor_Scalar_out";
  checkDefined(name, self);
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, name,
                ": expected a defined out tensor, but got an undefined one");
  const ScalarType result = resultType(self, exponent);
  TURNOUT_CHECK(out.scalar_type() == result, ErrorKind::InvalidArgument,
                "Found dtype ", toString(out.scalar_type()), " but expected ",
                toString(result), " (", name,
                ": out must have the result's dtype)");
  TURNOUT_CHECK(out.device() == self.device(), ErrorKind::InvalidArgument,
                name, ": expected the out tensor on ", self.device(),
                ", self's device, but it is on ", out.device(),
                "; pass an out tensor on ", self.device());
  checkNoInternalOverlap(out, name);
  checkNoPartialOverlap(out, self, name);
  // Computed aside (out may be self), by the functional kernel of this
  // backend; it throws before out changes.
  const Tensor value = op.redispatch(
      DispatchKeySet(kCpu ? DispatchKey::CPU : DispatchKey::Meta), self,
      exponent);
  reduce_internal::resizeOutput(out, value.sizes(), name);
  if constexpr (kCpu) copyCast(out, value);
  return out;
}

// ---- max.other, min.other, clamp*.Tensor, isnan, isinf, copy, bitwise_xor
// .Scalar_Tensor: over the operators above (CompositeImplicitAutograd, but
// isnan, isinf, bitwise_xor.Scalar_Tensor and clamp*.Tensor explicit, as
// torch 1.13's), so that their out= overloads (kernels/out_variants.cc) have
// a functional one.

const auto& maximumOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::maximum", "");
  return op;
}
const auto& minimumOp() {
  static const auto op =
      lookup<Tensor(const Tensor&, const Tensor&)>("aten::minimum", "");
  return op;
}
// max.other and min.other are maximum and minimum (as torch 1.13's).
Tensor maxOther(const Tensor& self, const Tensor& other) {
  return maximumOp().call(self, other);
}
Tensor minOther(const Tensor& self, const Tensor& other) {
  return minimumOp().call(self, other);
}
// clamp_min.Tensor / clamp_max.Tensor have maximum's / minimum's values,
// promotion and NaN propagation (a NaN bound gives NaN, as torch 1.13's).
// CompositeExplicitAutograd: their Autograd kernels (autograd/nn_autograd.cc)
// give a tie's gradient to self, as torch's, where maximum splits it.
Tensor clampMinTensor(const Tensor& self, const Tensor& min) {
  return maximumOp().call(self, min);
}
Tensor clampMaxTensor(const Tensor& self, const Tensor& max) {
  return minimumOp().call(self, max);
}
Tensor clampTensor(const Tensor& self, const std::optional<Tensor>& min,
                   const std::optional<Tensor>& max) {
  const bool has_min = min.has_value() && min->defined();
  const bool has_max = max.has_value() && max->defined();
  TURNOUT_CHECK(has_min || has_max, ErrorKind::InvalidArgument,
                "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (!has_max) return maximumOp().call(self, *min);
  if (!has_min) return minimumOp().call(self, *max);
  // A min above max gives max, as torch's.
  return minimumOp().call(maximumOp().call(self, *min), *max);
}
// isnan: x != x; isinf: |x| == inf for floating types, all false else.
Tensor isnanKernel(const Tensor& self) {
  checkDefined("isnan", self);
  return ne(self, self);
}
Tensor isinfKernel(const Tensor& self) {
  checkDefined("isinf", self);
  if (!isFloatingType(self.scalar_type())) {
    return zeros_like(self, TensorOptions().dtype(ScalarType::Bool));
  }
  return eq(abs(self), Scalar(std::numeric_limits<double>::infinity()));
}
// copy: a new contiguous tensor of self's shape, dtype and device holding
// src's values (broadcast, converted), as torch 1.13's functional copy_.
Tensor copyKernel(const Tensor& self, const Tensor& src, bool non_blocking) {
  checkDefined("copy", self);
  checkDefined("copy", src);
  Tensor r = clone(self, MemoryFormat::Contiguous);
  copy_(r, src, non_blocking);
  return r;
}
// bitwise_xor.Scalar_Tensor: the Scalar as a wrapped number (promotion
// follows other's dtype).
Tensor xorScalarTensor(const Scalar& self, const Tensor& other) {
  checkDefined("bitwise_xor", other);
  return xorOp().call(wrappedScalarTensor(self), other);
}

Tensor xorTensor(const Tensor& self, const Tensor& other) {
  return xorOp().call(self, other);
}
Tensor xorScalar(const Tensor& self, const Scalar& other) {
  return xorOp().call(self, wrapScalar(self, other));
}
Tensor& ixorTensor(Tensor& self, const Tensor& other) {
  return xorInplaceOp().call(self, other);
}
Tensor& ixorScalar(Tensor& self, const Scalar& other) {
  return xorInplaceOp().call(self, wrapScalar(self, other));
}

}  // namespace
}  // namespace turnout

// ---- Registration ---------------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("maximum(Tensor self, Tensor other) -> Tensor");
  m.def("minimum(Tensor self, Tensor other) -> Tensor");
  m.def("fmod.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("fmod.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("fmod_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("remainder.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("remainder.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor");
  m.def("remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("remainder_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor");
  m.def("pow.Scalar(Scalar self, Tensor exponent) -> Tensor");
  m.def("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)");
  m.def("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)");
  m.def(
      "remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "remainder.Scalar_Tensor_out(Scalar self, Tensor other, *, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def("floor_divide(Tensor self, Tensor other) -> Tensor");
  m.def("floor_divide.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("bitwise_xor.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("bitwise_xor_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("bitwise_xor_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("__xor__.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("__xor__.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("__ixor__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("__ixor__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("logical_not(Tensor self) -> Tensor");
  m.def("max.other(Tensor self, Tensor other) -> Tensor");
  m.def("min.other(Tensor self, Tensor other) -> Tensor");
  m.def("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor");
  m.def("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor");
  m.def(
      "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> "
      "Tensor");
  m.def("isnan(Tensor self) -> Tensor");
  m.def("isinf(Tensor self) -> Tensor");
  m.def("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor");
  m.def("bitwise_xor.Scalar_Tensor(Scalar self, Tensor other) -> Tensor");
  m.def("logical_not_(Tensor(a!) self) -> Tensor(a!)");
  m.def("all(Tensor self) -> Tensor");
  m.def("all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor");
  m.def("any(Tensor self) -> Tensor");
  m.def("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor");
  m.def("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor");
  m.def(
      "prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor");
  m.def(
      "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) "
      "-> Tensor");
  m.def(
      "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor");
  m.def("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor");
  m.def("norm.Scalar(Tensor self, Scalar p=2) -> Tensor");
  m.def(
      "norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> "
      "Tensor");
  m.def(
      "norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool "
      "keepdim, *, ScalarType dtype) -> Tensor");
  m.def(
      "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool "
      "keepdim=False) -> Tensor");
  m.def("narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)");
  m.def("sum_to_size(Tensor self, int[] size) -> Tensor");
  m.def(
      "narrow.Tensor(Tensor(a) self, int dim, Tensor start, int length) -> "
      "Tensor(a)");
  m.def("expand_as(Tensor(a) self, Tensor other) -> Tensor(a)");
  m.def("type_as(Tensor self, Tensor other) -> Tensor");
  m.def("squeeze(Tensor(a) self) -> Tensor(a)");
  m.def("repeat(Tensor self, SymInt[] repeats) -> Tensor");
  m.def("flip(Tensor self, int[] dims) -> Tensor");
  m.def("dot(Tensor self, Tensor tensor) -> Tensor");
  m.def("mv(Tensor self, Tensor vec) -> Tensor");
  m.def(
      "new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "new_full(Tensor self, SymInt[] size, Scalar fill_value, *, "
      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor");
  m.def(
      "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? "
      "memory_format=None) -> Tensor(a!)");
  m.def(
      "resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? "
      "memory_format=None) -> Tensor(a!)");
  m.def("zero_(Tensor(a!) self) -> Tensor(a!)");
  m.def("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)");
  m.def(
      "eye(int n, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "eye.m(int n, int m, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
}

namespace turnout {
namespace {
template <bool kCpu>
void registerMiscOps(Library& m) {
  m.impl("maximum", TURNOUT_FN((binFunctional<kCpu, Bin::Maximum>)));
  m.impl("minimum", TURNOUT_FN((binFunctional<kCpu, Bin::Minimum>)));
  m.impl("fmod.Tensor", TURNOUT_FN((binFunctional<kCpu, Bin::Fmod>)));
  m.impl("fmod_.Tensor", TURNOUT_FN((binInplace<kCpu, Bin::Fmod>)));
  m.impl("remainder.Tensor", TURNOUT_FN((binFunctional<kCpu, Bin::Remainder>)));
  m.impl("remainder_.Tensor", TURNOUT_FN((binInplace<kCpu, Bin::Remainder>)));
  m.impl("pow.Tensor_Tensor", TURNOUT_FN((binFunctional<kCpu, Bin::Pow>)));
  m.impl("pow_.Tensor", TURNOUT_FN((binInplace<kCpu, Bin::Pow>)));
  m.impl("remainder.Tensor_out", TURNOUT_FN((binOut<kCpu, Bin::Remainder>)));
  m.impl("pow.Tensor_Tensor_out", TURNOUT_FN((binOut<kCpu, Bin::Pow>)));
  m.impl("pow.Tensor_Scalar_out", TURNOUT_FN(powTensorScalarOut<kCpu>));
  m.impl("floor_divide", TURNOUT_FN((binFunctional<kCpu, Bin::FloorDivide>)));
  m.impl("floor_divide_.Tensor",
         TURNOUT_FN((binInplace<kCpu, Bin::FloorDivide>)));
  m.impl("bitwise_xor.Tensor",
         TURNOUT_FN((binFunctional<kCpu, Bin::BitwiseXor>)));
  m.impl("bitwise_xor_.Tensor",
         TURNOUT_FN((binInplace<kCpu, Bin::BitwiseXor>)));
  m.impl("logical_not", TURNOUT_FN(logicalNot<kCpu>));
  m.impl("logical_not_", TURNOUT_FN(logicalNotInplace<kCpu>));
  m.impl("all", TURNOUT_FN((logicalAll<kCpu, Red::All>)));
  m.impl("all.dim", TURNOUT_FN((logicalDim<kCpu, Red::All>)));
  m.impl("any", TURNOUT_FN((logicalAll<kCpu, Red::Any>)));
  m.impl("any.dim", TURNOUT_FN((logicalDim<kCpu, Red::Any>)));
  m.impl("prod", TURNOUT_FN(prodAll<kCpu>));
  m.impl("prod.dim_int", TURNOUT_FN(prodDim<kCpu>));
  m.impl("gather", TURNOUT_FN(gatherKernel<kCpu>));
  m.impl("scatter_add", TURNOUT_FN(scatterAddKernel<kCpu>));
  m.impl("resize_", TURNOUT_FN(resizeInplace));
}
}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { turnout::registerMiscOps<true>(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { turnout::registerMiscOps<false>(m); }

// Gradients in kernels/autograd/misc_autograd.cc.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  // Their gradients: autograd/nn_autograd.cc (torch 1.13's tie rule).
  m.impl("clamp_min.Tensor", TURNOUT_FN(clampMinTensor));
  m.impl("clamp_max.Tensor", TURNOUT_FN(clampMaxTensor));
  m.impl("clamp.Tensor", TURNOUT_FN(clampTensor));
  m.impl("logsumexp", TURNOUT_FN(logsumexpKernel));
  m.impl("norm.Scalar", TURNOUT_FN(normScalar));
  m.impl("norm.ScalarOpt_dim", TURNOUT_FN(normScalarOptDim));
  m.impl("norm.ScalarOpt_dtype", TURNOUT_FN(normScalarOptDtype));
  m.impl("norm.ScalarOpt_dim_dtype", TURNOUT_FN(normScalarOptDimDtype));
  m.impl("remainder.Scalar", TURNOUT_FN(remainderScalar));
  m.impl("remainder_.Scalar", TURNOUT_FN(remainderScalarInplace));
  m.impl("remainder.Scalar_Tensor", TURNOUT_FN(remainderScalarTensor));
  m.impl("pow.Scalar", TURNOUT_FN(powScalar));
  m.impl("pow_.Scalar", TURNOUT_FN(powScalarInplace));
  m.impl("remainder.Scalar_out", TURNOUT_FN(remainderScalarOut));
  m.impl("remainder.Scalar_Tensor_out", TURNOUT_FN(remainderScalarTensorOut));
  m.impl("pow.Scalar_out", TURNOUT_FN(powScalarOut));
  // As torch 1.13's: a Python mode sees these operators, not their parts.
  m.impl("squeeze", TURNOUT_FN(squeezeAll));
  m.impl("repeat", TURNOUT_FN(repeatKernel));
  m.impl("flip", TURNOUT_FN(flipKernel));
  m.impl("dot", TURNOUT_FN(dotKernel));
  m.impl("mv", TURNOUT_FN(mvKernel));
  m.impl("new_zeros", TURNOUT_FN(newZeros));
  m.impl("new_ones", TURNOUT_FN(newOnes));
  m.impl("new_full", TURNOUT_FN(newFull));
  m.impl("zero_", TURNOUT_FN(zeroInplace));
  m.impl("resize_as_", TURNOUT_FN(resizeAsInplace));
  m.impl("fill_.Tensor", TURNOUT_FN(fillTensor));
  m.impl("eye", TURNOUT_FN(eyeN));
  m.impl("eye.m", TURNOUT_FN(eyeKernel));
  m.impl("fmod.Scalar", TURNOUT_FN(fmodScalar));
  m.impl("fmod_.Scalar", TURNOUT_FN(fmodScalarInplace));
  // As torch 1.13's: a mode sees isnan, isinf and bitwise_xor.Scalar_Tensor
  // whole, not the operators they are computed with.
  m.impl("isnan", TURNOUT_FN(isnanKernel));
  m.impl("isinf", TURNOUT_FN(isinfKernel));
  m.impl("bitwise_xor.Scalar_Tensor", TURNOUT_FN(xorScalarTensor));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  using namespace turnout;  // NOLINT: the kernels above
  m.impl("narrow", TURNOUT_FN(narrowKernel));
  m.impl("sum_to_size", TURNOUT_FN(sumToSizeKernel));
  m.impl("narrow.Tensor", TURNOUT_FN(narrowTensorKernel));
  m.impl("expand_as", TURNOUT_FN(expandAs));
  m.impl("type_as", TURNOUT_FN(typeAs));
  m.impl("floor_divide.Scalar", TURNOUT_FN(floorDivideScalar));
  m.impl("floor_divide_.Scalar", TURNOUT_FN(floorDivideScalarInplace));
  m.impl("bitwise_xor.Scalar", TURNOUT_FN(xorScalar));
  m.impl("max.other", TURNOUT_FN(maxOther));
  m.impl("min.other", TURNOUT_FN(minOther));
  m.impl("copy", TURNOUT_FN(copyKernel));
  m.impl("bitwise_xor_.Scalar", TURNOUT_FN(ixorScalar));
  m.impl("__xor__.Tensor", TURNOUT_FN(xorTensor));
  m.impl("__xor__.Scalar", TURNOUT_FN(xorScalar));
  m.impl("__ixor__.Tensor", TURNOUT_FN(ixorTensor));
  m.impl("__ixor__.Scalar", TURNOUT_FN(ixorScalar));
}

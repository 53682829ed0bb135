// CPU and Meta kernels of the elementwise operators (aten::add, sub, mul,
// div, neg, abs, exp, log, sqrt, tanh, sigmoid, relu, pow.Tensor_Scalar,
// clamp, where.self, eq/ne/lt/le/gt/ge), and their schemas; rsub's
// CompositeExplicitAutograd kernel (sub with the operands swapped).
//
// Each operator is one function template over kCpu: the Meta kernel
// (kCpu = false) runs the same checks and allocates the same output as the
// CPU kernel, and stops before computing. New outputs, and out= tensors
// that are resized, are laid out as torch 1.13 lays them out
// (kernels/output_layout.h: contiguous for contiguous inputs, else in the
// order of the inputs' strides).
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"
#include "kernels/mem_overlap.h"
#include "kernels/output_layout.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

// ---- Shared checks -------------------------------------------------------------

// A 0-dim CPU tensor goes with tensors on any device, as a number would.
bool isCpuScalar(const Tensor& t) { return t.dim() == 0 && t.is_cpu(); }

// The device of the result over `tensors`: the device of the ones that are
// not CPU scalars, which must agree (CPU when all are CPU scalars).
Device computeDevice(std::initializer_list<const Tensor*> tensors) {
  std::optional<Device> device;
  for (const Tensor* t : tensors) {
    if (isCpuScalar(*t)) continue;
    if (!device) {
      device = t->device();
    } else {
      TURNOUT_CHECK(*device == t->device(), ErrorKind::InvalidArgument,
                    "Expected all tensors to be on the same device, but found "
                    "at least two devices, ",
                    *device, " and ", t->device(), "!");
    }
  }
  return device ? *device : Device(DeviceType::CPU);
}

void checkDefined(std::string_view op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    TURNOUT_CHECK(t->defined(), ErrorKind::InvalidArgument, op,
                  ": expected a defined tensor, but got an undefined one");
  }
}

// Checks an output given by the caller (out= or in-place self) against what
// the operation produces. In-place: "output with shape ..."; out= gets the
// result's shape from resizeOutput afterwards, as torch's out= variants.
void checkOutput(std::string_view op, const Tensor& out, IntArrayRef sizes,
                 ScalarType result, Device device, bool inplace) {
  TURNOUT_CHECK(out.defined(), ErrorKind::InvalidArgument, op,
                ": expected a defined out tensor");
  TURNOUT_CHECK(canCast(result, out.scalar_type()),
                ErrorKind::InvalidArgument, "result type ", toString(result),
                " can't be cast to the desired output type ",
                toString(out.scalar_type()));
  if (inplace) {
    TURNOUT_CHECK(out.sizes() == IntArrayRef(sizes), ErrorKind::InvalidArgument,
                  "output with shape ", shapeString(out.sizes()),
                  " doesn't match the broadcast shape ", shapeString(sizes));
  }
  TURNOUT_CHECK(out.device() == device, ErrorKind::InvalidArgument,
                "Expected all tensors to be on the same device, but found at "
                "least two devices, ",
                device, " and ", out.device(), "!");
}

// A Scalar argument as a kernel's compute type M: floating values may round
// or overflow to infinity; integral targets must hold the value exactly.
template <class M>
M scalarTo(const Scalar& s) {
  if constexpr (std::is_floating_point_v<M>) {
    return static_cast<M>(s.toDouble());
  } else {
    return s.to<M>();
  }
}

// The one element of a CPU tensor of C++ type T.
template <class T>
T readElement(const Tensor& t) {
  return *static_cast<const T*>(t.data_ptr());
}

// ---- Wrapping integer arithmetic (no signed overflow, as PyTorch wraps) --------

// The type signed integer arithmetic is done in so that it wraps: unsigned
// of at least int's width (narrower types would promote to int).
template <class T, class Enable = void>
struct WrapTypeOf {
  using type = T;
};
template <class T>
struct WrapTypeOf<T, std::enable_if_t<std::is_integral_v<T> &&
                                      std::is_signed_v<T>>> {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                  std::make_unsigned_t<T>>;
};
template <class T>
using WrapType = typename WrapTypeOf<T>::type;

template <class T>
inline T wrapAdd(T a, T b) {
  using U = WrapType<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
inline T wrapSub(T a, T b) {
  using U = WrapType<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
inline T wrapMul(T a, T b) {
  using U = WrapType<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else {
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  }
}
template <class T>
inline T wrapNeg(T a) {
  if constexpr (std::is_floating_point_v<T>) {
    return -a;  // -0.0 for 0.0, which 0 - a would not give
  } else {
    using U = WrapType<T>;
    return static_cast<T>(U(0) - static_cast<U>(a));
  }
}

// ---- Binary operators ------------------------------------------------------------

enum class BinaryKind { Add, Sub, Mul, Div, Eq, Ne, Lt, Le, Gt, Ge };

constexpr bool isComparison(BinaryKind k) { return k >= BinaryKind::Eq; }

// The second operand of a binary operator: a tensor or a Scalar.
struct Other {
  const Tensor* tensor = nullptr;
  const Scalar* scalar = nullptr;

  ScalarType promotionType() const {
    if (tensor) return tensor->scalar_type();
    return scalar->isFloatingPoint() ? kDefaultFloatType : scalar->type();
  }
};

// c10's alpha_check.
void alphaCheck(ScalarType dtype, const Scalar& alpha) {
  TURNOUT_CHECK(!alpha.isBoolean() || dtype == ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Boolean alpha only supported for Boolean results.");
  TURNOUT_CHECK(isFloatingType(dtype) || alpha.isIntegral(true),
                ErrorKind::InvalidArgument,
                "For integral input tensors, argument alpha must not be a "
                "floating point number.");
}

// c10's sub_check.
void subCheck(ScalarType self, ScalarType other) {
  TURNOUT_CHECK(self != ScalarType::Bool || other != ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Subtraction, the `-` operator, with two bool tensors is not "
                "supported. Use the `^` or `logical_xor()` operator instead.");
  TURNOUT_CHECK(self != ScalarType::Bool && other != ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Subtraction, the `-` operator, with a bool tensor is not "
                "supported. If you are trying to invert a mask, use the `~` or "
                "`logical_not()` operator instead.");
}

struct BinaryPlan {
  ScalarType compute;  // the inputs are cast to it and the kernel runs in it
  ScalarType result;   // the dtype of a new output
  DimVector sizes;
  Device device = Device(DeviceType::CPU);
};

BinaryPlan planBinary(std::string_view op, BinaryKind kind, const Tensor& self,
                      Other other, const Scalar* alpha) {
  checkDefined(op, {&self});
  if (other.tensor) checkDefined(op, {other.tensor});
  const ScalarType common = other.tensor ? resultType(self, *other.tensor)
                                         : resultType(self, *other.scalar);
  if (kind == BinaryKind::Sub) {
    subCheck(self.scalar_type(), other.promotionType());
  }
  if (alpha) alphaCheck(common, *alpha);
  BinaryPlan plan;
  plan.compute = kind == BinaryKind::Div ? toFloatingType(common) : common;
  plan.result = isComparison(kind) ? ScalarType::Bool : plan.compute;
  // The stored sizes, as unaryOp.
  const IntArrayRef self_sizes = self.unsafeGetTensorImpl()->sizes_default();
  if (other.tensor) {
    plan.sizes = inferBroadcastSize(
        self_sizes, other.tensor->unsafeGetTensorImpl()->sizes_default());
    plan.device = computeDevice({&self, other.tensor});
  } else {
    plan.sizes = DimVector(self_sizes.begin(), self_sizes.end());
    plan.device = self.device();
  }
  return plan;
}

// The operator on compute values (M: the compute type's OpMathType).
template <BinaryKind kKind, class M>
struct BinaryFn {
  M alpha;
  auto operator()(M a, M b) const {
    if constexpr (kKind == BinaryKind::Add) {
      return wrapAdd<M>(a, wrapMul<M>(alpha, b));
    } else if constexpr (kKind == BinaryKind::Sub) {
      return wrapSub<M>(a, wrapMul<M>(alpha, b));
    } else if constexpr (kKind == BinaryKind::Mul) {
      return wrapMul<M>(a, b);
    } else if constexpr (kKind == BinaryKind::Div) {
      return a / b;  // only instantiated for floating M
    } else if constexpr (kKind == BinaryKind::Eq) {
      return a == b;
    } else if constexpr (kKind == BinaryKind::Ne) {
      return a != b;
    } else if constexpr (kKind == BinaryKind::Lt) {
      return a < b;
    } else if constexpr (kKind == BinaryKind::Le) {
      return a <= b;
    } else if constexpr (kKind == BinaryKind::Gt) {
      return a > b;
    } else {
      return a >= b;
    }
  }
};

// Computes the operator into `out` (sizes plan.sizes, any dtype the result
// casts to, CPU).
template <BinaryKind kKind>
void runBinary(std::string_view op, const BinaryPlan& plan, const Tensor& out,
               const Tensor& self, Other other, const Scalar* alpha) {
  if (out.numel() == 0) return;
  const ScalarType store_type =
      isComparison(kKind) ? ScalarType::Bool : plan.compute;
  const Tensor dst = out.scalar_type() == store_type
                         ? out
                         : emptyTensor(out.sizes(), store_type, out.device());
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using M = OpMathType<T>;
    using O = std::conditional_t<isComparison(kKind), bool, T>;
    const BinaryFn<kKind, M> fn{alpha ? scalarTo<M>(*alpha) : M(1)};
    const bool rhs_scalar =
        other.scalar != nullptr || isCpuScalar(*other.tensor);
    const bool lhs_scalar =
        !rhs_scalar && isCpuScalar(self) && other.tensor->dim() > 0;
    if (rhs_scalar) {
      const M b = other.scalar
                      ? scalarTo<M>(*other.scalar)
                      : M(readElement<T>(castTo(*other.tensor, plan.compute)));
      cpuKernel(dst, castTo(self, plan.compute),
                [fn, b](T x) -> O { return O(fn(M(x), b)); });
    } else if (lhs_scalar) {
      const M a = M(readElement<T>(castTo(self, plan.compute)));
      cpuKernel(dst, castTo(*other.tensor, plan.compute),
                [fn, a](T y) -> O { return O(fn(a, M(y))); });
    } else {
      cpuKernel(dst, castTo(self, plan.compute),
                castTo(*other.tensor, plan.compute),
                [fn](T x, T y) -> O { return O(fn(M(x), M(y))); });
    }
  };
  if constexpr (kKind == BinaryKind::Div) {
    visitFloatingDtype(plan.compute, op, body);
  } else {
    visitDtype(plan.compute, op, body);
  }
  if (!dst.is_same(out)) copyCast(out, dst);
}

// The fast path of a functional binary operator on the CPU: two contiguous
// CPU tensors of one shape and one dtype need no type promotion, no
// broadcasting and no casts, so the checks shrink to alpha's and the loop
// is one flat pass. False (nothing done) when it does not apply; Bool, Half,
// BFloat16 and integral division take the general path.
template <BinaryKind kKind>
bool binarySameShapeCpu(std::string_view op, const Tensor& self,
                        const Tensor& other, const Scalar* alpha,
                        Tensor* result) {
  // Read through the impls: an undefined Tensor's impl has dtype Undefined,
  // which the switch below refuses, so no defined() tests are needed, and a
  // contiguous impl is a Strided one.
  const TensorImpl& a = *self.unsafeGetTensorImpl();
  const TensorImpl& b = *other.unsafeGetTensorImpl();
  const ScalarType dtype = a.dtype();
  if (b.dtype() != dtype || a.device().type() != DeviceType::CPU ||
      a.device() != b.device() || !a.is_contiguous() || !b.is_contiguous() ||
      !detail::sameSizes(a.sizes(), b.sizes())) {
    return false;
  }
  switch (dtype) {
    case ScalarType::Float:
    case ScalarType::Double:
      break;
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      if (kKind == BinaryKind::Div) return false;
      break;
    default:
      return false;
  }
  if (alpha) alphaCheck(dtype, *alpha);
  const ScalarType out_type = isComparison(kKind) ? ScalarType::Bool : dtype;
  Tensor out = emptyTensor(a.sizes(), out_type, a.device());
  visitDtype(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || kKind != BinaryKind::Div) {
      using M = OpMathType<T>;
      using O = std::conditional_t<isComparison(kKind), bool, T>;
      const BinaryFn<kKind, M> fn{alpha ? scalarTo<M>(*alpha) : M(1)};
      auto f = [fn](T x, T y) -> O { return O(fn(M(x), M(y))); };
      const int64_t n = a.numel();
      if (n > kGrainSize) {
        cpuKernel(out, self, other, f);  // in parallel
        return;
      }
      // What cpuKernel's contiguous path does, without re-checking what the
      // tests above established (dtypes, contiguity, shapes).
      char* data[] = {static_cast<char*>(out.unsafeGetTensorImpl()->data()),
                      static_cast<char*>(a.data()),
                      static_cast<char*>(b.data())};
      detail::contiguousLoop<0, detail::LoopFunctionTraits<decltype(f)>>(
          data, n, f, std::make_index_sequence<2>());
    }
  });
  *result = std::move(out);
  return true;
}

template <bool kCpu, BinaryKind kKind>
Tensor binaryFunctional(std::string_view op, const Tensor& self, Other other,
                        const Scalar* alpha) {
  if constexpr (kCpu) {
    Tensor out;
    if (other.tensor &&
        binarySameShapeCpu<kKind>(op, self, *other.tensor, alpha, &out)) {
      return out;
    }
  }
  const BinaryPlan plan = planBinary(op, kKind, self, other, alpha);
  // A Scalar other is a 0-dim input (nullptr), as torch wraps it.
  Tensor out = emptyElementwiseOutput(plan.sizes, plan.result, plan.device,
                                      {&self, other.tensor});
  if constexpr (kCpu) runBinary<kKind>(op, plan, out, self, other, alpha);
  return out;
}

// An input of a kernel writing into `out`, checked for overlap as PyTorch
// does: partial overlap is an error; a layout whose overlap is not computed
// (TooHard) is read from a copy, so every result is right; otherwise
// `input` itself.
const Tensor& readableInput(std::string_view op, const Tensor& out,
                            const Tensor& input, Tensor* copy) {
  switch (memOverlap(out, input)) {
    case MemOverlap::None:
    case MemOverlap::Full:
      return input;
    case MemOverlap::Partial:
      checkNoPartialOverlap(out, input, op);  // throws
      break;
    case MemOverlap::TooHard:
      break;
  }
  *copy = emptyTensor(input.sizes(), input.scalar_type(), input.device());
  copyCast(*copy, input);
  return *copy;
}

template <bool kCpu, BinaryKind kKind>
Tensor& binaryInto(std::string_view op, Tensor& out, const Tensor& self,
                   Other other, const Scalar* alpha, bool inplace) {
  const BinaryPlan plan = planBinary(op, kKind, self, other, alpha);
  checkOutput(op, out, plan.sizes, plan.result, plan.device, inplace);
  if (!inplace) {
    // After every check, so that a refused call leaves out unchanged.
    reduce_internal::resizeElementwiseOutput(
        out, plan.sizes, {&self, other.tensor}, std::string(op).c_str());
  }
  checkNoInternalOverlap(out, op);
  Tensor self_copy;
  Tensor other_copy;
  const Tensor& a = readableInput(op, out, self, &self_copy);
  if (other.tensor) {
    other.tensor = &readableInput(op, out, *other.tensor, &other_copy);
  }
  if constexpr (kCpu) runBinary<kKind>(op, plan, out, a, other, alpha);
  return out;
}

// The kernels, one function per schema (the dispatcher wants exactly the
// schema's C++ signature).
#define TURNOUT_ARITH_KERNELS(name, Kind)                                      \
  template <bool kCpu>                                                         \
  Tensor name##Tensor(const Tensor& self, const Tensor& other,                 \
                      const Scalar& alpha) {                                   \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {&other, nullptr}, \
                                                    &alpha);                   \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor name##Scalar(const Tensor& self, const Scalar& other,                 \
                      const Scalar& alpha) {                                   \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {nullptr, &other}, \
                                                    &alpha);                   \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##InplaceTensor(Tensor& self, const Tensor& other,               \
                              const Scalar& alpha) {                           \
    return binaryInto<kCpu, BinaryKind::Kind>(#name "_", self, self,           \
                                              {&other, nullptr}, &alpha, true); \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##InplaceScalar(Tensor& self, const Scalar& other,               \
                              const Scalar& alpha) {                           \
    return binaryInto<kCpu, BinaryKind::Kind>(#name "_", self, self,           \
                                              {nullptr, &other}, &alpha, true); \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##Out(const Tensor& self, const Tensor& other,                   \
                    const Scalar& alpha, Tensor& out) {                        \
    return binaryInto<kCpu, BinaryKind::Kind>(#name ".out", out, self,         \
                                              {&other, nullptr}, &alpha, false); \
  }

// mul and div have no alpha.
#define TURNOUT_NO_ALPHA_KERNELS(name, Kind)                                   \
  template <bool kCpu>                                                         \
  Tensor name##Tensor(const Tensor& self, const Tensor& other) {               \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {&other, nullptr}, \
                                                    nullptr);                  \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor name##Scalar(const Tensor& self, const Scalar& other) {               \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {nullptr, &other}, \
                                                    nullptr);                  \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##InplaceTensor(Tensor& self, const Tensor& other) {             \
    return binaryInto<kCpu, BinaryKind::Kind>(#name "_", self, self,           \
                                              {&other, nullptr}, nullptr, true); \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##InplaceScalar(Tensor& self, const Scalar& other) {             \
    return binaryInto<kCpu, BinaryKind::Kind>(#name "_", self, self,           \
                                              {nullptr, &other}, nullptr, true); \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor& name##Out(const Tensor& self, const Tensor& other, Tensor& out) {    \
    return binaryInto<kCpu, BinaryKind::Kind>(#name ".out", out, self,         \
                                              {&other, nullptr}, nullptr, false); \
  }

#define TURNOUT_COMPARISON_KERNELS(name, Kind)                                 \
  template <bool kCpu>                                                         \
  Tensor name##Tensor(const Tensor& self, const Tensor& other) {               \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {&other, nullptr}, \
                                                    nullptr);                  \
  }                                                                            \
  template <bool kCpu>                                                         \
  Tensor name##Scalar(const Tensor& self, const Scalar& other) {               \
    return binaryFunctional<kCpu, BinaryKind::Kind>(#name, self, {nullptr, &other}, \
                                                    nullptr);                  \
  }

TURNOUT_ARITH_KERNELS(add, Add)
TURNOUT_ARITH_KERNELS(sub, Sub)
TURNOUT_NO_ALPHA_KERNELS(mul, Mul)
TURNOUT_NO_ALPHA_KERNELS(div, Div)
TURNOUT_COMPARISON_KERNELS(eq, Eq)
TURNOUT_COMPARISON_KERNELS(ne, Ne)
TURNOUT_COMPARISON_KERNELS(lt, Lt)
TURNOUT_COMPARISON_KERNELS(le, Le)
TURNOUT_COMPARISON_KERNELS(gt, Gt)
TURNOUT_COMPARISON_KERNELS(ge, Ge)
#undef TURNOUT_ARITH_KERNELS
#undef TURNOUT_NO_ALPHA_KERNELS
#undef TURNOUT_COMPARISON_KERNELS

// ---- Unary operators -------------------------------------------------------------

// out = f(self) elementwise, computed in `compute` (self is cast to it);
// make_fn(TypeTag<T>) gives f over OpMathType<T>. kFloating: `compute` is a
// floating dtype and only those are instantiated.
template <bool kCpu, bool kFloating, class MakeFn>
Tensor unaryOp(std::string_view op, const Tensor& self, ScalarType compute,
               MakeFn make_fn) {
  // The stored sizes (below the Python key a subclass that answers them is
  // not asked; kernels/loops.h's allContiguousLike says why it matters).
  Tensor out = emptyElementwiseOutput(
      self.unsafeGetTensorImpl()->sizes_default(), compute, self.device(),
      {&self});
  if constexpr (kCpu) {
    if (out.unsafeGetTensorImpl()->numel_default() == 0) return out;
    auto body = [&](auto tag) {
      using T = typename decltype(tag)::type;
      using M = OpMathType<T>;
      const auto fn = make_fn(tag);
      cpuKernel(out, castTo(self, compute),
                [fn](T x) -> T { return T(fn(M(x))); });
    };
    if constexpr (kFloating) {
      visitFloatingDtype(compute, op, body);
    } else {
      visitDtype(compute, op, body);
    }
  }
  return out;
}

template <bool kCpu>
Tensor negKernel(const Tensor& self) {
  checkDefined("neg", {&self});
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Negation, the `-` operator, on a bool tensor is not "
                "supported. If you are trying to invert a mask, use the `~` "
                "or `logical_not()` operator instead.");
  return unaryOp<kCpu, false>("neg", self, self.scalar_type(), [](auto tag) {
    using M = OpMathType<typename decltype(tag)::type>;
    return [](M x) { return wrapNeg<M>(x); };
  });
}

template <bool kCpu>
Tensor absKernel(const Tensor& self) {
  checkDefined("abs", {&self});
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                ErrorKind::NotImplemented,
                "\"abs_cpu\" not implemented for 'Bool'");
  return unaryOp<kCpu, false>("abs", self, self.scalar_type(), [](auto tag) {
    using M = OpMathType<typename decltype(tag)::type>;
    return [](M x) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        return std::abs(x);
      } else if constexpr (std::is_signed_v<M>) {
        return x < 0 ? wrapNeg<M>(x) : x;
      } else {
        return x;
      }
    };
  });
}

// Integral and Bool inputs compute in the default float dtype.
#define TURNOUT_FLOAT_UNARY_KERNEL(kernel, op, expr)                          \
  template <bool kCpu>                                                        \
  Tensor kernel(const Tensor& self) {                                         \
    checkDefined(op, {&self});                                                \
    return unaryOp<kCpu, true>(op, self, toFloatingType(self.scalar_type()),  \
                               [](auto tag) {                                 \
                                 using M =                                    \
                                     OpMathType<typename decltype(tag)::type>; \
                                 return [](M x) -> M { return (expr); };      \
                               });                                            \
  }
TURNOUT_FLOAT_UNARY_KERNEL(expKernel, "exp", std::exp(x))
TURNOUT_FLOAT_UNARY_KERNEL(logKernel, "log", std::log(x))
TURNOUT_FLOAT_UNARY_KERNEL(sqrtKernel, "sqrt", std::sqrt(x))
TURNOUT_FLOAT_UNARY_KERNEL(tanhKernel, "tanh", std::tanh(x))
TURNOUT_FLOAT_UNARY_KERNEL(sigmoidKernel, "sigmoid",
                           M(1) / (M(1) + std::exp(-x)))
#undef TURNOUT_FLOAT_UNARY_KERNEL

template <bool kCpu>
Tensor reluKernel(const Tensor& self) {
  checkDefined("relu", {&self});
  TURNOUT_CHECK(self.scalar_type() != ScalarType::Bool,
                ErrorKind::InvalidArgument,
                "Boolean inputs not supported for relu");
  return unaryOp<kCpu, false>("relu", self, self.scalar_type(), [](auto tag) {
    using M = OpMathType<typename decltype(tag)::type>;
    // NaN stays NaN (x < 0 is false for it).
    return [](M x) -> M {
      if constexpr (std::is_signed_v<M> || std::is_floating_point_v<M>) {
        return x < M(0) ? M(0) : x;
      } else {
        return x;
      }
    };
  });
}

// x ** e for an integral exponent e >= 0, wrapping as integer arithmetic does.
template <class M>
M integerPow(M base, int64_t e) {
  if constexpr (std::is_same_v<M, bool>) {
    return e == 0 ? true : base;
  } else {
    M result = 1;
    while (e > 0) {
      if (e & 1) result = wrapMul<M>(result, base);
      base = wrapMul<M>(base, base);
      e >>= 1;
    }
    return result;
  }
}

// torch 1.13's name for a dtype in its exponent overflow message.
const char* powTypeName(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "uint8_t";
    case ScalarType::Char: return "int8_t";
    case ScalarType::Short: return "short";
    case ScalarType::Int: return "int";
    case ScalarType::Half: return "at::Half";
    default: return toString(t);
  }
}

// pow.Tensor_Scalar's checks, as torch 1.13's: no Bool result, an exponent
// that fits the result dtype, no negative integer power of integers.
void checkPowExponent(ScalarType result, const Scalar& exponent) {
  TURNOUT_CHECK(result != ScalarType::Bool, ErrorKind::NotImplemented,
                "\"pow\" not implemented for 'Bool'");
  bool fits = true;
  if (result == ScalarType::Half) {
    const double e = exponent.toDouble();
    fits = !std::isfinite(e) || std::fabs(e) <= 65504.0;
  } else if (isIntegralType(result, /*include_bool=*/false) &&
             exponent.isIntegral(/*include_bool=*/false)) {
    visitDtype(result, "pow", [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        // As c10's overflow check: an unsigned type takes -max..max (the
        // negative values wrap).
        const int64_t e = exponent.toLong();
        const int64_t max = int64_t(std::numeric_limits<T>::max());
        const int64_t min =
            std::is_signed_v<T> ? int64_t(std::numeric_limits<T>::min()) : -max;
        fits = e >= min && e <= max;
      }
    });
  }
  TURNOUT_CHECK(fits, ErrorKind::InvalidArgument,
                "value cannot be converted to type ", powTypeName(result),
                " without overflow");
  if (isIntegralType(result, /*include_bool=*/true) &&
      exponent.isIntegral(/*include_bool=*/false)) {
    TURNOUT_CHECK(exponent.toLong() >= 0, ErrorKind::InvalidArgument,
                  "Integers to negative integer powers are not allowed.");
  }
}

template <bool kCpu>
Tensor powTensorScalar(const Tensor& self, const Scalar& exponent) {
  checkDefined("pow", {&self});
  const ScalarType result = resultType(self, exponent);
  checkPowExponent(result, exponent);
  return unaryOp<kCpu, false>("pow", self, result, [&](auto tag) {
    using M = OpMathType<typename decltype(tag)::type>;
    if constexpr (std::is_floating_point_v<M>) {
      const M e = scalarTo<M>(exponent);
      return [e](M x) -> M {
        // The exponents torch computes by their own formulas, as it does.
        if (e == M(2)) return x * x;
        if (e == M(3)) return x * x * x;
        if (e == M(0.5)) return std::sqrt(x);
        if (e == M(-0.5)) return M(1) / std::sqrt(x);
        if (e == M(-1)) return M(1) / x;
        if (e == M(-2)) return M(1) / (x * x);
        if (e == M(1)) return x;
        return std::pow(x, e);
      };
    } else {
      const int64_t e = exponent.toLong();
      return [e](M x) -> M { return integerPow<M>(x, e); };
    }
  });
}

// max/min that propagate NaN from either side.
template <class M>
M maxNan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return a < b ? b : a;
}
template <class M>
M minNan(M a, M b) {
  if constexpr (std::is_floating_point_v<M>) {
    if (std::isnan(a) || std::isnan(b)) return a + b;
  }
  return b < a ? b : a;
}

template <bool kCpu>
Tensor clampKernel(const Tensor& self, const std::optional<Scalar>& min,
                   const std::optional<Scalar>& max) {
  checkDefined("clamp", {&self});
  TURNOUT_CHECK(min || max, ErrorKind::InvalidArgument,
                "torch.clamp: At least one of 'min' or 'max' must not be None");
  ScalarType result = self.scalar_type();
  if (!isFloatingType(result)) {
    ResultTypeState state = updateResultTypeState(self, {});
    if (min) state = updateResultTypeState(*min, state);
    if (max) state = updateResultTypeState(*max, state);
    result = resultType(state);
  }
  TURNOUT_CHECK(result != ScalarType::Bool, ErrorKind::InvalidArgument,
                "clamp is not supported for boolean tensors");
  return unaryOp<kCpu, false>("clamp", self, result, [&](auto tag) {
    using M = OpMathType<typename decltype(tag)::type>;
    const bool has_min = min.has_value();
    const bool has_max = max.has_value();
    const M lo = has_min ? scalarTo<M>(*min) : M(0);
    const M hi = has_max ? scalarTo<M>(*max) : M(0);
    // min(max(x, lo), hi): with lo > hi every element becomes hi.
    return [=](M x) -> M {
      if (has_min) x = maxNan<M>(x, lo);
      if (has_max) x = minNan<M>(x, hi);
      return x;
    };
  });
}

// ---- where -----------------------------------------------------------------------

template <bool kCpu>
Tensor whereSelf(const Tensor& condition, const Tensor& self,
                 const Tensor& other) {
  checkDefined("where", {&condition, &self, &other});
  TURNOUT_CHECK(condition.scalar_type() == ScalarType::Bool ||
                    condition.scalar_type() == ScalarType::Byte,
                ErrorKind::Type,
                "where expected condition to be a boolean tensor, but got a "
                "tensor with dtype ",
                toString(condition.scalar_type()));
  const ScalarType result = resultType(self, other);
  const DimVector sizes = inferBroadcastSize(
      inferBroadcastSize(condition.sizes(), self.sizes()), other.sizes());
  const Device device = computeDevice({&condition, &self, &other});
  Tensor out =
      emptyElementwiseOutput(sizes, result, device, {&condition, &self, &other});
  if constexpr (kCpu) {
    if (out.numel() == 0) return out;
    const Tensor cond = castTo(condition, ScalarType::Bool);
    visitDtype(result, "where", [&](auto tag) {
      using T = typename decltype(tag)::type;
      cpuKernel(out, cond, castTo(self, result), castTo(other, result),
                [](bool c, T a, T b) -> T { return c ? a : b; });
    });
  }
  return out;
}

}  // namespace
}  // namespace turnout

// ---- Registration (torch's tags: kernels/aten_tags.h) ----------------------------
TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags).def("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
  m.def("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)");
  m.def("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
  m.def("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  m.def("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)");
  m.def("sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  m.def("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor");
  m.def("mul.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("mul.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("div.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("div.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)");
  m.def("div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("neg(Tensor self) -> Tensor");
  m.def("abs(Tensor self) -> Tensor");
  m.def("exp(Tensor self) -> Tensor");
  m.def("log(Tensor self) -> Tensor");
  m.def("sqrt(Tensor self) -> Tensor");
  m.def("tanh(Tensor self) -> Tensor");
  m.def("sigmoid(Tensor self) -> Tensor");
  m.def("relu(Tensor self) -> Tensor");
  m.def("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor");
  m.def("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor");
  m.def("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor");
  m.def("eq.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("eq.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("ne.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("ne.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("lt.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("lt.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("le.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("le.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("gt.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("gt.Scalar(Tensor self, Scalar other) -> Tensor");
  m.def("ge.Tensor(Tensor self, Tensor other) -> Tensor");
  m.def("ge.Scalar(Tensor self, Scalar other) -> Tensor");
}

// Both keys get the same list; kCpu picks the variant.
#define TURNOUT_ELEMENTWISE_IMPLS(m, kCpu)                                    \
  using namespace ::turnout;                                                  \
  m.impl("add.Tensor", TURNOUT_FN(addTensor<kCpu>));                          \
  m.impl("add.Scalar", TURNOUT_FN(addScalar<kCpu>));                          \
  m.impl("add_.Tensor", TURNOUT_FN(addInplaceTensor<kCpu>));                  \
  m.impl("add_.Scalar", TURNOUT_FN(addInplaceScalar<kCpu>));                  \
  m.impl("add.out", TURNOUT_FN(addOut<kCpu>));                                \
  m.impl("sub.Tensor", TURNOUT_FN(subTensor<kCpu>));                          \
  m.impl("sub.Scalar", TURNOUT_FN(subScalar<kCpu>));                          \
  m.impl("sub_.Tensor", TURNOUT_FN(subInplaceTensor<kCpu>));                  \
  m.impl("sub_.Scalar", TURNOUT_FN(subInplaceScalar<kCpu>));                  \
  m.impl("sub.out", TURNOUT_FN(subOut<kCpu>));                                \
  m.impl("mul.Tensor", TURNOUT_FN(mulTensor<kCpu>));                          \
  m.impl("mul.Scalar", TURNOUT_FN(mulScalar<kCpu>));                          \
  m.impl("mul_.Tensor", TURNOUT_FN(mulInplaceTensor<kCpu>));                  \
  m.impl("mul_.Scalar", TURNOUT_FN(mulInplaceScalar<kCpu>));                  \
  m.impl("mul.out", TURNOUT_FN(mulOut<kCpu>));                                \
  m.impl("div.Tensor", TURNOUT_FN(divTensor<kCpu>));                          \
  m.impl("div.Scalar", TURNOUT_FN(divScalar<kCpu>));                          \
  m.impl("div_.Tensor", TURNOUT_FN(divInplaceTensor<kCpu>));                  \
  m.impl("div_.Scalar", TURNOUT_FN(divInplaceScalar<kCpu>));                  \
  m.impl("div.out", TURNOUT_FN(divOut<kCpu>));                                \
  m.impl("neg", TURNOUT_FN(negKernel<kCpu>));                                 \
  m.impl("abs", TURNOUT_FN(absKernel<kCpu>));                                 \
  m.impl("exp", TURNOUT_FN(expKernel<kCpu>));                                 \
  m.impl("log", TURNOUT_FN(logKernel<kCpu>));                                 \
  m.impl("sqrt", TURNOUT_FN(sqrtKernel<kCpu>));                               \
  m.impl("tanh", TURNOUT_FN(tanhKernel<kCpu>));                               \
  m.impl("sigmoid", TURNOUT_FN(sigmoidKernel<kCpu>));                         \
  m.impl("relu", TURNOUT_FN(reluKernel<kCpu>));                               \
  m.impl("pow.Tensor_Scalar", TURNOUT_FN(powTensorScalar<kCpu>));             \
  m.impl("clamp", TURNOUT_FN(clampKernel<kCpu>));                             \
  m.impl("where.self", TURNOUT_FN(whereSelf<kCpu>));                          \
  m.impl("eq.Tensor", TURNOUT_FN(eqTensor<kCpu>));                            \
  m.impl("eq.Scalar", TURNOUT_FN(eqScalar<kCpu>));                            \
  m.impl("ne.Tensor", TURNOUT_FN(neTensor<kCpu>));                            \
  m.impl("ne.Scalar", TURNOUT_FN(neScalar<kCpu>));                            \
  m.impl("lt.Tensor", TURNOUT_FN(ltTensor<kCpu>));                            \
  m.impl("lt.Scalar", TURNOUT_FN(ltScalar<kCpu>));                            \
  m.impl("le.Tensor", TURNOUT_FN(leTensor<kCpu>));                            \
  m.impl("le.Scalar", TURNOUT_FN(leScalar<kCpu>));                            \
  m.impl("gt.Tensor", TURNOUT_FN(gtTensor<kCpu>));                            \
  m.impl("gt.Scalar", TURNOUT_FN(gtScalar<kCpu>));                            \
  m.impl("ge.Tensor", TURNOUT_FN(geTensor<kCpu>));                            \
  m.impl("ge.Scalar", TURNOUT_FN(geScalar<kCpu>))

// rsub (other - alpha * self) as sub with the operands swapped, on every
// backend (a Scalar other as a wrapped number, as torch 1.13's); its own
// Autograd kernel records RsubBackward0/1.
namespace turnout {
namespace {
Tensor rsubTensor(const Tensor& self, const Tensor& other,
                  const Scalar& alpha) {
  return sub(other, self, alpha);
}
Tensor rsubScalar(const Tensor& self, const Scalar& other,
                  const Scalar& alpha) {
  return sub(wrappedScalarTensor(other), self, alpha);
}
}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("rsub.Tensor", TURNOUT_FN(turnout::rsubTensor));
  m.impl("rsub.Scalar", TURNOUT_FN(turnout::rsubScalar));
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_ELEMENTWISE_IMPLS(m, true); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_ELEMENTWISE_IMPLS(m, false); }
#undef TURNOUT_ELEMENTWISE_IMPLS

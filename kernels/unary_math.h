// The C++ front end of the unary math operators (aten::sin, cos, tan, asin,
// acos, atan, sinh, cosh, expm1, log2, log10, log1p, rsqrt, reciprocal, erf,
// sign, floor, ceil, round, trunc, bitwise_not, acosh, asinh, atanh, erfc,
// lgamma, digamma, angle, polygamma), and of the in-place and out= overloads
// of all of them and of exp, log, sqrt, tanh, sigmoid, neg, abs and relu (whose
// functional forms are in kernels/elementwise.h). Each function calls
// through the dispatcher, so CPU, Meta and any registered key work alike.
//
//   Tensor s = turnout::sin(x);        // Long/Bool inputs give Float
//   turnout::sin_(x);                  // in place: x's dtype must hold Float
//   turnout::sin_out(out, x);          // out first, as ATen's C++ API
//   Tensor r = turnout::round(x, 2);   // aten::round.decimals
//
// PyTorch's rules: the transcendental operators (everything but neg, abs,
// sign, floor, ceil, round, trunc) compute integral and Bool inputs in the
// default float dtype; the others keep the input's dtype (floor, ceil,
// round, trunc of an integer tensor are copies; of Bool, errors). out=
// tensors are resized to the input's shape, and the result must be castable
// to their dtype.
//
// Thread safety: as the dispatcher; reentrant.
#ifndef TURNOUT_KERNELS_UNARY_MATH_H_
#define TURNOUT_KERNELS_UNARY_MATH_H_

#include <cstdint>

#include "dispatcher/core/tensor.h"

namespace turnout {

#define TURNOUT_UNARY_MATH_DECL(name)                   \
  const Tensor& name##_(const Tensor& self);            \
  const Tensor& name##_out(const Tensor& out, const Tensor& self);
#define TURNOUT_UNARY_MATH_DECL_NEW(name) \
  Tensor name(const Tensor& self);        \
  TURNOUT_UNARY_MATH_DECL(name)

// Functional forms in kernels/elementwise.h.
TURNOUT_UNARY_MATH_DECL(exp)
TURNOUT_UNARY_MATH_DECL(log)
TURNOUT_UNARY_MATH_DECL(sqrt)
TURNOUT_UNARY_MATH_DECL(tanh)
TURNOUT_UNARY_MATH_DECL(sigmoid)
TURNOUT_UNARY_MATH_DECL(neg)
TURNOUT_UNARY_MATH_DECL(abs)
TURNOUT_UNARY_MATH_DECL(relu)

TURNOUT_UNARY_MATH_DECL_NEW(sin)
TURNOUT_UNARY_MATH_DECL_NEW(cos)
TURNOUT_UNARY_MATH_DECL_NEW(tan)
TURNOUT_UNARY_MATH_DECL_NEW(asin)
TURNOUT_UNARY_MATH_DECL_NEW(acos)
TURNOUT_UNARY_MATH_DECL_NEW(atan)
TURNOUT_UNARY_MATH_DECL_NEW(sinh)
TURNOUT_UNARY_MATH_DECL_NEW(cosh)
TURNOUT_UNARY_MATH_DECL_NEW(expm1)
TURNOUT_UNARY_MATH_DECL_NEW(log2)
TURNOUT_UNARY_MATH_DECL_NEW(log10)
TURNOUT_UNARY_MATH_DECL_NEW(log1p)
TURNOUT_UNARY_MATH_DECL_NEW(rsqrt)
TURNOUT_UNARY_MATH_DECL_NEW(reciprocal)
TURNOUT_UNARY_MATH_DECL_NEW(erf)
TURNOUT_UNARY_MATH_DECL_NEW(sign)
TURNOUT_UNARY_MATH_DECL_NEW(floor)
TURNOUT_UNARY_MATH_DECL_NEW(ceil)
TURNOUT_UNARY_MATH_DECL_NEW(round)
TURNOUT_UNARY_MATH_DECL_NEW(trunc)
TURNOUT_UNARY_MATH_DECL_NEW(bitwise_not)
TURNOUT_UNARY_MATH_DECL_NEW(acosh)
TURNOUT_UNARY_MATH_DECL_NEW(asinh)
TURNOUT_UNARY_MATH_DECL_NEW(atanh)
TURNOUT_UNARY_MATH_DECL_NEW(erfc)
TURNOUT_UNARY_MATH_DECL_NEW(lgamma)
TURNOUT_UNARY_MATH_DECL_NEW(digamma)
#undef TURNOUT_UNARY_MATH_DECL
#undef TURNOUT_UNARY_MATH_DECL_NEW

/// aten::polygamma: psi^(n)(self), the n-th derivative of digamma (n = 0
/// is digamma, n = 1 trigamma); integral and Bool inputs compute in the
/// default float dtype. n < 0 is refused. On CPU, Half is refused as
/// torch 1.13 refuses it.
Tensor polygamma(int64_t n, const Tensor& self);
/// aten::polygamma_: self = psi^(n)(self) (a floating self only).
const Tensor& polygamma_(const Tensor& self, int64_t n);
/// aten::polygamma.out.
const Tensor& polygamma_out(const Tensor& out, int64_t n, const Tensor& self);

/// aten::angle: of a real input, 0 where x >= 0, pi where x < 0, NaN for
/// NaN; computed in floating point as the transcendental operators. No
/// in-place form (torch has none).
Tensor angle(const Tensor& self);
/// aten::angle.out.
const Tensor& angle_out(const Tensor& out, const Tensor& self);

/// aten::round.decimals: rounded to `decimals` decimal places (half to
/// even); negative `decimals` round to tens, hundreds, ... Floating only.
Tensor round(const Tensor& self, int64_t decimals);
/// aten::round_.decimals.
const Tensor& round_(const Tensor& self, int64_t decimals);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_UNARY_MATH_H_

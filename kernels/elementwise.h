// The C++ front end of the elementwise operators: free functions and
// operators in namespace turnout that call aten::add, aten::mul, ... through
// the dispatcher (so CPU, Meta and any other registered key work alike).
//
//   Tensor c = add(a, b, /*alpha=*/2);   // a + 2 * b, broadcast, promoted
//   Tensor d = (a - b) * 0.5;            // operators on Tensor and Scalar
//   add_(a, b);  a += b;                 // in place
//   Tensor mask = lt(a, 0);              // Bool; `==` on Tensor stays undefined
//   Tensor y = where(mask, zeros, a);
//
// Each function looks its typed handle up once (a function-local static) and
// then calls without locks or lookups. Type promotion, broadcasting and the
// errors are those of PyTorch (see kernels/type_promotion.h).
//
// Thread safety: every function may be called from any thread.
#ifndef TURNOUT_KERNELS_ELEMENTWISE_H_
#define TURNOUT_KERNELS_ELEMENTWISE_H_

#include <optional>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

// ---- Arithmetic (aten::add, sub, mul, div) ---------------------------------------
/// self + alpha * other. Integral alpha only for integral results.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
/// self - alpha * other. Not for Bool.
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
/// other - alpha * self (aten::rsub; `4 - x` in Python, as torch's).
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const Scalar& other);
/// True division: integral and Bool inputs give a Float result.
Tensor div(const Tensor& self, const Tensor& other);
Tensor div(const Tensor& self, const Scalar& other);

/// In place (aten::add_.Tensor, ...): writes into self, whose shape must be
/// the broadcast shape and whose dtype the result must be castable to.
/// Returns self.
const Tensor& add_(const Tensor& self, const Tensor& other,
                   const Scalar& alpha = 1);
const Tensor& add_(const Tensor& self, const Scalar& other,
                   const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& self, const Tensor& other,
                   const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& self, const Scalar& other,
                   const Scalar& alpha = 1);
const Tensor& mul_(const Tensor& self, const Tensor& other);
const Tensor& mul_(const Tensor& self, const Scalar& other);
const Tensor& div_(const Tensor& self, const Tensor& other);
const Tensor& div_(const Tensor& self, const Scalar& other);

/// Into `out` (aten::add.out, ...), ATen's argument order: out first. out
/// must already have the result's shape (it is not resized). Returns out.
const Tensor& add_out(const Tensor& out, const Tensor& self,
                      const Tensor& other, const Scalar& alpha = 1);
const Tensor& sub_out(const Tensor& out, const Tensor& self,
                      const Tensor& other, const Scalar& alpha = 1);
const Tensor& mul_out(const Tensor& out, const Tensor& self,
                      const Tensor& other);
const Tensor& div_out(const Tensor& out, const Tensor& self,
                      const Tensor& other);

// ---- Unary ------------------------------------------------------------------------
Tensor neg(const Tensor& self);
Tensor abs(const Tensor& self);
/// exp, log, sqrt, tanh, sigmoid: integral and Bool inputs give Float.
Tensor exp(const Tensor& self);
Tensor log(const Tensor& self);
Tensor sqrt(const Tensor& self);
Tensor tanh(const Tensor& self);
Tensor sigmoid(const Tensor& self);
Tensor relu(const Tensor& self);
/// The gradients of tanh and sigmoid from their output y:
/// grad_output * (1 - y^2) and grad_output * (1 - y) * y, broadcast and in
/// the two inputs' result type (aten::tanh_backward, aten::sigmoid_backward).
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);
/// self ** exponent (aten::pow.Tensor_Scalar).
Tensor pow(const Tensor& self, const Scalar& exponent);
/// min(max(self, min), max); at least one bound must be given.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max = std::nullopt);

// ---- Selection and comparison ------------------------------------------------------
/// condition ? self : other, broadcast over all three; condition is Bool.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
/// Bool tensors; the operands are compared in their promoted dtype.
Tensor eq(const Tensor& self, const Tensor& other);
Tensor eq(const Tensor& self, const Scalar& other);
Tensor ne(const Tensor& self, const Tensor& other);
Tensor ne(const Tensor& self, const Scalar& other);
Tensor lt(const Tensor& self, const Tensor& other);
Tensor lt(const Tensor& self, const Scalar& other);
Tensor le(const Tensor& self, const Tensor& other);
Tensor le(const Tensor& self, const Scalar& other);
Tensor gt(const Tensor& self, const Tensor& other);
Tensor gt(const Tensor& self, const Scalar& other);
Tensor ge(const Tensor& self, const Tensor& other);
Tensor ge(const Tensor& self, const Scalar& other);

// ---- Operators ----------------------------------------------------------------------
// `s - t` is add(neg(t), s); there is no `Scalar / Tensor`. Comparison
// operators are deliberately absent: use eq(), lt(), ...
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a);
const Tensor& operator+=(const Tensor& a, const Tensor& b);
const Tensor& operator+=(const Tensor& a, const Scalar& b);
const Tensor& operator-=(const Tensor& a, const Tensor& b);
const Tensor& operator-=(const Tensor& a, const Scalar& b);
const Tensor& operator*=(const Tensor& a, const Tensor& b);
const Tensor& operator*=(const Tensor& a, const Scalar& b);
const Tensor& operator/=(const Tensor& a, const Tensor& b);
const Tensor& operator/=(const Tensor& a, const Scalar& b);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_ELEMENTWISE_H_

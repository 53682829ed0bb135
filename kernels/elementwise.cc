#include "kernels/elementwise.h"

#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace {

// The typed handle of aten::name.overload, looked up on first use.
template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using BinaryAlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using BinaryScalarAlphaSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using InplaceAlphaSig = Tensor&(Tensor&, const Tensor&, const Scalar&);
using InplaceScalarAlphaSig = Tensor&(Tensor&, const Scalar&, const Scalar&);
using OutAlphaSig = Tensor&(const Tensor&, const Tensor&, const Scalar&,
                            Tensor&);
using BinarySig = Tensor(const Tensor&, const Tensor&);
using BinaryScalarSig = Tensor(const Tensor&, const Scalar&);
using InplaceSig = Tensor&(Tensor&, const Tensor&);
using InplaceScalarSig = Tensor&(Tensor&, const Scalar&);
using OutSig = Tensor&(const Tensor&, const Tensor&, Tensor&);
using UnarySig = Tensor(const Tensor&);

// Kernels of in-place and out= operators take the written tensor as Tensor&
// (the schema's Tensor(a!)); the front end, like ATen's, takes it as const
// Tensor&: a Tensor is a handle, and writing its elements does not change it.
Tensor& mut(const Tensor& t) { return const_cast<Tensor&>(t); }

}  // namespace

#define TURNOUT_CALL(name, overload, Sig, ...)                          \
  static const auto op = lookup<Sig>("aten::" name, overload);         \
  return op.call(__VA_ARGS__)

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TURNOUT_CALL("add", "Tensor", BinaryAlphaSig, self, other, alpha);
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  TURNOUT_CALL("add", "Scalar", BinaryScalarAlphaSig, self, other, alpha);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TURNOUT_CALL("sub", "Tensor", BinaryAlphaSig, self, other, alpha);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  TURNOUT_CALL("sub", "Scalar", BinaryScalarAlphaSig, self, other, alpha);
}
Tensor rsub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  TURNOUT_CALL("rsub", "Tensor", BinaryAlphaSig, self, other, alpha);
}
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  TURNOUT_CALL("rsub", "Scalar", BinaryScalarAlphaSig, self, other, alpha);
}
Tensor mul(const Tensor& self, const Tensor& other) {
  TURNOUT_CALL("mul", "Tensor", BinarySig, self, other);
}
Tensor mul(const Tensor& self, const Scalar& other) {
  TURNOUT_CALL("mul", "Scalar", BinaryScalarSig, self, other);
}
Tensor div(const Tensor& self, const Tensor& other) {
  TURNOUT_CALL("div", "Tensor", BinarySig, self, other);
}
Tensor div(const Tensor& self, const Scalar& other) {
  TURNOUT_CALL("div", "Scalar", BinaryScalarSig, self, other);
}

const Tensor& add_(const Tensor& self, const Tensor& other,
                   const Scalar& alpha) {
  TURNOUT_CALL("add_", "Tensor", InplaceAlphaSig, mut(self), other, alpha);
}
const Tensor& add_(const Tensor& self, const Scalar& other,
                   const Scalar& alpha) {
  TURNOUT_CALL("add_", "Scalar", InplaceScalarAlphaSig, mut(self), other,
               alpha);
}
const Tensor& sub_(const Tensor& self, const Tensor& other,
                   const Scalar& alpha) {
  TURNOUT_CALL("sub_", "Tensor", InplaceAlphaSig, mut(self), other, alpha);
}
const Tensor& sub_(const Tensor& self, const Scalar& other,
                   const Scalar& alpha) {
  TURNOUT_CALL("sub_", "Scalar", InplaceScalarAlphaSig, mut(self), other,
               alpha);
}
const Tensor& mul_(const Tensor& self, const Tensor& other) {
  TURNOUT_CALL("mul_", "Tensor", InplaceSig, mut(self), other);
}
const Tensor& mul_(const Tensor& self, const Scalar& other) {
  TURNOUT_CALL("mul_", "Scalar", InplaceScalarSig, mut(self), other);
}
const Tensor& div_(const Tensor& self, const Tensor& other) {
  TURNOUT_CALL("div_", "Tensor", InplaceSig, mut(self), other);
}
const Tensor& div_(const Tensor& self, const Scalar& other) {
  TURNOUT_CALL("div_", "Scalar", InplaceScalarSig, mut(self), other);
}

const Tensor& add_out(const Tensor& out, const Tensor& self,
                      const Tensor& other, const Scalar& alpha) {
  TURNOUT_CALL("add", "out", OutAlphaSig, self, other, alpha, mut(out));
}
const Tensor& sub_out(const Tensor& out, const Tensor& self,
                      const Tensor& other, const Scalar& alpha) {
  TURNOUT_CALL("sub", "out", OutAlphaSig, self, other, alpha, mut(out));
}
const Tensor& mul_out(const Tensor& out, const Tensor& self,
                      const Tensor& other) {
  TURNOUT_CALL("mul", "out", OutSig, self, other, mut(out));
}
const Tensor& div_out(const Tensor& out, const Tensor& self,
                      const Tensor& other) {
  TURNOUT_CALL("div", "out", OutSig, self, other, mut(out));
}

Tensor neg(const Tensor& self) { TURNOUT_CALL("neg", "", UnarySig, self); }
Tensor abs(const Tensor& self) { TURNOUT_CALL("abs", "", UnarySig, self); }
Tensor exp(const Tensor& self) { TURNOUT_CALL("exp", "", UnarySig, self); }
Tensor log(const Tensor& self) { TURNOUT_CALL("log", "", UnarySig, self); }
Tensor sqrt(const Tensor& self) { TURNOUT_CALL("sqrt", "", UnarySig, self); }
Tensor tanh(const Tensor& self) { TURNOUT_CALL("tanh", "", UnarySig, self); }
Tensor sigmoid(const Tensor& self) {
  TURNOUT_CALL("sigmoid", "", UnarySig, self);
}
Tensor relu(const Tensor& self) { TURNOUT_CALL("relu", "", UnarySig, self); }
Tensor pow(const Tensor& self, const Scalar& exponent) {
  TURNOUT_CALL("pow", "Tensor_Scalar", BinaryScalarSig, self, exponent);
}
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max) {
  TURNOUT_CALL("clamp", "",
               Tensor(const Tensor&, const std::optional<Scalar>&,
                      const std::optional<Scalar>&),
               self, min, max);
}

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  TURNOUT_CALL("where", "self",
               Tensor(const Tensor&, const Tensor&, const Tensor&), condition,
               self, other);
}

#define TURNOUT_COMPARISON(name)                                  \
  Tensor name(const Tensor& self, const Tensor& other) {          \
    TURNOUT_CALL(#name, "Tensor", BinarySig, self, other);        \
  }                                                               \
  Tensor name(const Tensor& self, const Scalar& other) {          \
    TURNOUT_CALL(#name, "Scalar", BinaryScalarSig, self, other);  \
  }
TURNOUT_COMPARISON(eq)
TURNOUT_COMPARISON(ne)
TURNOUT_COMPARISON(lt)
TURNOUT_COMPARISON(le)
TURNOUT_COMPARISON(gt)
TURNOUT_COMPARISON(ge)
#undef TURNOUT_COMPARISON
#undef TURNOUT_CALL

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
const Tensor& operator+=(const Tensor& a, const Tensor& b) { return add_(a, b); }
const Tensor& operator+=(const Tensor& a, const Scalar& b) { return add_(a, b); }
const Tensor& operator-=(const Tensor& a, const Tensor& b) { return sub_(a, b); }
const Tensor& operator-=(const Tensor& a, const Scalar& b) { return sub_(a, b); }
const Tensor& operator*=(const Tensor& a, const Tensor& b) { return mul_(a, b); }
const Tensor& operator*=(const Tensor& a, const Scalar& b) { return mul_(a, b); }
const Tensor& operator/=(const Tensor& a, const Tensor& b) { return div_(a, b); }
const Tensor& operator/=(const Tensor& a, const Scalar& b) { return div_(a, b); }

}  // namespace turnout

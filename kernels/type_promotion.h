// PyTorch's type promotion for operator arguments (c10's result_type):
// dimensioned tensors decide the result's dtype; a 0-dim tensor or a Scalar
// changes it only when it is of a higher category (bool < integral <
// floating). A wrapped number (TensorImpl::is_wrapped_number, the tensor
// the Python bindings make of `4` in `x * 4`) counts as a Scalar.
//
//   resultType(int_tensor, float_tensor);        // Float
//   resultType(int_tensor, Scalar(2.5));         // Float (the default dtype)
//   resultType(half_tensor, Scalar(2.5));        // Half: same category
//   resultType(byte_tensor, long_0dim_tensor);   // Byte
//   canCast(ScalarType::Float, ScalarType::Long);  // false
//
// Thread safety: pure functions.
#ifndef TURNOUT_KERNELS_TYPE_PROMOTION_H_
#define TURNOUT_KERNELS_TYPE_PROMOTION_H_

#include <initializer_list>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"

namespace turnout {

/// The dtype a Python float becomes in a tensor (torch.get_default_dtype()).
constexpr ScalarType kDefaultFloatType = ScalarType::Float;

/// The running state of a promotion: the promoted dtype of each kind of
/// participant seen so far (Undefined until one is seen).
struct ResultTypeState {
  ScalarType dim_result = ScalarType::Undefined;      // tensors with dim > 0
  ScalarType zero_result = ScalarType::Undefined;     // 0-dim tensors
  ScalarType wrapped_result = ScalarType::Undefined;  // Scalars
};

/// Adds a tensor to `state` (an undefined tensor is skipped); a wrapped
/// number is added as the Scalar it holds.
ResultTypeState updateResultTypeState(const Tensor& tensor,
                                      const ResultTypeState& state);
/// Adds a Scalar: a floating Scalar counts as kDefaultFloatType, an integral
/// one as Long, a boolean one as Bool.
ResultTypeState updateResultTypeState(const Scalar& scalar,
                                      const ResultTypeState& state);
/// The result dtype of everything added to `state`.
ScalarType resultType(const ResultTypeState& state);

/// Shorthands for the common cases. Two defined tensors of one dtype give
/// that dtype (as torch's TensorIterator: even two wrapped float numbers,
/// which the general rule would make kDefaultFloatType, stay Double).
ScalarType resultType(const Tensor& a, const Tensor& b);
ScalarType resultType(const Tensor& a, const Scalar& b);
ScalarType resultType(std::initializer_list<Tensor> tensors);

/// Whether a result of dtype `from` may be written to an output of dtype
/// `to`: not floating -> integral, not non-bool -> bool (c10's canCast).
bool canCast(ScalarType from, ScalarType to);

/// The dtype an operation that always computes in floating point (true
/// division, exp, sqrt, ...) uses: `t` when floating, else kDefaultFloatType.
constexpr ScalarType toFloatingType(ScalarType t) {
  return isFloatingType(t) ? t : kDefaultFloatType;
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_TYPE_PROMOTION_H_

#include "kernels/type_promotion.h"

namespace turnout {
namespace {

ScalarType promoteSkipUndefined(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return promoteTypes(a, b);
}

// `higher` comes from a more important kind of participant than `lower`
// (dimensioned over 0-dim over Scalar): `lower` matters only when it is of a
// higher category.
ScalarType combineCategories(ScalarType higher, ScalarType lower) {
  if (isFloatingType(higher)) return higher;
  if (higher == ScalarType::Bool || isFloatingType(lower)) {
    return promoteSkipUndefined(higher, lower);
  }
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}

}  // namespace

ResultTypeState updateResultTypeState(const Tensor& tensor,
                                      const ResultTypeState& state) {
  if (!tensor.defined()) return state;
  ResultTypeState out = state;
  const ScalarType t = tensor.scalar_type();
  if (tensor.dim() > 0) {
    out.dim_result = promoteSkipUndefined(state.dim_result, t);
  } else if (tensor.unsafeGetTensorImpl()->is_wrapped_number()) {
    // A Python number: counts as a Scalar does (a float one as the
    // default dtype, not as the Double it is stored in).
    out.wrapped_result = promoteSkipUndefined(
        state.wrapped_result, isFloatingType(t) ? kDefaultFloatType : t);
  } else {
    out.zero_result = promoteSkipUndefined(state.zero_result, t);
  }
  return out;
}

ResultTypeState updateResultTypeState(const Scalar& scalar,
                                      const ResultTypeState& state) {
  ResultTypeState out = state;
  const ScalarType t =
      scalar.isFloatingPoint() ? kDefaultFloatType : scalar.type();
  out.wrapped_result = promoteSkipUndefined(state.wrapped_result, t);
  return out;
}

ScalarType resultType(const ResultTypeState& state) {
  return combineCategories(
      state.dim_result,
      combineCategories(state.zero_result, state.wrapped_result));
}

ScalarType resultType(const Tensor& a, const Tensor& b) {
  // Operands of one dtype compute in it, with no promotion (torch 1.13's
  // TensorIterator): two wrapped floats stay Double. Also the cheap path.
  if (a.defined() && b.defined() && a.scalar_type() == b.scalar_type()) {
    return a.scalar_type();
  }
  return resultType(updateResultTypeState(b, updateResultTypeState(a, {})));
}

ScalarType resultType(const Tensor& a, const Scalar& b) {
  return resultType(updateResultTypeState(b, updateResultTypeState(a, {})));
}

ScalarType resultType(std::initializer_list<Tensor> tensors) {
  ResultTypeState state;
  for (const Tensor& t : tensors) state = updateResultTypeState(t, state);
  return resultType(state);
}

bool canCast(ScalarType from, ScalarType to) {
  if (isFloatingType(from) && isIntegralType(to, /*include_bool=*/false)) {
    return false;
  }
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace turnout

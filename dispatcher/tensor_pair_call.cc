#include "dispatcher/tensor_pair_call.h"

#include "dispatcher/core/error.h"
#include "dispatcher/schema/function_schema.h"

namespace turnout {
namespace {

bool plainTensor(const Argument& a) {
  return a.type()->kind() == SchemaType::Kind::Tensor &&
         !a.alias_info().has_value();
}

}  // namespace

std::optional<TensorPairCall> TensorPairCall::make(const OperatorHandle& op) {
  const FunctionSchema& s = op.schema();
  const auto& args = s.arguments();
  const auto& rets = s.returns();
  if (s.is_vararg() || s.name().rfind("aten::", 0) != 0 || rets.size() != 1 ||
      !plainTensor(rets[0]) || args.size() < 2 || args.size() > 3 ||
      !plainTensor(args[0]) || !plainTensor(args[1]) ||
      args[0].kwarg_only() || args[1].kwarg_only() ||
      (args.size() == 3 &&
       args[2].type()->kind() != SchemaType::Kind::Scalar)) {
    return std::nullopt;
  }
  TensorPairCall call;
  try {
    if (args.size() == 2) {
      call.tensor_tensor_ = op.typed<TensorTensorFn>();
    } else {
      call.tensor_tensor_scalar_ = op.typed<TensorTensorScalarFn>();
    }
  } catch (const Error&) {
    return std::nullopt;  // kernels of another C++ signature
  }
  return call;
}

}  // namespace turnout

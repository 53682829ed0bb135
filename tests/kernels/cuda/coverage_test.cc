// Runs without a GPU: which aten operators reach a CUDA kernel. Every
// operator kernels/cuda/pointwise.cc and reduce.cc register must exist and
// have a CUDA kernel (an overload name misspelled in m.impl would otherwise
// leave a dangling impl and the operator without one), and the composite
// operators that run on CUDA through them must compute a CUDA entry.
#include <gtest/gtest.h>

#include <string>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/dispatcher.h"
#include "kernels/ops.h"

namespace turnout {
namespace {

// "aten::sin_" -> the handle of aten::sin_ (overload "").
OperatorHandle handleOf(const std::string& qualified) {
  const size_t dot = qualified.find('.');
  const std::string name = qualified.substr(0, dot);
  const std::string overload =
      dot == std::string::npos ? "" : qualified.substr(dot + 1);
  return Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

// Registered at the CUDA key by pointwise.cc and reduce.cc.
const char* const kCudaKernels[] = {
    "aten::sin", "aten::sin_", "aten::sin.out", "aten::cos_", "aten::tan.out",
    "aten::asin", "aten::acos", "aten::atan", "aten::sinh", "aten::cosh",
    "aten::expm1", "aten::log2", "aten::log10", "aten::log1p", "aten::rsqrt",
    "aten::reciprocal", "aten::erf", "aten::erf_", "aten::erf.out",
    "aten::sign", "aten::floor", "aten::ceil", "aten::round", "aten::trunc",
    "aten::bitwise_not", "aten::bitwise_not_", "aten::bitwise_not.out",
    "aten::round.decimals", "aten::round_.decimals",
    "aten::round.decimals_out", "aten::exp_", "aten::exp.out", "aten::log_",
    "aten::sqrt.out", "aten::tanh_", "aten::sigmoid.out", "aten::neg_",
    "aten::abs.out", "aten::relu_", "aten::relu.out", "aten::maximum",
    "aten::minimum", "aten::fmod.Tensor", "aten::fmod_.Tensor",
    "aten::tanh_backward", "aten::sigmoid_backward",
    "aten::remainder.Tensor", "aten::remainder_.Tensor",
    "aten::pow.Tensor_Tensor", "aten::pow_.Tensor",
    "aten::floor_divide", "aten::floor_divide_.Tensor",
    "aten::bitwise_xor.Tensor", "aten::bitwise_xor_.Tensor",
    "aten::logical_not", "aten::logical_not_", "aten::masked_fill_.Scalar",
    "aten::masked_fill_.Tensor", "aten::where.self_out", "aten::all",
    "aten::all.dim", "aten::any", "aten::any.dim", "aten::prod",
    "aten::prod.dim_int", "aten::argmin", "aten::argmin.out", "aten::max",
    "aten::min", "aten::max.dim", "aten::min.dim", "aten::max.dim_max",
    "aten::min.dim_min", "aten::addcmul", "aten::addcmul_",
    "aten::addcmul.out", "aten::addcdiv", "aten::addcdiv_",
    "aten::addcdiv.out", "aten::lerp.Scalar", "aten::lerp.Tensor",
    "aten::lerp_.Scalar", "aten::lerp_.Tensor", "aten::lerp.Scalar_out",
    "aten::lerp.Tensor_out",
    "aten::acosh", "aten::acosh_", "aten::acosh.out",
    "aten::asinh", "aten::asinh_", "aten::asinh.out", "aten::atanh",
    "aten::atanh_", "aten::atanh.out", "aten::erfc", "aten::erfc_",
    "aten::erfc.out", "aten::lgamma", "aten::lgamma_", "aten::lgamma.out",
    "aten::digamma", "aten::digamma_", "aten::digamma.out", "aten::angle",
    "aten::angle.out", "aten::polygamma", "aten::polygamma_",
    "aten::polygamma.out",
};

// Composite operators whose kernels call only operators with CUDA kernels.
const char* const kCompositeOnCuda[] = {
    "aten::gelu",          "aten::gelu_",           "aten::gelu.out",
    "aten::gelu_backward", "aten::silu",            "aten::silu_",
    "aten::silu_backward", "aten::elu",             "aten::elu_backward",
    "aten::leaky_relu",    "aten::leaky_relu_backward",
    "aten::hardtanh",      "aten::hardtanh_backward",
    "aten::softplus",      "aten::softplus_backward",
    "aten::threshold_backward",
    "aten::clamp_",        "aten::masked_fill.Scalar",
    "aten::fmod.Scalar",   "aten::floor_divide.Scalar",
    "aten::remainder.Scalar", "aten::remainder_.Scalar",
    "aten::remainder.Scalar_Tensor", "aten::pow.Scalar", "aten::pow_.Scalar",
    "aten::bitwise_xor.Scalar", "aten::logsumexp",
    "aten::norm.Scalar",   "aten::norm.ScalarOpt_dim",
    "aten::var.correction", "aten::std.correction",
    // kernels/aliases.cc: each alias reaches its target's CUDA kernel.
    "aten::arccos",        "aten::arccos_",         "aten::fix.out",
    "aten::clip",          "aten::special_polygamma", "aten::special_psi",
    "aten::multiply.Tensor", "aten::divide_.Scalar", "aten::resize_as_",
};

TEST(CudaCoverage, RegisteredOperatorsHaveCudaKernels) {
  for (const char* name : kCudaKernels) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(handleOf(name).hasKernelForDispatchKey(DispatchKey::CUDA));
    EXPECT_TRUE(handleOf(name).hasKernelForDispatchKey(DispatchKey::CPU));
  }
}

TEST(CudaCoverage, CompositeOperatorsComputeACudaEntry) {
  for (const char* name : kCompositeOnCuda) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(
        handleOf(name).hasComputedKernelForDispatchKey(DispatchKey::CUDA));
  }
}

TEST(CudaCoverage, NoDanglingImpls) {
  for (const OperatorHandle& op : Dispatcher::singleton().findDanglingImpls()) {
    ADD_FAILURE() << "an impl without a schema:\n" << op.dumpState();
  }
}

}  // namespace
}  // namespace turnout

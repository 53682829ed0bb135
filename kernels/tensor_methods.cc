// The operator methods of turnout::Tensor (declared in dispatcher/core/tensor.h):
// each forwards to the free function of the C++ front end (kernels/ops.h),
// or, for the autograd ones, to kernels/autograd. They live here, not in
// dispatcher/, because dispatcher/ knows no concrete operator.
#include <memory>
#include <optional>

#include "dispatcher/core/tensor.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/engine.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "kernels/scalar_ops.h"
#include "kernels/shape.h"

namespace turnout {

// ---- Arithmetic -------------------------------------------------------------

Tensor Tensor::add(const Tensor& other, const Scalar& alpha) const {
  return turnout::add(*this, other, alpha);
}
Tensor Tensor::add(const Scalar& other, const Scalar& alpha) const {
  return turnout::add(*this, other, alpha);
}
Tensor Tensor::sub(const Tensor& other, const Scalar& alpha) const {
  return turnout::sub(*this, other, alpha);
}
Tensor Tensor::sub(const Scalar& other, const Scalar& alpha) const {
  return turnout::sub(*this, other, alpha);
}
Tensor Tensor::mul(const Tensor& other) const {
  return turnout::mul(*this, other);
}
Tensor Tensor::mul(const Scalar& other) const {
  return turnout::mul(*this, other);
}
Tensor Tensor::div(const Tensor& other) const {
  return turnout::div(*this, other);
}
Tensor Tensor::div(const Scalar& other) const {
  return turnout::div(*this, other);
}

const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const {
  return turnout::add_(*this, other, alpha);
}
const Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) const {
  return turnout::add_(*this, other, alpha);
}
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const {
  return turnout::sub_(*this, other, alpha);
}
const Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) const {
  return turnout::sub_(*this, other, alpha);
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  return turnout::mul_(*this, other);
}
const Tensor& Tensor::mul_(const Scalar& other) const {
  return turnout::mul_(*this, other);
}
const Tensor& Tensor::div_(const Tensor& other) const {
  return turnout::div_(*this, other);
}
const Tensor& Tensor::div_(const Scalar& other) const {
  return turnout::div_(*this, other);
}

// ---- Unary ------------------------------------------------------------------

Tensor Tensor::neg() const { return turnout::neg(*this); }
Tensor Tensor::abs() const { return turnout::abs(*this); }
Tensor Tensor::exp() const { return turnout::exp(*this); }
Tensor Tensor::log() const { return turnout::log(*this); }
Tensor Tensor::sqrt() const { return turnout::sqrt(*this); }
Tensor Tensor::tanh() const { return turnout::tanh(*this); }
Tensor Tensor::sigmoid() const { return turnout::sigmoid(*this); }
Tensor Tensor::relu() const { return turnout::relu(*this); }
Tensor Tensor::pow(const Scalar& exponent) const {
  return turnout::pow(*this, exponent);
}
Tensor Tensor::clamp(const std::optional<Scalar>& min,
                     const std::optional<Scalar>& max) const {
  return turnout::clamp(*this, min, max);
}

// ---- Comparison -------------------------------------------------------------

Tensor Tensor::eq(const Tensor& other) const {
  return turnout::eq(*this, other);
}
Tensor Tensor::eq(const Scalar& other) const {
  return turnout::eq(*this, other);
}
Tensor Tensor::ne(const Tensor& other) const {
  return turnout::ne(*this, other);
}
Tensor Tensor::ne(const Scalar& other) const {
  return turnout::ne(*this, other);
}
Tensor Tensor::lt(const Tensor& other) const {
  return turnout::lt(*this, other);
}
Tensor Tensor::lt(const Scalar& other) const {
  return turnout::lt(*this, other);
}
Tensor Tensor::le(const Tensor& other) const {
  return turnout::le(*this, other);
}
Tensor Tensor::le(const Scalar& other) const {
  return turnout::le(*this, other);
}
Tensor Tensor::gt(const Tensor& other) const {
  return turnout::gt(*this, other);
}
Tensor Tensor::gt(const Scalar& other) const {
  return turnout::gt(*this, other);
}
Tensor Tensor::ge(const Tensor& other) const {
  return turnout::ge(*this, other);
}
Tensor Tensor::ge(const Scalar& other) const {
  return turnout::ge(*this, other);
}

// ---- Reductions and softmax -------------------------------------------------

Tensor Tensor::sum(std::optional<ScalarType> dtype) const {
  return turnout::sum(*this, dtype);
}
Tensor Tensor::sum(IntArrayRef dim, bool keepdim,
                   std::optional<ScalarType> dtype) const {
  return turnout::sum(*this, dim, keepdim, dtype);
}
Tensor Tensor::mean(std::optional<ScalarType> dtype) const {
  return turnout::mean(*this, dtype);
}
Tensor Tensor::mean(IntArrayRef dim, bool keepdim,
                    std::optional<ScalarType> dtype) const {
  return turnout::mean(*this, dim, keepdim, dtype);
}
Tensor Tensor::amax(IntArrayRef dim, bool keepdim) const {
  return turnout::amax(*this, dim, keepdim);
}
Tensor Tensor::amin(IntArrayRef dim, bool keepdim) const {
  return turnout::amin(*this, dim, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return turnout::argmax(*this, dim, keepdim);
}
Tensor Tensor::softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return turnout::softmax(*this, dim, dtype);
}
Tensor Tensor::log_softmax(int64_t dim, std::optional<ScalarType> dtype) const {
  return turnout::log_softmax(*this, dim, dtype);
}

// ---- Linear algebra ---------------------------------------------------------

Tensor Tensor::mm(const Tensor& mat2) const { return turnout::mm(*this, mat2); }
Tensor Tensor::bmm(const Tensor& mat2) const {
  return turnout::bmm(*this, mat2);
}
Tensor Tensor::matmul(const Tensor& other) const {
  return turnout::matmul(*this, other);
}

// ---- Shape and memory -------------------------------------------------------

Tensor Tensor::view(IntArrayRef size) const {
  return turnout::view(*this, size);
}
Tensor Tensor::reshape(IntArrayRef shape) const {
  return turnout::reshape(*this, shape);
}
Tensor Tensor::t() const { return turnout::t(*this); }
Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  return turnout::transpose(*this, dim0, dim1);
}
Tensor Tensor::permute(IntArrayRef dims) const {
  return turnout::permute(*this, dims);
}
Tensor Tensor::expand(IntArrayRef size, bool implicit) const {
  return turnout::expand(*this, size, implicit);
}
Tensor Tensor::squeeze(int64_t dim) const {
  return turnout::squeeze(*this, dim);
}
Tensor Tensor::unsqueeze(int64_t dim) const {
  return turnout::unsqueeze(*this, dim);
}
Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) const {
  return turnout::slice(*this, dim, start, end, step);
}
Tensor Tensor::select(int64_t dim, int64_t index) const {
  return turnout::select(*this, dim, index);
}
Tensor Tensor::contiguous(MemoryFormat memory_format) const {
  return turnout::contiguous(*this, memory_format);
}
Tensor Tensor::clone(std::optional<MemoryFormat> memory_format) const {
  return turnout::clone(*this, memory_format);
}
const Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) const {
  // The const overload returns a new handle to *this; drop it and return
  // *this itself, as the in-place methods do.
  turnout::copy_(*this, src, non_blocking);
  return *this;
}
const Tensor& Tensor::fill_(const Scalar& value) const {
  turnout::fill_(*this, value);
  return *this;
}
Tensor Tensor::to(ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  return turnout::to(*this, dtype, non_blocking, copy, memory_format);
}
Tensor Tensor::to(Device device, ScalarType dtype, bool non_blocking, bool copy,
                  std::optional<MemoryFormat> memory_format) const {
  return turnout::to(*this, device, dtype, non_blocking, copy, memory_format);
}
Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return turnout::to(*this, device, non_blocking, copy);
}
Tensor Tensor::detach() const { return turnout::detach(*this); }
Scalar Tensor::item() const { return turnout::item(*this); }

// ---- Autograd ---------------------------------------------------------------

bool Tensor::requires_grad() const { return autograd::requiresGrad(*this); }
const Tensor& Tensor::requires_grad_(bool flag) const {
  autograd::setRequiresGrad(*this, flag);
  return *this;
}
Tensor Tensor::grad() const { return autograd::grad(*this); }
bool Tensor::is_leaf() const { return autograd::isLeaf(*this); }
std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  return autograd::gradFn(*this);
}
void Tensor::backward(const Tensor& gradient) const {
  if (gradient.defined()) {
    autograd::backward({*this}, {gradient});
  } else {
    autograd::backward({*this});
  }
}

}  // namespace turnout

// aten::softmax.int, log_softmax.int (and their int_out variants): schemas,
// CPU and Meta kernels (softmax.int and log_softmax.int composite-implicit
// over _softmax and _log_softmax, as torch 1.13's), and their front end
// (declared in reduce.h).
//
// Each slice along `dim` is done in three passes (the maximum, the sum of
// exp(x - max), the output), so that large logits do not overflow: in
// double for every dtype, except contiguous float and double slices, which
// stay in their dtype with the sum in double (softmaxContiguousSlice).
// Slices are spread over parallel_for's threads when there is enough work.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/loops.h"
#include "kernels/reduce.h"
#include "kernels/reduce_utils.h"
#include "kernels/strided_walk.h"
#include "kernels/tensor_utils.h"
#include "kernels/vec_math.h"

namespace turnout {
namespace {

using reduce_internal::copyToOut;

// One contiguous slice of a float or double softmax, in its own dtype (as
// ATen's CPU kernel): one exp per element, written to the output while
// summing (in double), then scaled. The general path below converts every
// element to double and takes its exp twice; this one is 2.2-2.4x faster
// on the attention scores of a transformer block (bench/README.md).
template <bool kLog, class T>
void softmaxContiguousSlice(const T* x, T* y, int64_t n) {
  T max = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    nan |= std::isnan(x[i]);
    max = x[i] > max ? x[i] : max;
  }
  if (nan) max = std::numeric_limits<T>::quiet_NaN();
  double total = 0;
  if constexpr (std::is_same_v<T, float>) {
    // Four lanes at a time (SLEEF); log_softmax overwrites y below.
    total = vec_math::expShiftedSum(x, y, n, max);
  } else if constexpr (kLog) {
    for (int64_t i = 0; i < n; ++i) total += std::exp(x[i] - max);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      y[i] = std::exp(x[i] - max);
      total += y[i];
    }
  }
  if constexpr (kLog) {
    // (x - max) first: max + log(total) rounded to T would lose the small
    // log(total) next to large logits.
    const T log_total = static_cast<T>(std::log(total));
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - max) - log_total;
  } else {
    const T inv = static_cast<T>(1.0 / total);
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <bool kLog>
Tensor softmaxImpl(const char* op, const Tensor& self, int64_t dim,
                   std::optional<ScalarType> dtype) {
  const int64_t nd = self.dim();
  const int64_t d = maybeWrapDim(dim, nd);
  const ScalarType out_dtype = dtype.value_or(self.scalar_type());
  TURNOUT_CHECK(isFloatingType(out_dtype), ErrorKind::NotImplemented, op,
                ": not implemented for '", out_dtype,
                "'; pass a floating dtype (e.g. dtype=Float)");
  Tensor out = emptyTensor(self.sizes(), out_dtype, self.device());
  if (out.is_meta() || out.numel() == 0) return out;
  // PyTorch converts first: softmax(x, dtype=d) is softmax(x.to(d)).
  Tensor in = self.scalar_type() == out_dtype
                  ? self
                  : contiguousCastTo(self, out_dtype);
  visitFloatingDtype(out_dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DimVector sizes(in.sizes().begin(), in.sizes().end());
    DimVector in_strides(in.strides().begin(), in.strides().end());
    DimVector out_strides(out.strides().begin(), out.strides().end());
    int64_t n = 1, is = 1, os = 1;
    if (nd > 0) {
      n = sizes[d];
      is = in_strides[d];
      os = out_strides[d];
      sizes[d] = 1;
    }
    const T* ib = static_cast<const T*>(in.data_ptr());
    T* ob = static_cast<T*>(out.data_ptr());
    // Each call does one slice of n elements (three passes over them).
    parallelForEachOffset(
        sizes, in_strides, out_strides, 3 * n, [&](int64_t io, int64_t oo) {
          const T* x = ib + io;
          T* y = ob + oo;
          if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
            if (is == 1 && os == 1) {
              softmaxContiguousSlice<kLog>(x, y, n);
              return;
            }
          }
          double max = -std::numeric_limits<double>::infinity();
          bool nan = false;
          for (int64_t i = 0; i < n; ++i) {
            const double v = convertElement<double>(x[i * is]);
            if (std::isnan(v)) nan = true;
            if (v > max) max = v;
          }
          if (nan) max = std::numeric_limits<double>::quiet_NaN();
          double total = 0;
          for (int64_t i = 0; i < n; ++i) {
            total += std::exp(convertElement<double>(x[i * is]) - max);
          }
          if constexpr (kLog) {
            const double shift = max + std::log(total);
            for (int64_t i = 0; i < n; ++i) {
              y[i * os] =
                  convertElement<T>(convertElement<double>(x[i * is]) - shift);
            }
          } else {
            const double inv = 1.0 / total;
            for (int64_t i = 0; i < n; ++i) {
              y[i * os] = convertElement<T>(
                  std::exp(convertElement<double>(x[i * is]) - max) * inv);
            }
          }
        });
  });
  return out;
}

Tensor& softmax_out_kernel(const Tensor& self, int64_t dim,
                           std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut("softmax.int_out()",
                   softmaxImpl<false>("softmax()", self, dim, dtype), out);
}

Tensor& log_softmax_out_kernel(const Tensor& self, int64_t dim,
                               std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut("log_softmax.int_out()",
                   softmaxImpl<true>("log_softmax()", self, dim, dtype), out);
}

// ---- _softmax, _log_softmax (what softmax.int decomposes to in PyTorch) ----

template <bool kLog>
Tensor internalSoftmax(const char* op, const Tensor& self, int64_t dim,
                       bool half_to_float) {
  if (half_to_float) {
    TURNOUT_CHECK(self.scalar_type() == ScalarType::Half,
                  ErrorKind::InvalidArgument, op,
                  ": conversion is supported for Half type only, got ",
                  self.scalar_type());
  }
  return softmaxImpl<kLog>(op, self, dim,
                           half_to_float
                               ? std::optional<ScalarType>(ScalarType::Float)
                               : std::nullopt);
}

Tensor internal_softmax_kernel(const Tensor& self, int64_t dim,
                               bool half_to_float) {
  return internalSoftmax<false>("_softmax()", self, dim, half_to_float);
}

Tensor internal_log_softmax_kernel(const Tensor& self, int64_t dim,
                                   bool half_to_float) {
  return internalSoftmax<true>("_log_softmax()", self, dim, half_to_float);
}

// softmax.int, log_softmax.int: CompositeImplicitAutograd over _softmax
// (_log_softmax), as torch 1.13's, so that a Python mode sees the internal
// operator and the gradient is its node (SoftmaxBackward0): the conversion
// to `dtype` first (its own node, ToCopyBackward0), except Half to Float on
// CUDA, which the internal operator does itself (half_to_float).
template <bool kLog>
Tensor softmaxComposite(const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype) {
  using Sig = Tensor(const Tensor&, int64_t, bool);
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow(kLog ? "aten::_log_softmax" : "aten::_softmax", "")
          .typed<Sig>();
  using ToSig = Tensor(const Tensor&, ScalarType, bool, bool,
                       std::optional<MemoryFormat>);
  static const auto to =
      Dispatcher::singleton().findSchemaOrThrow("aten::to", "dtype").typed<ToSig>();
  const char* name = kLog ? "log_softmax()" : "softmax()";
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument, name,
                ": expected a defined tensor, but got an undefined one");
  const ScalarType out_dtype = dtype.value_or(self.scalar_type());
  TURNOUT_CHECK(isFloatingType(out_dtype), ErrorKind::NotImplemented, name,
                ": not implemented for '", out_dtype,
                "'; pass a floating dtype (e.g. dtype=Float)");
  if (self.device().is_cuda() && self.scalar_type() == ScalarType::Half &&
      out_dtype == ScalarType::Float) {
    return op.call(self, dim, true);
  }
  const Tensor converted =
      self.scalar_type() == out_dtype
          ? self
          : to.call(self, out_dtype, false, false, std::nullopt);
  return op.call(converted, dim, false);
}

// ---- Backward
// ----------------------------------------------------------------

// softmax:     grad_input = y * (g - sum(g * y))
// log_softmax: grad_input = g - exp(y) * sum(g)
// along `dim`, in double, the result in `input_dtype`.
template <bool kLog>
Tensor softmaxBackward(const char* op, const Tensor& grad_output,
                       const Tensor& output, int64_t dim,
                       ScalarType input_dtype) {
  reduce_internal::checkSameDevice(op, grad_output, output);
  TURNOUT_CHECK(grad_output.sizes() == output.sizes(),
                ErrorKind::InvalidArgument, op,
                ": grad_output and output must have the same shape, but got ",
                reduce_internal::sizesToString(grad_output.sizes()), " and ",
                reduce_internal::sizesToString(output.sizes()));
  TURNOUT_CHECK(isFloatingType(input_dtype), ErrorKind::NotImplemented, op,
                ": not implemented for '", input_dtype, "'");
  const int64_t nd = output.dim();
  const int64_t d = maybeWrapDim(dim, nd);
  Tensor grad_input = emptyTensor(output.sizes(), input_dtype, output.device());
  if (grad_input.is_meta() || grad_input.numel() == 0) return grad_input;
  // Everything contiguous and in double: one offset serves all three.
  const Tensor g = contiguousCastTo(grad_output, ScalarType::Double);
  const Tensor y = contiguousCastTo(output, ScalarType::Double);
  const double* gp = g.data_ptr<double>();
  const double* yp = y.data_ptr<double>();
  DimVector sizes(output.sizes().begin(), output.sizes().end());
  const DimVector strides = contiguousStrides(sizes);
  int64_t n = 1, stride = 1;
  if (nd > 0) {
    n = sizes[d];
    stride = strides[d];
    sizes[d] = 1;
  }
  visitFloatingDtype(input_dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = static_cast<T*>(grad_input.data_ptr());
    parallelForEachOffset(
        sizes, strides, strides, 2 * n, [&](int64_t off, int64_t) {
          double total = 0;
          for (int64_t i = 0; i < n; ++i) {
            const int64_t k = off + i * stride;
            total += kLog ? gp[k] : gp[k] * yp[k];
          }
          for (int64_t i = 0; i < n; ++i) {
            const int64_t k = off + i * stride;
            const double v = kLog ? gp[k] - std::exp(yp[k]) * total
                                  : yp[k] * (gp[k] - total);
            out[k] = convertElement<T>(v);
          }
        });
  });
  return grad_input;
}

Tensor softmax_backward_kernel(const Tensor& grad_output, const Tensor& output,
                               int64_t dim, ScalarType input_dtype) {
  return softmaxBackward<false>("_softmax_backward_data()", grad_output, output,
                                dim, input_dtype);
}

Tensor log_softmax_backward_kernel(const Tensor& grad_output,
                                   const Tensor& output, int64_t dim,
                                   ScalarType input_dtype) {
  return softmaxBackward<true>("_log_softmax_backward_data()", grad_output,
                               output, dim, input_dtype);
}

}  // namespace

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor");
  m.def(
      "softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> "
      "Tensor");
  m.def(
      "log_softmax.int_out(Tensor self, int dim, ScalarType? dtype=None, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor");
  m.def("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor");
  m.def(
      "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor");
  m.def(
      "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor");
}

// One function per operator serves both keys: shape and dtype checks come
// first, the arithmetic is skipped for Meta outputs.
#define TURNOUT_SOFTMAX_KERNELS(m)                                       \
  m.impl("softmax.int_out", TURNOUT_FN(softmax_out_kernel));             \
  m.impl("log_softmax.int_out", TURNOUT_FN(log_softmax_out_kernel));     \
  m.impl("_softmax", TURNOUT_FN(internal_softmax_kernel));               \
  m.impl("_log_softmax", TURNOUT_FN(internal_log_softmax_kernel));       \
  m.impl("_softmax_backward_data", TURNOUT_FN(softmax_backward_kernel)); \
  m.impl("_log_softmax_backward_data", TURNOUT_FN(log_softmax_backward_kernel))

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("softmax.int", TURNOUT_FN(softmaxComposite<false>));
  m.impl("log_softmax.int", TURNOUT_FN(softmaxComposite<true>));
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_SOFTMAX_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_SOFTMAX_KERNELS(m); }
#undef TURNOUT_SOFTMAX_KERNELS

// ---- Front end
// ---------------------------------------------------------------

Tensor softmax(const Tensor& self, int64_t dim,
               std::optional<ScalarType> dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::softmax", "int")
          .typed<Tensor(const Tensor&, int64_t, std::optional<ScalarType>)>();
  return op.call(self, dim, dtype);
}

Tensor& softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::softmax", "int_out")
                       .typed<Tensor&(const Tensor&, int64_t,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, dim, dtype, out);
}

Tensor log_softmax(const Tensor& self, int64_t dim,
                   std::optional<ScalarType> dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::log_softmax", "int")
          .typed<Tensor(const Tensor&, int64_t, std::optional<ScalarType>)>();
  return op.call(self, dim, dtype);
}

Tensor& log_softmax_out(Tensor& out, const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::log_softmax", "int_out")
                       .typed<Tensor&(const Tensor&, int64_t,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, dim, dtype, out);
}

Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::_softmax", "")
                       .typed<Tensor(const Tensor&, int64_t, bool)>();
  return op.call(self, dim, half_to_float);
}

Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::_log_softmax", "")
                       .typed<Tensor(const Tensor&, int64_t, bool)>();
  return op.call(self, dim, half_to_float);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output,
                              int64_t dim, ScalarType input_dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_softmax_backward_data", "")
          .typed<Tensor(const Tensor&, const Tensor&, int64_t, ScalarType)>();
  return op.call(grad_output, output, dim, input_dtype);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output,
                                  const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_log_softmax_backward_data", "")
          .typed<Tensor(const Tensor&, const Tensor&, int64_t, ScalarType)>();
  return op.call(grad_output, output, dim, input_dtype);
}

}  // namespace turnout

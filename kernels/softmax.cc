// aten::softmax.int, log_softmax.int (and their int_out variants): schemas,
// CPU and Meta kernels, and their front end (declared in reduce.h).
//
// Each slice along `dim` is done in three passes in double (the maximum,
// the sum of exp(x - max), the output), so that large logits neither
// overflow nor lose precision, whatever the storage dtype. Slices are
// spread over parallel_for's threads when there is enough work.
#include <cmath>
#include <limits>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/reduce.h"
#include "kernels/reduce_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::convertTo;
using reduce_internal::convertValue;
using reduce_internal::copyToOut;
using reduce_internal::dispatchFloatingDtype;

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
  Tensor in = self.scalar_type() == out_dtype ? self : convertTo(self, out_dtype);
  dispatchFloatingDtype(out_dtype, op, [&](auto tag) {
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
    reduce_internal::parallelForEachOffset(
        sizes, in_strides, out_strides, 3 * n, [&](int64_t io, int64_t oo) {
          const T* x = ib + io;
          T* y = ob + oo;
          double max = -std::numeric_limits<double>::infinity();
          bool nan = false;
          for (int64_t i = 0; i < n; ++i) {
            const double v = convertValue<double>(x[i * is]);
            if (std::isnan(v)) nan = true;
            if (v > max) max = v;
          }
          if (nan) max = std::numeric_limits<double>::quiet_NaN();
          double total = 0;
          for (int64_t i = 0; i < n; ++i) {
            total += std::exp(convertValue<double>(x[i * is]) - max);
          }
          if constexpr (kLog) {
            const double shift = max + std::log(total);
            for (int64_t i = 0; i < n; ++i) {
              y[i * os] = convertValue<T>(convertValue<double>(x[i * is]) - shift);
            }
          } else {
            const double inv = 1.0 / total;
            for (int64_t i = 0; i < n; ++i) {
              y[i * os] = convertValue<T>(
                  std::exp(convertValue<double>(x[i * is]) - max) * inv);
            }
          }
        });
  });
  return out;
}

Tensor softmax_kernel(const Tensor& self, int64_t dim,
                      std::optional<ScalarType> dtype) {
  return softmaxImpl<false>("softmax()", self, dim, dtype);
}

Tensor& softmax_out_kernel(const Tensor& self, int64_t dim,
                           std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut("softmax.int_out()",
                   softmaxImpl<false>("softmax()", self, dim, dtype), out);
}

Tensor log_softmax_kernel(const Tensor& self, int64_t dim,
                          std::optional<ScalarType> dtype) {
  return softmaxImpl<true>("log_softmax()", self, dim, dtype);
}

Tensor& log_softmax_out_kernel(const Tensor& self, int64_t dim,
                               std::optional<ScalarType> dtype, Tensor& out) {
  return copyToOut("log_softmax.int_out()",
                   softmaxImpl<true>("log_softmax()", self, dim, dtype), out);
}

}  // namespace

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
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
}

// One function per operator serves both keys: shape and dtype checks come
// first, the arithmetic is skipped for Meta outputs.
#define TURNOUT_SOFTMAX_KERNELS(m)                                   \
  m.impl("softmax.int", TURNOUT_FN(softmax_kernel));                 \
  m.impl("softmax.int_out", TURNOUT_FN(softmax_out_kernel));         \
  m.impl("log_softmax.int", TURNOUT_FN(log_softmax_kernel));         \
  m.impl("log_softmax.int_out", TURNOUT_FN(log_softmax_out_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_SOFTMAX_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_SOFTMAX_KERNELS(m); }
#undef TURNOUT_SOFTMAX_KERNELS

// ---- Front end ---------------------------------------------------------------

Tensor softmax(const Tensor& self, int64_t dim,
               std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::softmax", "int")
                       .typed<Tensor(const Tensor&, int64_t,
                                     std::optional<ScalarType>)>();
  return op.call(self, dim, dtype);
}

Tensor& softmax_out(const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype, Tensor& out) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::softmax", "int_out")
                       .typed<Tensor&(const Tensor&, int64_t,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, dim, dtype, out);
}

Tensor log_softmax(const Tensor& self, int64_t dim,
                   std::optional<ScalarType> dtype) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::log_softmax", "int")
                       .typed<Tensor(const Tensor&, int64_t,
                                     std::optional<ScalarType>)>();
  return op.call(self, dim, dtype);
}

Tensor& log_softmax_out(const Tensor& self, int64_t dim,
                        std::optional<ScalarType> dtype, Tensor& out) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::log_softmax", "int_out")
                       .typed<Tensor&(const Tensor&, int64_t,
                                      std::optional<ScalarType>, Tensor&)>();
  return op.call(self, dim, dtype, out);
}

}  // namespace turnout

// Factory operators of namespace aten, and their C++ front end:
// empty.memory_format, empty_strided, zeros, ones, full, arange (end, start,
// start_step), rand, randn, empty_like, zeros_like, ones_like.
//
//   Tensor a = zeros({2, 3});                          // Float on the CPU
//   Tensor b = full({2}, 7);                           // Long: from the value
//   Tensor c = arange(0, 1, 0.25);                     // [0, .25, .5, .75]
//   Tensor m = ones({4, 4}, TensorOptions().dtype(kHalf).device("meta"));
//   Tensor r = randn({8}, kDouble);                    // seed: manual_seed
//
// Dispatch, as in c10: the factories without a tensor argument have a
// BackendSelect kernel that computes the backend key from the `device`
// (and layout) argument and redispatches there, and CPU and Meta kernels;
// the *_like factories are CompositeExplicitAutograd (they call
// empty_strided with self's options merged with the given ones, then fill_).
// A device whose backend has no kernel fails in the dispatcher, naming the
// operator and the key.
#ifndef TURNOUT_KERNELS_FACTORY_H_
#define TURNOUT_KERNELS_FACTORY_H_

#include <cstddef>
#include <optional>
#include <string>

#include "dispatcher/core/device.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "kernels/generator.h"

namespace turnout {

/// The optional dtype, layout, device and pin_memory arguments of a factory
/// (c10's TensorOptions, reduced). Unset means the operator's default
/// (Float or inferred, Strided, CPU; for *_like, self's). Implicit from a
/// dtype or a device, so `zeros({2}, kLong)` and `zeros({2}, "meta")` work.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType dtype) : dtype_(dtype) {}         // NOLINT
  TensorOptions(Device device) : device_(device) {}          // NOLINT
  TensorOptions(DeviceType type) : device_(Device(type)) {}  // NOLINT
  /// A device string literal ("meta"); an array, so that a literal 0 is
  /// not taken for a device.
  template <size_t N>
  TensorOptions(const char (&device)[N]) : device_(Device(device)) {}  // NOLINT

  TensorOptions dtype(std::optional<ScalarType> d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    return o;
  }
  TensorOptions layout(std::optional<Layout> l) const {
    TensorOptions o = *this;
    o.layout_ = l;
    return o;
  }
  TensorOptions device(std::optional<Device> d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions pinned_memory(std::optional<bool> p) const {
    TensorOptions o = *this;
    o.pin_memory_ = p;
    return o;
  }

  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Layout> layout_opt() const { return layout_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<bool> pinned_memory_opt() const { return pin_memory_; }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Layout> layout_;
  std::optional<Device> device_;
  std::optional<bool> pin_memory_;
};

/// aten::empty.memory_format: uninitialized (no data on Meta).
Tensor empty(IntArrayRef size, TensorOptions options = {},
             std::optional<MemoryFormat> memory_format = std::nullopt);
/// aten::empty_strided.
Tensor empty_strided(IntArrayRef size, IntArrayRef stride,
                     TensorOptions options = {});
/// aten::zeros, aten::ones.
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
/// aten::full: without a dtype, Bool / Long / Float from the value's kind.
Tensor full(IntArrayRef size, const Scalar& fill_value,
            TensorOptions options = {});
/// aten::arange, arange.start, arange.start_step: [start, end) by step.
/// Without a dtype: Long when every bound is integral, else Float.
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end,
              TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              TensorOptions options = {});
/// aten::rand: uniform in [0, 1); aten::randn: standard normal. Floating
/// dtypes only; draws from defaultGenerator().
Tensor rand(IntArrayRef size, TensorOptions options = {});
Tensor randn(IntArrayRef size, TensorOptions options = {});
/// aten::empty_like, zeros_like, ones_like: self's sizes, and self's dtype,
/// layout and device unless given; strides as clone's (memory_format).
Tensor empty_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor zeros_like(const Tensor& self, TensorOptions options = {},
                  std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor ones_like(const Tensor& self, TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);
/// aten::full_like: `fill_value` in self's dtype unless given (not the
/// value's, as full's). Throws InvalidArgument when the value does not fit
/// the dtype (fill_'s check).
Tensor full_like(const Tensor& self, const Scalar& fill_value,
                 TensorOptions options = {},
                 std::optional<MemoryFormat> memory_format = std::nullopt);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_FACTORY_H_

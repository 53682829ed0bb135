#include "kernels/factory.h"

#include <cmath>

#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/stack.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/factory_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using Dt = std::optional<ScalarType>;
using Lo = std::optional<Layout>;
using Dv = std::optional<Device>;
using Pin = std::optional<bool>;
using Mf = std::optional<MemoryFormat>;

// ---- Typed handles, looked up once
// ---------------------------------------------

OperatorHandle find(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload);
}

const auto& emptyOp() {
  static const auto op = find("aten::empty", "memory_format")
                             .typed<Tensor(IntArrayRef, Dt, Lo, Dv, Pin, Mf)>();
  return op;
}
const auto& emptyStridedOp() {
  static const auto op =
      find("aten::empty_strided", "")
          .typed<Tensor(IntArrayRef, IntArrayRef, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& zerosOp() {
  static const auto op =
      find("aten::zeros", "").typed<Tensor(IntArrayRef, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& onesOp() {
  static const auto op =
      find("aten::ones", "").typed<Tensor(IntArrayRef, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& fullOp() {
  static const auto op =
      find("aten::full", "")
          .typed<Tensor(IntArrayRef, const Scalar&, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& arangeOp() {
  static const auto op =
      find("aten::arange", "").typed<Tensor(const Scalar&, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& arangeStartOp() {
  static const auto op =
      find("aten::arange", "start")
          .typed<Tensor(const Scalar&, const Scalar&, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& arangeStartStepOp() {
  static const auto op = find("aten::arange", "start_step")
                             .typed<Tensor(const Scalar&, const Scalar&,
                                           const Scalar&, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& randOp() {
  static const auto op =
      find("aten::rand", "").typed<Tensor(IntArrayRef, Dt, Lo, Dv, Pin)>();
  return op;
}
const auto& randnOp() {
  static const auto op =
      find("aten::randn", "").typed<Tensor(IntArrayRef, Dt, Lo, Dv, Pin)>();
  return op;
}
using LikeSig = Tensor(const Tensor&, Dt, Lo, Dv, Pin, Mf);
const auto& emptyLikeOp() {
  static const auto op = find("aten::empty_like", "").typed<LikeSig>();
  return op;
}
const auto& zerosLikeOp() {
  static const auto op = find("aten::zeros_like", "").typed<LikeSig>();
  return op;
}
const auto& onesLikeOp() {
  static const auto op = find("aten::ones_like", "").typed<LikeSig>();
  return op;
}

// ---- BackendSelect
// -----------------------------------------------------------------

// The keys to redispatch a factory call with (defaults: float, strided, CPU).
DispatchKeySet backendKeySet(Dt dtype, Lo layout, Dv device) {
  return backendSelectKeySet(dtype.value_or(kFloat),
                             layout.value_or(Layout::Strided),
                             device.value_or(Device(DeviceType::CPU)));
}

Tensor empty_bs(DispatchKeySet, IntArrayRef size, Dt dtype, Lo layout,
                Dv device, Pin pin, Mf mf) {
  return emptyOp().redispatch(backendKeySet(dtype, layout, device), size, dtype,
                              layout, device, pin, mf);
}
// A boxed kernel's argument, converted as an unboxed kernel's would be.
template <class T>
T arg(IValue& slot) {
  return detail::IValueToArg<T>::call(slot);
}

// empty.names (what torch 1.13's indexing makes its bool index tensors
// with): boxed, as a str[]? is no kernel argument type. BackendSelect picks
// the backend from dtype, layout and device (stack slots 2-4 of 7).
void empty_names_bs(const OperatorHandle& op, DispatchKeySet, Stack* stack) {
  Stack& s = *stack;
  const DispatchKeySet ks = backendKeySet(
      arg<Dt>(peek(s, 2, 7)), arg<Lo>(peek(s, 3, 7)),
      arg<Dv>(peek(s, 4, 7)));
  op.redispatchBoxed(ks, stack);
}

Tensor empty_strided_bs(DispatchKeySet, IntArrayRef size, IntArrayRef stride,
                        Dt dtype, Lo layout, Dv device, Pin pin) {
  return emptyStridedOp().redispatch(backendKeySet(dtype, layout, device), size,
                                     stride, dtype, layout, device, pin);
}
Tensor zeros_bs(DispatchKeySet, IntArrayRef size, Dt dtype, Lo layout,
                Dv device, Pin pin) {
  return zerosOp().redispatch(backendKeySet(dtype, layout, device), size, dtype,
                              layout, device, pin);
}
Tensor ones_bs(DispatchKeySet, IntArrayRef size, Dt dtype, Lo layout, Dv device,
               Pin pin) {
  return onesOp().redispatch(backendKeySet(dtype, layout, device), size, dtype,
                             layout, device, pin);
}
Tensor full_bs(DispatchKeySet, IntArrayRef size, const Scalar& value, Dt dtype,
               Lo layout, Dv device, Pin pin) {
  return fullOp().redispatch(backendKeySet(dtype, layout, device), size, value,
                             dtype, layout, device, pin);
}
Tensor arange_bs(DispatchKeySet, const Scalar& end, Dt dtype, Lo layout,
                 Dv device, Pin pin) {
  return arangeOp().redispatch(backendKeySet(dtype, layout, device), end, dtype,
                               layout, device, pin);
}
Tensor arange_start_bs(DispatchKeySet, const Scalar& start, const Scalar& end,
                       Dt dtype, Lo layout, Dv device, Pin pin) {
  return arangeStartOp().redispatch(backendKeySet(dtype, layout, device), start,
                                    end, dtype, layout, device, pin);
}
Tensor arange_start_step_bs(DispatchKeySet, const Scalar& start,
                            const Scalar& end, const Scalar& step, Dt dtype,
                            Lo layout, Dv device, Pin pin) {
  return arangeStartStepOp().redispatch(backendKeySet(dtype, layout, device),
                                        start, end, step, dtype, layout, device,
                                        pin);
}
Tensor rand_bs(DispatchKeySet, IntArrayRef size, Dt dtype, Lo layout, Dv device,
               Pin pin) {
  return randOp().redispatch(backendKeySet(dtype, layout, device), size, dtype,
                             layout, device, pin);
}
Tensor randn_bs(DispatchKeySet, IntArrayRef size, Dt dtype, Lo layout,
                Dv device, Pin pin) {
  return randnOp().redispatch(backendKeySet(dtype, layout, device), size, dtype,
                              layout, device, pin);
}

// ---- CPU and Meta kernels (one function each: the device argument says
// ---- where to allocate, and a meta result gets no data)
// ----------------------

void checkOptions(const char* op, Lo layout, Pin pin) {
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, op, "(): layout ", *layout,
                " is not supported; only strided tensors are");
  TURNOUT_CHECK(!pin.value_or(false), ErrorKind::NotImplemented, op,
                "(): pin_memory=True is not supported yet");
}

Tensor allocate(const char* op, IntArrayRef size, ScalarType dtype, Dv device,
                Lo layout, Pin pin) {
  checkOptions(op, layout, pin);
  return emptyStridedTensor(size, contiguousStrides(size), dtype,
                            device.value_or(Device(DeviceType::CPU)), op);
}

bool hasData(const Tensor& t) { return !t.is_meta() && t.numel() > 0; }

Tensor empty_kernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin,
                    Mf mf) {
  checkOptions("empty", layout, pin);
  DimVector strides = stridesForMemoryFormat(
      size, mf.value_or(MemoryFormat::Contiguous), "empty");
  return emptyStridedTensor(size, strides, dtype.value_or(kFloat),
                            device.value_or(Device(DeviceType::CPU)), "empty");
}

Tensor empty_strided_kernel(IntArrayRef size, IntArrayRef stride, Dt dtype,
                            Lo layout, Dv device, Pin pin) {
  checkOptions("empty_strided", layout, pin);
  return emptyStridedTensor(size, stride, dtype.value_or(kFloat),
                            device.value_or(Device(DeviceType::CPU)),
                            "empty_strided");
}

Tensor filled(const char* op, IntArrayRef size, const Scalar& value,
              ScalarType dtype, Lo layout, Dv device, Pin pin) {
  Tensor out = allocate(op, size, dtype, device, layout, pin);
  // Below autograd, as torch's: a new tensor starts at version 0.
  AutoDispatchBelowAutograd below;
  fill_(out, value);  // also checks that the value fits (on Meta too)
  return out;
}

Tensor zeros_kernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  return filled("zeros", size, 0, dtype.value_or(kFloat), layout, device, pin);
}

Tensor ones_kernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  return filled("ones", size, 1, dtype.value_or(kFloat), layout, device, pin);
}

Tensor full_kernel(IntArrayRef size, const Scalar& value, Dt dtype, Lo layout,
                   Dv device, Pin pin) {
  // PyTorch 1.13 infers the dtype from the fill value.
  const ScalarType inferred = value.isBoolean()         ? kBool
                              : value.isFloatingPoint() ? kFloat
                                                        : kLong;
  return filled("full", size, value, dtype.value_or(inferred), layout, device,
                pin);
}

Tensor arangeImpl(const Scalar& start, const Scalar& end, const Scalar& step,
                  Dt dtype, Lo layout, Dv device, Pin pin) {
  const bool integral = !start.isFloatingPoint() && !end.isFloatingPoint() &&
                        !step.isFloatingPoint();
  const ScalarType dt = dtype.value_or(integral ? kLong : kFloat);
  TURNOUT_CHECK(dt != kBool, ErrorKind::NotImplemented,
                "arange(): not implemented for 'Bool'");
  const double s = start.toDouble();
  const double e = end.toDouble();
  const double st = step.toDouble();
  TURNOUT_CHECK(st != 0, ErrorKind::InvalidArgument, "step must be nonzero");
  TURNOUT_CHECK(std::isfinite(s) && std::isfinite(e),
                ErrorKind::InvalidArgument, "unsupported range: ", start.str(),
                " -> ", end.str());
  TURNOUT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
                ErrorKind::InvalidArgument,
                "upper bound and larger bound inconsistent with step sign");
  int64_t size;
  if (integral) {
    const int64_t a = start.toLong();
    const int64_t b = end.toLong();
    const int64_t c = step.toLong();
    size = c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c;
  } else {
    size = static_cast<int64_t>(std::ceil((e - s) / st));
  }
  Tensor out = allocate("arange", {size}, dt, device, layout, pin);
  if (!hasData(out)) return out;
  visitDtype(dt, "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* data = static_cast<T*>(out.data_ptr());
    if (integral) {
      const int64_t a = start.toLong();
      const int64_t c = step.toLong();
      for (int64_t i = 0; i < size; ++i) data[i] = convertElement<T>(a + i * c);
    } else {
      for (int64_t i = 0; i < size; ++i)
        data[i] = convertElement<T>(s + i * st);
    }
  });
  return out;
}

Tensor arange_kernel(const Scalar& end, Dt dtype, Lo layout, Dv device,
                     Pin pin) {
  return arangeImpl(0, end, 1, dtype, layout, device, pin);
}
Tensor arange_start_kernel(const Scalar& start, const Scalar& end, Dt dtype,
                           Lo layout, Dv device, Pin pin) {
  return arangeImpl(start, end, 1, dtype, layout, device, pin);
}
Tensor arange_start_step_kernel(const Scalar& start, const Scalar& end,
                                const Scalar& step, Dt dtype, Lo layout,
                                Dv device, Pin pin) {
  return arangeImpl(start, end, step, dtype, layout, device, pin);
}

// Fills a new floating tensor with `draw(engine, bits)` for each element,
// `bits` being the dtype's precision.
template <class Draw>
Tensor randomTensor(const char* op, IntArrayRef size, Dt dtype, Lo layout,
                    Dv device, Pin pin, Draw&& draw) {
  const ScalarType dt = dtype.value_or(kFloat);
  // InvalidArgument: torch raises RuntimeError (its sampler has no kernel
  // for the dtype), also for rand.out / randn.out into such an out.
  TURNOUT_CHECK(isFloatingType(dt), ErrorKind::InvalidArgument, op,
                "(): expected a floating-point dtype, got ", dt);
  Tensor out = allocate(op, size, dt, device, layout, pin);
  if (!hasData(out)) return out;
  visitFloatingDtype(dt, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int bits = std::is_same_v<T, double>  ? 53
                     : std::is_same_v<T, float> ? 24
                     : std::is_same_v<T, Half>  ? 11
                                                : 8;
    T* data = static_cast<T*>(out.data_ptr());
    const int64_t n = out.numel();
    defaultGenerator().draw([&](std::mt19937_64& engine) {
      draw(engine, bits, n,
           [&](int64_t i, double v) { data[i] = convertElement<T>(v); });
    });
  });
  return out;
}

Tensor rand_kernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  return randomTensor(
      "rand", size, dtype, layout, device, pin,
      [](std::mt19937_64& engine, int bits, int64_t n, auto&& store) {
        for (int64_t i = 0; i < n; ++i) store(i, uniformReal(engine, bits));
      });
}

Tensor randn_kernel(IntArrayRef size, Dt dtype, Lo layout, Dv device, Pin pin) {
  return randomTensor(
      "randn", size, dtype, layout, device, pin,
      [](std::mt19937_64& engine, int, int64_t n, auto&& store) {
        // Box-Muller: two uniforms give two independent normals.
        constexpr double kTwoPi = 6.283185307179586476925286766559;
        for (int64_t i = 0; i < n; i += 2) {
          const double u1 = 1.0 - uniformReal(engine, 53);  // (0, 1]
          const double u2 = uniformReal(engine, 53);
          const double r = std::sqrt(-2.0 * std::log(u1));
          store(i, r * std::cos(kTwoPi * u2));
          if (i + 1 < n) store(i + 1, r * std::sin(kTwoPi * u2));
        }
      });
}

// ---- *_like: CompositeExplicitAutograd
// ------------------------------------------

Tensor empty_like_composite(const Tensor& self, Dt dtype, Lo layout, Dv device,
                            Pin pin, Mf mf) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "empty_like(): expected a defined tensor");
  DimVector strides = stridesLike(self, mf, "empty_like");
  return emptyStridedOp().call(
      self.sizes(), strides, dtype.value_or(self.scalar_type()),
      layout.value_or(self.layout()), device.value_or(self.device()), pin);
}

// empty.names: empty.memory_format once names is None; turnout has no named
// tensors.
void empty_names_composite(const OperatorHandle&, Stack* stack) {
  Stack& s = *stack;
  TURNOUT_CHECK(peek(s, 1, 7).isNone(), ErrorKind::NotImplemented,
                "empty.names(): turnout has no named tensors; pass names=None "
                "(or call empty())");
  const std::vector<int64_t> size = peek(s, 0, 7).toIntListRef();
  Tensor out = emptyOp().call(
      size, arg<Dt>(peek(s, 2, 7)),
      arg<Lo>(peek(s, 3, 7)), arg<Dv>(peek(s, 4, 7)),
      arg<Pin>(peek(s, 5, 7)), arg<Mf>(peek(s, 6, 7)));
  drop(s, 7);
  s.push_back(IValue(std::move(out)));
}

// new_empty: uninitialised, of `size`, with self's dtype and device unless
// given (torch's Tensor.new_empty; copy.deepcopy's first call on a tensor).
Tensor new_empty_composite(const Tensor& self, IntArrayRef size, Dt dtype,
                           Lo layout, Dv device, Pin pin) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "new_empty(): expected a defined tensor");
  return emptyStridedOp().call(
      size, contiguousStrides(size), dtype.value_or(self.scalar_type()),
      layout.value_or(self.layout()), device.value_or(self.device()), pin);
}

// new_empty_strided: the same with the given strides (torch's
// Tensor.new_empty_strided; the empty tensor torch 1.13's backward formulas
// allocate, as for as_strided's gradient).
Tensor new_empty_strided_composite(const Tensor& self, IntArrayRef size,
                                   IntArrayRef stride, Dt dtype, Lo layout,
                                   Dv device, Pin pin) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "new_empty_strided(): expected a defined tensor");
  return emptyStridedOp().call(
      size, stride, dtype.value_or(self.scalar_type()),
      layout.value_or(self.layout()), device.value_or(self.device()), pin);
}

Tensor zeros_like_composite(const Tensor& self, Dt dtype, Lo layout, Dv device,
                            Pin pin, Mf mf) {
  Tensor out = empty_like_composite(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;  // version 0, as torch's
  fill_(out, 0);
  return out;
}

Tensor ones_like_composite(const Tensor& self, Dt dtype, Lo layout, Dv device,
                           Pin pin, Mf mf) {
  Tensor out = empty_like_composite(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;  // version 0, as torch's
  fill_(out, 1);
  return out;
}

// full_like: self's dtype unless given (not the value's, as full's), and
// fill_'s check that the value fits it (1.5 into an integer tensor
// truncates; 300 into uint8, inf or NaN into an integer one are refused).
Tensor full_like_composite(const Tensor& self, const Scalar& fill_value,
                           Dt dtype, Lo layout, Dv device, Pin pin, Mf mf) {
  Tensor out = empty_like_composite(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;  // version 0, as torch's
  fill_(out, fill_value);
  return out;
}

}  // namespace

// ---- Front end
// ------------------------------------------------------------------

Tensor empty(IntArrayRef size, TensorOptions o,
             std::optional<MemoryFormat> memory_format) {
  return emptyOp().call(size, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                        o.pinned_memory_opt(), memory_format);
}
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o) {
  return emptyStridedOp().call(size, stride, o.dtype_opt(), o.layout_opt(),
                               o.device_opt(), o.pinned_memory_opt());
}
Tensor zeros(IntArrayRef size, TensorOptions o) {
  return zerosOp().call(size, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                        o.pinned_memory_opt());
}
Tensor ones(IntArrayRef size, TensorOptions o) {
  return onesOp().call(size, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                       o.pinned_memory_opt());
}
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions o) {
  return fullOp().call(size, fill_value, o.dtype_opt(), o.layout_opt(),
                       o.device_opt(), o.pinned_memory_opt());
}
Tensor arange(const Scalar& end, TensorOptions o) {
  return arangeOp().call(end, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                         o.pinned_memory_opt());
}
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions o) {
  return arangeStartOp().call(start, end, o.dtype_opt(), o.layout_opt(),
                              o.device_opt(), o.pinned_memory_opt());
}
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              TensorOptions o) {
  return arangeStartStepOp().call(start, end, step, o.dtype_opt(),
                                  o.layout_opt(), o.device_opt(),
                                  o.pinned_memory_opt());
}
Tensor rand(IntArrayRef size, TensorOptions o) {
  return randOp().call(size, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                       o.pinned_memory_opt());
}
Tensor randn(IntArrayRef size, TensorOptions o) {
  return randnOp().call(size, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                        o.pinned_memory_opt());
}
Tensor empty_like(const Tensor& self, TensorOptions o,
                  std::optional<MemoryFormat> memory_format) {
  return emptyLikeOp().call(self, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                            o.pinned_memory_opt(), memory_format);
}
Tensor full_like(const Tensor& self, const Scalar& fill_value,
                 TensorOptions o, std::optional<MemoryFormat> memory_format) {
  static const auto op =
      find("aten::full_like", "")
          .typed<Tensor(const Tensor&, const Scalar&, Dt, Lo, Dv, Pin, Mf)>();
  return op.call(self, fill_value, o.dtype_opt(), o.layout_opt(),
                 o.device_opt(), o.pinned_memory_opt(), memory_format);
}
Tensor zeros_like(const Tensor& self, TensorOptions o,
                  std::optional<MemoryFormat> memory_format) {
  return zerosLikeOp().call(self, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                            o.pinned_memory_opt(), memory_format);
}
Tensor ones_like(const Tensor& self, TensorOptions o,
                 std::optional<MemoryFormat> memory_format) {
  return onesLikeOp().call(self, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                           o.pinned_memory_opt(), memory_format);
}

}  // namespace turnout

// aten's one DEF library (as torch's TORCH_LIBRARY(aten)): it claims the
// namespace, so that a user's Library("aten", "DEF") is refused as in torch;
// the other kernel files add their operators as fragments.
TURNOUT_LIBRARY(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "empty.names(int[] size, *, str[]? names, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? "
      "dtype=None, Layout? layout=None, Device? device=None, bool? "
      "pin_memory=None) -> Tensor");
  m.def(
      "zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor");
  m.def(
      "rand(int[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "randn(int[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, "
      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None) -> Tensor");
  m.def(
      "zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "ones_like(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(aten, BackendSelect, m) {
  m.impl("empty.memory_format", TURNOUT_FN(turnout::empty_bs));
  m.impl("empty.names",
         turnout::CppFunction::makeFromBoxedFunction(&turnout::empty_names_bs));
  m.impl("empty_strided", TURNOUT_FN(turnout::empty_strided_bs));
  m.impl("zeros", TURNOUT_FN(turnout::zeros_bs));
  m.impl("ones", TURNOUT_FN(turnout::ones_bs));
  m.impl("full", TURNOUT_FN(turnout::full_bs));
  m.impl("arange", TURNOUT_FN(turnout::arange_bs));
  m.impl("arange.start", TURNOUT_FN(turnout::arange_start_bs));
  m.impl("arange.start_step", TURNOUT_FN(turnout::arange_start_step_bs));
  m.impl("rand", TURNOUT_FN(turnout::rand_bs));
  m.impl("randn", TURNOUT_FN(turnout::randn_bs));
}

// The CPU and Meta kernels are the same functions: they allocate where the
// device argument says, and write data only when the result has some.
#define TURNOUT_FACTORY_KERNELS(m)                                            \
  m.impl("empty.memory_format", TURNOUT_FN(turnout::empty_kernel));           \
  m.impl("empty_strided", TURNOUT_FN(turnout::empty_strided_kernel));         \
  m.impl("zeros", TURNOUT_FN(turnout::zeros_kernel));                         \
  m.impl("ones", TURNOUT_FN(turnout::ones_kernel));                           \
  m.impl("full", TURNOUT_FN(turnout::full_kernel));                           \
  m.impl("arange", TURNOUT_FN(turnout::arange_kernel));                       \
  m.impl("arange.start", TURNOUT_FN(turnout::arange_start_kernel));           \
  m.impl("arange.start_step", TURNOUT_FN(turnout::arange_start_step_kernel)); \
  m.impl("rand", TURNOUT_FN(turnout::rand_kernel));                           \
  m.impl("randn", TURNOUT_FN(turnout::randn_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_FACTORY_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_FACTORY_KERNELS(m); }
#undef TURNOUT_FACTORY_KERNELS

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("empty.names", turnout::CppFunction::makeFromBoxedFunction(
                            &turnout::empty_names_composite));
  m.impl("empty_like", TURNOUT_FN(turnout::empty_like_composite));
  m.impl("new_empty", TURNOUT_FN(turnout::new_empty_composite));
  m.impl("new_empty_strided",
         TURNOUT_FN(turnout::new_empty_strided_composite));
  m.impl("zeros_like", TURNOUT_FN(turnout::zeros_like_composite));
  m.impl("ones_like", TURNOUT_FN(turnout::ones_like_composite));
  m.impl("full_like", TURNOUT_FN(turnout::full_like_composite));
}

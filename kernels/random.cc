// The random operators over the default generator (kernels/generator.h):
// aten::manual_seed, randint (.low), randperm, the in-place samplers
// normal_, uniform_ and bernoulli_.float, and rand_like, randn_like and
// randint_like (.low_dtype); schemas (torch 1.13's), their
// BackendSelect, CPU, Meta and Autograd kernels, and the C++ front end
// (declared in random.h).
//
// Reproducibility: the same seed gives the same values, call after call and
// run after run (one Mersenne Twister, drawn in element order under its
// lock). The values are not torch's: torch's CPU generator draws
// differently, so a test can compare distributions, never elements.
//
// `Generator? generator` arguments: only None is accepted (turnout has one
// default generator and no Python Generator objects yet); the in-place
// samplers are boxed kernels because of that argument.
#include "kernels/random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/operator_handle.h"
#include "kernels/aten_tags.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/function_node.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/factory.h"
#include "kernels/factory_utils.h"
#include "kernels/generator.h"
#include "kernels/loops.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using Dt = std::optional<ScalarType>;
using Lo = std::optional<Layout>;
using Dv = std::optional<Device>;
using Pin = std::optional<bool>;

// An integer in [0, range) from 64 random bits (multiply-shift: no modulo
// bias worth the name for ranges below 2^32, and one draw per value).
uint64_t below(std::mt19937_64& engine, uint64_t range) {
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(engine()) * range) >> 64);
}

Tensor allocate(const char* op, IntArrayRef size, ScalarType dtype, Dv device,
                Lo layout, Pin pin) {
  TURNOUT_CHECK(layout.value_or(Layout::Strided) == Layout::Strided,
                ErrorKind::NotImplemented, op, "(): layout ", *layout,
                " is not supported; only strided tensors are");
  TURNOUT_CHECK(!pin.value_or(false), ErrorKind::NotImplemented, op,
                "(): pin_memory=True is not supported yet");
  return emptyStridedTensor(size, contiguousStrides(size), dtype,
                            device.value_or(Device(DeviceType::CPU)), op);
}

bool hasData(const Tensor& t) { return t.is_cpu() && t.numel() > 0; }

// ---- randint / randperm -------------------------------------------------------

Tensor randintLow(int64_t low, int64_t high, IntArrayRef size, Dt dtype,
                  Lo layout, Dv device, Pin pin) {
  TURNOUT_CHECK(low < high, ErrorKind::InvalidArgument,
                "random_ expects 'from' to be less than 'to', but got from=",
                low, " >= to=", high);
  const ScalarType dt = dtype.value_or(ScalarType::Long);
  TURNOUT_CHECK(dt != ScalarType::Bool || (low >= 0 && high <= 2),
                ErrorKind::InvalidArgument,
                "randint: a Bool tensor holds values in [0, 2) only, but got "
                "[", low, ", ", high, ")");
  Tensor out = allocate("randint", size, dt, device, layout, pin);
  if (!hasData(out)) return out;
  const uint64_t range =
      static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  visitDtype(dt, "randint", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data_ptr<T>();
    const int64_t n = out.numel();
    defaultGenerator().draw([&](std::mt19937_64& engine) {
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v =
            static_cast<int64_t>(static_cast<uint64_t>(low) + below(engine, range));
        p[i] = convertElement<T>(v);
      }
    });
  });
  return out;
}

Tensor randintHigh(int64_t high, IntArrayRef size, Dt dtype, Lo layout,
                   Dv device, Pin pin) {
  return randintLow(0, high, size, dtype, layout, device, pin);
}

Tensor randpermKernel(int64_t n, Dt dtype, Lo layout, Dv device, Pin pin) {
  TURNOUT_CHECK(n >= 0, ErrorKind::InvalidArgument,
                "Trying to create tensor with negative dimension ", n, ": [",
                n, "]");
  const ScalarType dt = dtype.value_or(ScalarType::Long);
  // As torch 1.13, which has no randperm kernel for Bool (RuntimeError).
  TURNOUT_CHECK(dt != ScalarType::Bool, ErrorKind::InvalidArgument,
                "\"randperm\" not implemented for 'Bool' (pass an integer or "
                "floating-point dtype)");
  Tensor out = allocate("randperm", {n}, dt, device, layout, pin);
  if (!hasData(out)) return out;
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  // Fisher-Yates.
  defaultGenerator().draw([&](std::mt19937_64& engine) {
    for (int64_t i = n - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(below(engine, uint64_t(i) + 1));
      std::swap(perm[i], perm[j]);
    }
  });
  visitDtype(dt, "randperm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = convertElement<T>(perm[i]);
  });
  return out;
}

// ---- BackendSelect --------------------------------------------------------------

DispatchKeySet keysFor(Dt dtype, Lo layout, Dv device) {
  return backendSelectKeySet(dtype.value_or(ScalarType::Long),
                             layout.value_or(Layout::Strided),
                             device.value_or(Device(DeviceType::CPU)));
}

template <class Sig>
TypedOperatorHandle<Sig> lookup(const char* name, const char* overload) {
  return Dispatcher::singleton().findSchemaOrThrow(name, overload).typed<Sig>();
}

using RandintSig = Tensor(int64_t, IntArrayRef, Dt, Lo, Dv, Pin);
using RandintLowSig = Tensor(int64_t, int64_t, IntArrayRef, Dt, Lo, Dv, Pin);
using RandpermSig = Tensor(int64_t, Dt, Lo, Dv, Pin);

Tensor randintBs(DispatchKeySet, int64_t high, IntArrayRef size, Dt dtype,
                 Lo layout, Dv device, Pin pin) {
  static const auto op = lookup<RandintSig>("aten::randint", "");
  return op.redispatch(keysFor(dtype, layout, device), high, size, dtype,
                       layout, device, pin);
}
Tensor randintLowBs(DispatchKeySet, int64_t low, int64_t high, IntArrayRef size,
                    Dt dtype, Lo layout, Dv device, Pin pin) {
  static const auto op = lookup<RandintLowSig>("aten::randint", "low");
  return op.redispatch(keysFor(dtype, layout, device), low, high, size, dtype,
                       layout, device, pin);
}
Tensor randpermBs(DispatchKeySet, int64_t n, Dt dtype, Lo layout, Dv device,
                  Pin pin) {
  static const auto op = lookup<RandpermSig>("aten::randperm", "");
  return op.redispatch(keysFor(dtype, layout, device), n, dtype, layout,
                       device, pin);
}

// manual_seed has no tensor argument: its kernel sits at BackendSelect,
// which every call's key set holds.
void manualSeedKernel(DispatchKeySet, int64_t seed) {
  defaultGenerator().manualSeed(static_cast<uint64_t>(seed));
}

// ---- In-place samplers (boxed: the Generator? argument) -------------------------------

enum class Sampler { Normal, Uniform, Bernoulli };

const char* samplerName(Sampler s) {
  switch (s) {
    case Sampler::Normal:
      return "normal_";
    case Sampler::Uniform:
      return "uniform_";
    case Sampler::Bernoulli:
      return "bernoulli_";
  }
  return "";
}

// The arguments of a sampler call on the stack: (self, a, [b,] generator).
struct SamplerArgs {
  Tensor self;
  double a = 0;
  double b = 0;
};

SamplerArgs readArgs(Sampler s, const Stack& stack) {
  const size_t n = s == Sampler::Bernoulli ? 3 : 4;
  TURNOUT_INTERNAL_ASSERT(stack.size() >= n, samplerName(s), ": the stack holds ",
                          stack.size(), " values, expected at least ", n);
  const size_t base = stack.size() - n;
  SamplerArgs args;
  args.self = stack[base].toTensor();
  args.a = stack[base + 1].toDouble();
  if (s != Sampler::Bernoulli) args.b = stack[base + 2].toDouble();
  TURNOUT_CHECK(stack[base + n - 1].isNone(), ErrorKind::NotImplemented,
                samplerName(s),
                ": generator= is not supported (turnout has one default "
                "generator); pass generator=None and seed it with "
                "turnout.manual_seed()");
  return args;
}

void checkSampler(Sampler s, const SamplerArgs& args) {
  const Tensor& self = args.self;
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument, samplerName(s),
                ": expected a defined tensor, but got an undefined one");
  switch (s) {
    case Sampler::Normal:
      TURNOUT_CHECK(isFloatingType(self.scalar_type()),
                    ErrorKind::NotImplemented,
                    "\"normal_kernel_cpu\" not implemented for '",
                    toString(self.scalar_type()), "'");
      TURNOUT_CHECK(args.b >= 0.0, ErrorKind::InvalidArgument,
                    "normal expects std >= 0.0, but found std ", args.b);
      break;
    case Sampler::Uniform:
      TURNOUT_CHECK(isFloatingType(self.scalar_type()),
                    ErrorKind::NotImplemented,
                    "\"check_uniform_bounds\" not implemented for '",
                    toString(self.scalar_type()), "'");
      TURNOUT_CHECK(args.a <= args.b, ErrorKind::InvalidArgument,
                    "uniform_ expects to return a [from, to) range, but found "
                    "from=",
                    args.a, " > to=", args.b);
      break;
    case Sampler::Bernoulli:
      TURNOUT_CHECK(args.a >= 0.0 && args.a <= 1.0,
                    ErrorKind::InvalidArgument,
                    "bernoulli_ expects p to be in [0, 1], but got p=", args.a);
      break;
  }
}

// Fills self (any strides) in element order: a contiguous buffer is drawn,
// then copied in.
void sample(Sampler s, const SamplerArgs& args) {
  const Tensor& self = args.self;
  if (!hasData(self)) return;
  const int64_t n = self.numel();
  std::vector<double> values(static_cast<size_t>(n));
  const int bits = self.scalar_type() == ScalarType::Double  ? 53
                   : self.scalar_type() == ScalarType::Half  ? 11
                   : self.scalar_type() == ScalarType::BFloat16 ? 8
                                                               : 24;
  defaultGenerator().draw([&](std::mt19937_64& engine) {
    switch (s) {
      case Sampler::Normal: {
        constexpr double kTwoPi = 6.283185307179586476925286766559;
        for (int64_t i = 0; i < n; i += 2) {
          const double u1 = 1.0 - uniformReal(engine, 53);  // (0, 1]
          const double u2 = uniformReal(engine, 53);
          const double r = std::sqrt(-2.0 * std::log(u1));
          values[i] = args.a + args.b * r * std::cos(kTwoPi * u2);
          if (i + 1 < n) values[i + 1] = args.a + args.b * r * std::sin(kTwoPi * u2);
        }
        break;
      }
      case Sampler::Uniform:
        for (int64_t i = 0; i < n; ++i) {
          double v = args.a + (args.b - args.a) * uniformReal(engine, bits);
          // Rounding can reach `to`; keep [from, to).
          if (v >= args.b && args.b > args.a) v = std::nextafter(args.b, args.a);
          values[i] = v;
        }
        break;
      case Sampler::Bernoulli:
        for (int64_t i = 0; i < n; ++i) {
          values[i] = uniformReal(engine, 53) < args.a ? 1.0 : 0.0;
        }
        break;
    }
  });
  Tensor buffer = emptyTensor(self.sizes(), ScalarType::Double, self.device());
  std::copy(values.begin(), values.end(), buffer.data_ptr<double>());
  copyCast(self, buffer);
}

// CPU and Meta: check, fill (CPU), and leave self as the result.
template <Sampler kS>
void samplerKernel(const OperatorHandle&, Stack* stack) {
  const SamplerArgs args = readArgs(kS, *stack);
  checkSampler(kS, args);
  sample(kS, args);
  stack->resize(stack->size() - (kS == Sampler::Bernoulli ? 3 : 4));
  stack->push_back(IValue(args.self));
}

// Autograd: in place, so self must not be a leaf that requires grad; the
// result does not depend on self's old values (a zero gradient), and
// self's version counter moves.
template <Sampler kS>
void samplerAutograd(const OperatorHandle& op, DispatchKeySet ks,
                     Stack* stack) {
  const SamplerArgs args = readArgs(kS, *stack);
  const bool rec =
      autograd::detail::shouldRecord(samplerName(kS), args.self);
  autograd::detail::checkInplaceAllowed(args.self, rec, samplerName(kS));
  {
    static const DispatchKeySet after_autograd(DispatchKeySet::FULL_AFTER,
                                               DispatchKey::AutogradOther);
    AutoDispatchBelowAutograd guard;
    op.redispatchBoxed(ks & after_autograd, stack);
  }
  args.self.unsafeGetTensorImpl()->bump_version();
  if (rec) {
    const char* node = kS == Sampler::Normal    ? "NormalBackward0"
                       : kS == Sampler::Uniform ? "UniformBackward0"
                                                : "BernoulliBackward1";
    autograd::detail::record(node, {args.self}, args.self,
                             [](const autograd::FunctionNode&, const Tensor& g) {
                               return autograd::variable_list{turnout::zeros_like(g)};
                             });
  }
}

}  // namespace

// ---- Front end ------------------------------------------------------------------------

void manual_seed_op(int64_t seed) {
  static const auto op = lookup<void(int64_t)>("aten::manual_seed", "");
  op.call(seed);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions o) {
  static const auto op = lookup<RandintLowSig>("aten::randint", "low");
  return op.call(low, high, size, o.dtype_opt(), o.layout_opt(),
                 o.device_opt(), std::nullopt);
}

Tensor randperm(int64_t n, TensorOptions o) {
  static const auto op = lookup<RandpermSig>("aten::randperm", "");
  return op.call(n, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                 std::nullopt);
}

namespace {
const Tensor& callSampler(const char* name, const char* overload,
                          const Tensor& self, std::vector<IValue> args) {
  const OperatorHandle op =
      Dispatcher::singleton().findSchemaOrThrow(name, overload);
  Stack stack;
  stack.push_back(IValue(self));
  for (IValue& a : args) stack.push_back(std::move(a));
  stack.push_back(IValue());  // generator=None
  op.callBoxed(&stack);
  return self;
}
}  // namespace

const Tensor& normal_(const Tensor& self, double mean, double std) {
  return callSampler("aten::normal_", "", self, {IValue(mean), IValue(std)});
}
const Tensor& uniform_(const Tensor& self, double from, double to) {
  return callSampler("aten::uniform_", "", self, {IValue(from), IValue(to)});
}
const Tensor& bernoulli_(const Tensor& self, double p) {
  return callSampler("aten::bernoulli_", "float", self, {IValue(p)});
}

// ---- rand_like, randn_like, randint_like: CompositeExplicitAutograd -------

namespace {

using Mf = std::optional<MemoryFormat>;
using LikeSig = Tensor(const Tensor&, Dt, Lo, Dv, Pin, Mf);

// empty_like's tensor (self's layout, or the memory format's), to sample
// into below autograd (a new tensor: no history, version 0 as torch's).
Tensor emptyLike(const Tensor& self, Dt dtype, Lo layout, Dv device, Pin pin,
                 Mf mf) {
  static const auto op = lookup<LikeSig>("aten::empty_like", "");
  return op.call(self, dtype, layout, device, pin, mf);
}

Tensor randLike(const Tensor& self, Dt dtype, Lo layout, Dv device, Pin pin,
                Mf mf) {
  Tensor out = emptyLike(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;
  uniform_(out, 0.0, 1.0);  // refuses integral and Bool dtypes, as torch's
  return out;
}

Tensor randnLike(const Tensor& self, Dt dtype, Lo layout, Dv device, Pin pin,
                 Mf mf) {
  Tensor out = emptyLike(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;
  normal_(out, 0.0, 1.0);
  return out;
}

// torch 1.13's random_(from, to) checks: from < to, and both ends within
// the dtype (Bool: 0 and 1; a floating dtype: its finite range), named by
// the C++ type as torch names it.
void checkRandomRange(int64_t low, int64_t high, ScalarType dtype) {
  TURNOUT_CHECK(low < high, ErrorKind::InvalidArgument,
                "random_ expects 'from' to be less than 'to', but got from=",
                low, " >= to=", high);
  double lo = 0;
  double hi = 0;
  const char* name = nullptr;
  switch (dtype) {
    case ScalarType::Bool: lo = 0; hi = 1; name = "bool"; break;
    case ScalarType::Byte: lo = 0; hi = 255; name = "unsigned char"; break;
    case ScalarType::Char: lo = -128; hi = 127; name = "signed char"; break;
    case ScalarType::Short:
      lo = -32768; hi = 32767; name = "short int"; break;
    case ScalarType::Int:
      lo = -2147483648.0; hi = 2147483647.0; name = "int"; break;
    case ScalarType::Half: lo = -65504; hi = 65504; name = "c10::Half"; break;
    default: return;  // Long, BFloat16, Float, Double hold every int64
  }
  const double first = static_cast<double>(low);
  TURNOUT_CHECK(first >= lo && first <= hi, ErrorKind::InvalidArgument,
                "from is out of bounds for ", name);
  const double last = static_cast<double>(high) - 1;
  TURNOUT_CHECK(last >= lo && last <= hi, ErrorKind::InvalidArgument,
                "to - 1 is out of bounds for ", name);
}

// Drawn as randint.low's values (element order of a contiguous tensor),
// then copied into empty_like's layout.
Tensor randintLikeLow(const Tensor& self, int64_t low, int64_t high, Dt dtype,
                      Lo layout, Dv device, Pin pin, Mf mf) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "randint_like(): expected a defined tensor");
  checkRandomRange(low, high, dtype.value_or(self.scalar_type()));
  Tensor out = emptyLike(self, dtype, layout, device, pin, mf);
  AutoDispatchBelowAutograd below;
  const Tensor values = turnout::randint(
      low, high, out.sizes(),
      TensorOptions().dtype(out.scalar_type()).device(out.device()));
  copy_(out, values);
  return out;
}

Tensor randintLike(const Tensor& self, int64_t high, Dt dtype, Lo layout,
                   Dv device, Pin pin, Mf mf) {
  return randintLikeLow(self, 0, high, dtype, layout, device, pin, mf);
}

}  // namespace

Tensor rand_like(const Tensor& self, TensorOptions o,
                 std::optional<MemoryFormat> memory_format) {
  static const auto op = lookup<LikeSig>("aten::rand_like", "");
  return op.call(self, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                 o.pinned_memory_opt(), memory_format);
}

Tensor randn_like(const Tensor& self, TensorOptions o,
                  std::optional<MemoryFormat> memory_format) {
  static const auto op = lookup<LikeSig>("aten::randn_like", "");
  return op.call(self, o.dtype_opt(), o.layout_opt(), o.device_opt(),
                 o.pinned_memory_opt(), memory_format);
}

Tensor randint_like(const Tensor& self, int64_t low, int64_t high,
                    TensorOptions o,
                    std::optional<MemoryFormat> memory_format) {
  static const auto op =
      lookup<Tensor(const Tensor&, int64_t, int64_t, Dt, Lo, Dv, Pin, Mf)>(
          "aten::randint_like", "low_dtype");
  return op.call(self, low, high, o.dtype_opt(), o.layout_opt(),
                 o.device_opt(), o.pinned_memory_opt(), memory_format);
}

}  // namespace turnout

// ---- Registration ------------------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("manual_seed(int seed) -> ()");
  m.def(
      "randint(int high, int[] size, *, ScalarType? dtype=4, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "randint.low(int low, int high, int[] size, *, ScalarType? dtype=4, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> "
      "Tensor");
  m.def(
      "randperm(int n, *, ScalarType? dtype=4, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor");
  m.def(
      "normal_(Tensor(a!) self, float mean=0., float std=1., *, Generator? "
      "generator=None) -> Tensor(a!)");
  m.def(
      "uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? "
      "generator=None) -> Tensor(a!)");
  m.def(
      "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? "
      "generator=None) -> Tensor(a!)");
  m.def(
      "rand_like(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "randn_like(Tensor self, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "randint_like(Tensor self, int high, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor");
  m.def(
      "randint_like.low_dtype(Tensor self, int low, int high, *, "
      "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor");
}

// As torch 1.13's: composites over empty_like and the samplers, which a
// dispatch mode sees whole.
TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("rand_like", TURNOUT_FN(turnout::randLike));
  m.impl("randn_like", TURNOUT_FN(turnout::randnLike));
  m.impl("randint_like", TURNOUT_FN(turnout::randintLike));
  m.impl("randint_like.low_dtype", TURNOUT_FN(turnout::randintLikeLow));
}

TURNOUT_LIBRARY_IMPL(aten, BackendSelect, m) {
  m.impl("manual_seed", TURNOUT_FN(turnout::manualSeedKernel));
  m.impl("randint", TURNOUT_FN(turnout::randintBs));
  m.impl("randint.low", TURNOUT_FN(turnout::randintLowBs));
  m.impl("randperm", TURNOUT_FN(turnout::randpermBs));
}

#define TURNOUT_RANDOM_KERNELS(m)                                           \
  m.impl("randint", TURNOUT_FN(turnout::randintHigh));                      \
  m.impl("randint.low", TURNOUT_FN(turnout::randintLow));                   \
  m.impl("randperm", TURNOUT_FN(turnout::randpermKernel));                  \
  m.impl("normal_", turnout::CppFunction::makeFromBoxedFunction(            \
                        &turnout::samplerKernel<turnout::Sampler::Normal>)); \
  m.impl("uniform_", turnout::CppFunction::makeFromBoxedFunction(           \
                         &turnout::samplerKernel<turnout::Sampler::Uniform>)); \
  m.impl("bernoulli_.float",                                                \
         turnout::CppFunction::makeFromBoxedFunction(                       \
             &turnout::samplerKernel<turnout::Sampler::Bernoulli>))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_RANDOM_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_RANDOM_KERNELS(m); }
#undef TURNOUT_RANDOM_KERNELS

TURNOUT_LIBRARY_IMPL(aten, Autograd, m) {
  using turnout::Sampler;
  m.impl("normal_", turnout::CppFunction::makeFromBoxedFunction(
                        &turnout::samplerAutograd<Sampler::Normal>));
  m.impl("uniform_", turnout::CppFunction::makeFromBoxedFunction(
                         &turnout::samplerAutograd<Sampler::Uniform>));
  m.impl("bernoulli_.float", turnout::CppFunction::makeFromBoxedFunction(
                                 &turnout::samplerAutograd<Sampler::Bernoulli>));
  // New tensors that take no gradient.
  for (const char* op : {"randint", "randint.low", "randperm"}) {
    m.impl(op, turnout::CppFunction::makeFallthrough());
  }
}

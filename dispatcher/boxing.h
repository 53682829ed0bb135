// The generated glue between typed C++ kernels and the boxed calling
// convention, and the boxed kernel function types; used through
// kernel_function.h.
//
//   - WrapKernelFunctor<F>: the unboxed and boxed entry points of a typed
//     functor (arguments popped off the stack with IValueToArg, results
//     pushed back with pushOutputs);
//   - BoxedKernelWrapper<Sig>: calls a boxed-only kernel with typed
//     arguments (boxes them, unboxes the result);
//   - extractKeySetFromArgs: the OR of the key sets of the tensor arguments
//     of a typed call.
//
// Supported C++ types: Tensor, const Tensor&, Tensor&, int64_t, double,
// bool, std::string, std::string_view, Scalar, Device, ScalarType, Layout,
// MemoryFormat, std::optional<T>, std::vector<T> and absl::Span<const T> of
// int64_t, double, bool and Tensor, std::vector<std::optional<Tensor>>
// (Tensor?[]); returns of those, std::tuple<...> of
// them, and void. Anything else fails to compile with a message naming it.
//
// Thread safety: stateless.
#ifndef TURNOUT_DISPATCHER_BOXING_H_
#define TURNOUT_DISPATCHER_BOXING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/operator_kernel.h"
#include "dispatcher/stack.h"

namespace turnout {

class OperatorHandle;

/// The boxed calling convention: arguments on `stack`, results replace them.
using BoxedKernelFn = void (*)(OperatorKernel* functor, const OperatorHandle& op,
                               DispatchKeySet ks, Stack* stack);
/// Boxed kernels as users write them, with or without the key set.
using BoxedFunction = void (*)(const OperatorHandle& op, Stack* stack);
using BoxedFunctionWithKeys = void (*)(const OperatorHandle& op,
                                       DispatchKeySet ks, Stack* stack);

namespace detail {

template <class T>
inline constexpr bool kAlwaysFalse = false;

// ---- Function traits --------------------------------------------------------

template <class T>
struct FunctionTraits;
template <class R, class... A>
struct FunctionTraits<R(A...)> {
  using FuncType = R(A...);
  using ReturnType = R;
  static constexpr size_t kNumArgs = sizeof...(A);
};
template <class R, class... A>
struct FunctionTraits<R (*)(A...)> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...)> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...) const> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...) noexcept> : FunctionTraits<R(A...)> {};
template <class C, class R, class... A>
struct FunctionTraits<R (C::*)(A...) const noexcept> : FunctionTraits<R(A...)> {};

// The signature of a functor's (single, non-template) operator().
template <class F>
using FunctorSignature =
    typename FunctionTraits<decltype(&F::operator())>::FuncType;

// Drops a leading DispatchKeySet parameter: the signature the callers see.
template <class Sig>
struct RemoveKeySetArg {
  using type = Sig;
  static constexpr bool kTakesKeySet = false;
};
template <class R, class... A>
struct RemoveKeySetArg<R(DispatchKeySet, A...)> {
  using type = R(A...);
  static constexpr bool kTakesKeySet = true;
};

// ---- Functors for the kinds of C++ callables --------------------------------

template <auto F, class FuncType = std::remove_pointer_t<decltype(F)>>
struct CompileTimeFunctionFunctor;
template <auto F, class R, class... A>
struct CompileTimeFunctionFunctor<F, R(A...)> final : OperatorKernel {
  R operator()(A... a) { return F(std::forward<A>(a)...); }
};

template <class FuncType>
struct RuntimeFunctionFunctor;
template <class R, class... A>
struct RuntimeFunctionFunctor<R(A...)> final : OperatorKernel {
  explicit RuntimeFunctionFunctor(R (*fn)(A...)) : fn_(fn) {}
  R operator()(A... a) { return fn_(std::forward<A>(a)...); }
  R (*fn_)(A...);
};

template <class L, class Sig = FunctorSignature<L>>
struct LambdaFunctor;
template <class L, class R, class... A>
struct LambdaFunctor<L, R(A...)> final : OperatorKernel {
  explicit LambdaFunctor(L l) : lambda_(std::move(l)) {}
  R operator()(A... a) { return lambda_(std::forward<A>(a)...); }
  L lambda_;
};

// ---- IValue -> kernel argument ------------------------------------------------

// Converts a stack slot to a parameter of type T. May return a reference into
// the slot (const Tensor&, Tensor&, const std::vector<int64_t>&): the slot
// outlives the kernel call.
template <class T, class Enable = void>
struct IValueToArg {
  static_assert(kAlwaysFalse<T>,
                "turnout: this C++ type cannot be a kernel argument. Use "
                "Tensor, const Tensor&, Tensor&, int64_t, double, bool, "
                "std::string, std::string_view, Scalar, Device, ScalarType, "
                "Layout, MemoryFormat, std::optional<T>, std::vector<T> or "
                "absl::Span<const T> of int64_t/double/bool/Tensor.");
};

#define TURNOUT_IVALUE_TO_ARG(Type, expr)                       \
  template <>                                                   \
  struct IValueToArg<Type> {                                    \
    static decltype(auto) call(IValue& v) { return (expr); }    \
  };

// By value: the slot is dropped after the call, so its tensor can be moved.
TURNOUT_IVALUE_TO_ARG(Tensor, std::move(v).toTensor())
TURNOUT_IVALUE_TO_ARG(const Tensor&, static_cast<const Tensor&>(v.toTensor()))
TURNOUT_IVALUE_TO_ARG(Tensor&, static_cast<Tensor&>(v.toTensor()))
TURNOUT_IVALUE_TO_ARG(int64_t, int64_t(v.toInt()))
TURNOUT_IVALUE_TO_ARG(double, double(v.toDouble()))
TURNOUT_IVALUE_TO_ARG(bool, bool(v.toBool()))
TURNOUT_IVALUE_TO_ARG(std::string, std::string(v.toStringRef()))
TURNOUT_IVALUE_TO_ARG(const std::string&,
                      static_cast<const std::string&>(v.toStringRef()))
TURNOUT_IVALUE_TO_ARG(std::string_view, std::string_view(v.toStringRef()))
TURNOUT_IVALUE_TO_ARG(Scalar, Scalar(v.toScalar()))
TURNOUT_IVALUE_TO_ARG(const Scalar&, Scalar(v.toScalar()))
TURNOUT_IVALUE_TO_ARG(Device, Device(v.toDevice()))
TURNOUT_IVALUE_TO_ARG(ScalarType, ScalarType(v.toScalarType()))
TURNOUT_IVALUE_TO_ARG(Layout, Layout(v.toLayout()))
TURNOUT_IVALUE_TO_ARG(MemoryFormat, MemoryFormat(v.toMemoryFormat()))
TURNOUT_IVALUE_TO_ARG(std::vector<int64_t>, v.toIntVector())
TURNOUT_IVALUE_TO_ARG(const std::vector<int64_t>&,
                      static_cast<const std::vector<int64_t>&>(v.toIntListRef()))
TURNOUT_IVALUE_TO_ARG(absl::Span<const int64_t>,
                      absl::Span<const int64_t>(v.toIntListRef()))
TURNOUT_IVALUE_TO_ARG(std::vector<double>, v.toDoubleVector())
TURNOUT_IVALUE_TO_ARG(const std::vector<double>&,
                      static_cast<const std::vector<double>&>(v.toDoubleListRef()))
TURNOUT_IVALUE_TO_ARG(absl::Span<const double>,
                      absl::Span<const double>(v.toDoubleListRef()))
TURNOUT_IVALUE_TO_ARG(std::vector<bool>, v.toBoolVector())
TURNOUT_IVALUE_TO_ARG(std::vector<Tensor>, v.toTensorVector())
TURNOUT_IVALUE_TO_ARG(const std::vector<Tensor>&,
                      static_cast<const std::vector<Tensor>&>(v.toTensorListRef()))
TURNOUT_IVALUE_TO_ARG(absl::Span<const Tensor>,
                      absl::Span<const Tensor>(v.toTensorListRef()))
#undef TURNOUT_IVALUE_TO_ARG

// Tensor?[] (index.Tensor's `indices`): a list of None and Tensors, boxed as
// a GenericList (or a TensorList when every element is a tensor).
std::vector<std::optional<Tensor>> ivalueToOptionalTensorList(const IValue& v);
template <>
struct IValueToArg<std::vector<std::optional<Tensor>>> {
  static std::vector<std::optional<Tensor>> call(IValue& v) {
    return ivalueToOptionalTensorList(v);
  }
};
template <>
struct IValueToArg<const std::vector<std::optional<Tensor>>&>
    : IValueToArg<std::vector<std::optional<Tensor>>> {};

template <class T>
struct IValueToArg<std::optional<T>> {
  static std::optional<T> call(IValue& v) {
    if (v.isNone()) return std::nullopt;
    return std::optional<T>(IValueToArg<T>::call(v));
  }
};
template <class T>
struct IValueToArg<const std::optional<T>&> : IValueToArg<std::optional<T>> {};

// ---- C++ value -> IValue ------------------------------------------------------

template <class T>
IValue toIValue(T&& value) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, absl::Span<const int64_t>>) {
    return IValue(std::vector<int64_t>(value.begin(), value.end()));
  } else if constexpr (std::is_same_v<D, absl::Span<const double>>) {
    return IValue(std::vector<double>(value.begin(), value.end()));
  } else if constexpr (std::is_same_v<D, absl::Span<const Tensor>>) {
    return IValue(std::vector<Tensor>(value.begin(), value.end()));
  } else if constexpr (std::is_same_v<D, std::string_view>) {
    return IValue(std::string(value));
  } else {
    return IValue(std::forward<T>(value));
  }
}

// Pushes a kernel's result(s) onto the stack.
template <class T>
struct IsTuple : std::false_type {};
template <class... Ts>
struct IsTuple<std::tuple<Ts...>> : std::true_type {};

template <class R>
struct PushOutputs {
  static void call(R&& result, Stack* stack) {
    stack->push_back(toIValue(std::forward<R>(result)));
  }
};
template <class... Ts>
struct PushOutputs<std::tuple<Ts...>> {
  static void call(std::tuple<Ts...>&& result, Stack* stack) {
    std::apply(
        [stack](auto&&... v) {
          (stack->push_back(toIValue(std::forward<decltype(v)>(v))), ...);
        },
        std::move(result));
  }
};

// ---- IValue -> C++ return value (boxed kernel called unboxed) -----------------

template <class R>
struct PopReturn {
  static R call(Stack* stack, size_t index) {
    return IValueToArg<R>::call((*stack)[index]);
  }
};
template <class... Ts>
struct PopReturn<std::tuple<Ts...>> {
  static std::tuple<Ts...> call(Stack* stack, size_t index) {
    return callImpl(stack, index, std::index_sequence_for<Ts...>());
  }
  template <size_t... I>
  static std::tuple<Ts...> callImpl(Stack* stack, size_t index,
                                    std::index_sequence<I...>) {
    return std::tuple<Ts...>(IValueToArg<Ts>::call((*stack)[index + I])...);
  }
};

void checkBoxedReturnCount(const OperatorHandle& op, size_t expected,
                           size_t found);
// Throws the "stack holds only N arguments" error (out of line and cold, so
// that the check below is one compare in the boxed call).
[[noreturn]] void throwStackTooShort(const OperatorHandle& op, size_t needed,
                                     size_t found);
inline void checkStackHasArguments(const OperatorHandle& op, size_t needed,
                                   size_t found) {
  if (__builtin_expect(found < needed, 0)) throwStackTooShort(op, needed, found);
}

// Calls a boxed kernel with typed arguments.
template <class Sig>
struct BoxedKernelWrapper;
template <class R, class... A>
struct BoxedKernelWrapper<R(A...)> {
  static R call(BoxedKernelFn boxed, OperatorKernel* functor,
                const OperatorHandle& op, DispatchKeySet ks, A... args) {
    Stack stack;
    stack.reserve(sizeof...(A));
    (stack.push_back(toIValue(static_cast<const std::decay_t<A>&>(args))), ...);
    boxed(functor, op, ks, &stack);
    if constexpr (std::is_void_v<R>) {
      return;
    } else if constexpr (std::is_same_v<R, Tensor&>) {
      // In-place and out= kernels return their mutated argument: the first
      // Tensor& parameter, as c10 does.
      return firstMutableTensor(args...);
    } else {
      constexpr size_t n = returnCount(static_cast<R*>(nullptr));
      checkBoxedReturnCount(op, n, stack.size());
      return PopReturn<R>::call(&stack, 0);
    }
  }

 private:
  template <class... Ts>
  static constexpr size_t returnCount(std::tuple<Ts...>*) {
    return sizeof...(Ts);
  }
  template <class T>
  static constexpr size_t returnCount(T*) {
    return 1;
  }
  template <class First, class... Rest>
  static Tensor& firstMutableTensor(First&& first, Rest&&... rest) {
    if constexpr (std::is_same_v<First, Tensor&>) {
      return first;
    } else {
      return firstMutableTensor(std::forward<Rest>(rest)...);
    }
  }
  template <class Dummy = void>
  static Tensor& firstMutableTensor() {
    static_assert(kAlwaysFalse<Dummy>,
                  "a kernel returning Tensor& needs a Tensor& parameter");
    return *static_cast<Tensor*>(nullptr);
  }
};

// ---- Entry points of a typed functor ------------------------------------------

// The entry points of a functor whose operator() has signature
// R(A...), or R(DispatchKeySet, A...) when it takes the call's keys.
template <class Functor, class Sig = FunctorSignature<Functor>>
struct WrapKernelFunctorImpl;

template <class Functor, class R, class... A>
struct WrapKernelFunctorImpl<Functor, R(A...)> {
  static constexpr bool kTakesKeySet = RemoveKeySetArg<R(A...)>::kTakesKeySet;

  // Calls the functor with the key set when it takes one.
  template <class... Args>
  static R invoke(OperatorKernel* f, DispatchKeySet ks, Args&&... args) {
    auto& functor = *static_cast<Functor*>(f);
    if constexpr (kTakesKeySet) {
      return functor(ks, std::forward<Args>(args)...);
    } else {
      return functor(std::forward<Args>(args)...);
    }
  }
};

// The unboxed entry point has the callers' signature: Return(Args...) with
// the key set in front, whether or not the functor takes it.
template <class Functor, class Wrap, class CallerSig>
struct WrapEntryPoints;
template <class Functor, class Wrap, class R, class... A>
struct WrapEntryPoints<Functor, Wrap, R(A...)> {
  static R unboxedCall(OperatorKernel* f, DispatchKeySet ks, A... args) {
    return Wrap::invoke(f, ks, std::forward<A>(args)...);
  }
  static void boxedCall(OperatorKernel* f, const OperatorHandle& op,
                        DispatchKeySet ks, Stack* stack) {
    callFromStack(f, op, ks, stack, std::index_sequence_for<A...>());
  }
  template <size_t... I>
  static void callFromStack(OperatorKernel* f, const OperatorHandle& op,
                            DispatchKeySet ks, Stack* stack,
                            std::index_sequence<I...>) {
    constexpr size_t n = sizeof...(A);
    checkStackHasArguments(op, n, stack->size());
    IValue* base = stack->data() + (stack->size() - n);
    if constexpr (std::is_void_v<R>) {
      Wrap::invoke(f, ks, IValueToArg<A>::call(base[I])...);
      stack->resize(stack->size() - n);
    } else {
      // Copy the result out before dropping the arguments: it may refer to
      // one of them (Tensor& returns).
      std::decay_t<R> result(
          Wrap::invoke(f, ks, IValueToArg<A>::call(base[I])...));
      if constexpr (n >= 1 && !IsTuple<std::decay_t<R>>::value) {
        // One result: it takes the first argument's slot (no capacity check,
        // no push), and the other arguments are dropped.
        base[0] = toIValue(std::move(result));
        if constexpr (n > 1) stack->resize(stack->size() - (n - 1));
      } else {
        stack->resize(stack->size() - n);
        PushOutputs<std::decay_t<R>>::call(std::move(result), stack);
      }
    }
  }
};

template <class Functor>
using WrapKernelFunctor = WrapEntryPoints<
    Functor, WrapKernelFunctorImpl<Functor>,
    typename RemoveKeySetArg<FunctorSignature<Functor>>::type>;

// ---- Dispatch key extraction from typed arguments -------------------------------

struct KeySetAccumulator {
  uint64_t bits = 0;
  void add(const Tensor& t) {
    if (t.defined()) bits |= t.key_set().raw_repr();
  }
  void add(const std::optional<Tensor>& t) {
    if (t.has_value()) add(*t);
  }
  void add(absl::Span<const Tensor> ts) {
    for (const Tensor& t : ts) add(t);
  }
  void add(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts) add(t);
  }
  void add(const std::vector<std::optional<Tensor>>& ts) {
    for (const std::optional<Tensor>& t : ts) add(t);
  }
  template <class T>
  void add(const T&) {}
};

template <class... Args>
inline DispatchKeySet extractKeySetFromArgs(const Args&... args) {
  KeySetAccumulator acc;
  (acc.add(args), ...);
  return DispatchKeySet(DispatchKeySet::RAW, acc.bits);
}

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_BOXING_H_

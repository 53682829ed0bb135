// KernelFunction: one kernel as the dispatcher holds it, callable boxed
// (arguments on a Stack) and, when it was registered from a typed C++
// callable, unboxed (arguments in registers, no IValue in between).
//
//   Tensor relu(const Tensor& x);
//   KernelFunction k = KernelFunction::makeFromUnboxedFunction(TURNOUT_FN(relu));
//   KernelFunction b = KernelFunction::makeFromBoxedFunction(
//       [](const OperatorHandle& op, Stack* stack) { ... });  // function pointer
//   KernelFunction f = KernelFunction::makeFallthrough();
//
// Both ways of calling work for every kernel: a boxed call of an unboxed
// kernel goes through a generated wrapper that pops the arguments off the
// stack and pushes the results; an unboxed call of a boxed-only kernel (a
// Python kernel, a fallback) boxes the arguments first.
//
// A KernelFunction is three words: the functor (shared, reference counted),
// the boxed entry point and the unboxed entry point. Copies share the functor.
// Thread safety: immutable after construction; copies may be made and used
// from any thread.
#ifndef TURNOUT_DISPATCHER_KERNEL_FUNCTION_H_
#define TURNOUT_DISPATCHER_KERNEL_FUNCTION_H_

#include <memory>
#include <type_traits>
#include <utility>

#include "dispatcher/boxing.h"
#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/operator_kernel.h"
#include "dispatcher/stack.h"

namespace turnout {

/// A function pointer known at compile time: TURNOUT_FN(f). Calls to it are
/// direct (inlinable) from the generated wrappers.
template <auto FuncPtr>
struct CompileTimeFunctionPointer {
  static constexpr auto value = FuncPtr;
};
#define TURNOUT_FN(f) ::turnout::CompileTimeFunctionPointer<&(f)>()

class KernelFunction {
 public:
  /// An invalid kernel (no registration).
  KernelFunction() = default;
  KernelFunction(const KernelFunction& other);
  KernelFunction(KernelFunction&& other) noexcept;
  KernelFunction& operator=(const KernelFunction& other);
  KernelFunction& operator=(KernelFunction&& other) noexcept;
  ~KernelFunction();

  // ---- Makers ----------------------------------------------------------------
  static KernelFunction makeFromBoxedFunction(BoxedFunction fn);
  static KernelFunction makeFromBoxedFunction(BoxedFunctionWithKeys fn);
  /// `F` has `void operator()(const OperatorHandle&, DispatchKeySet, Stack*)`.
  template <class F>
  static KernelFunction makeFromBoxedFunctor(std::unique_ptr<F> functor);
  /// A typed function known at compile time (TURNOUT_FN(f)).
  template <auto FuncPtr>
  static KernelFunction makeFromUnboxedFunction(
      CompileTimeFunctionPointer<FuncPtr>);
  /// A typed function pointer known at run time.
  template <class FuncType>
  static KernelFunction makeFromUnboxedRuntimeFunction(FuncType* fn);
  /// A lambda or any callable object with one operator().
  template <class Lambda>
  static KernelFunction makeFromUnboxedLambda(Lambda&& lambda);
  /// A functor class deriving from OperatorKernel with one operator().
  template <class Functor>
  static KernelFunction makeFromUnboxedFunctor(std::unique_ptr<Functor> functor);
  /// A fallthrough: the dispatcher skips this key for the operator.
  static KernelFunction makeFallthrough();
  /// What the computed table holds for AutogradOther when a
  /// CompositeImplicitAutograd kernel meets a backend kernel of a backend
  /// without an autograd key of its own: calling it explains and fails.
  static KernelFunction makeAmbiguousAutogradOther();
  /// What the computed table holds for a key with no kernel: calling it
  /// throws the "Could not run ..." error.
  static KernelFunction makeMissing();
  /// A functor with entry points generated elsewhere: `unboxed` is a
  /// `Return(*)(OperatorKernel*, DispatchKeySet, Args...)` of the operator's
  /// signature, or null (a backend fallback specialised for one operator:
  /// fallback_filter.h).
  static KernelFunction makeFromEntryPoints(
      std::unique_ptr<OperatorKernel> functor, BoxedKernelFn boxed,
      void* unboxed) {
    return KernelFunction(functor.release(), boxed, unboxed);
  }

  // ---- Queries ---------------------------------------------------------------
  /// False for a default-constructed and for a missing kernel.
  bool isValid() const;
  bool isValidUnboxed() const { return unboxed_fn_ != nullptr; }
  bool isFallthrough() const;
  bool isAmbiguousAutogradOther() const;
  /// A value identifying the boxed entry point (tests, dumps).
  BoxedKernelFn boxedFunction() const { return boxed_fn_; }
  /// The functor the entry points receive (null for the special kernels).
  OperatorKernel* functor() const { return functor_; }

  // ---- Calls -----------------------------------------------------------------
  void callBoxed(const OperatorHandle& op, DispatchKeySet ks,
                 Stack* stack) const {
    boxed_fn_(functor_, op, ks, stack);
  }
  /// Precondition: `Return(Args...)` is the kernel's C++ signature (checked
  /// at registration and by OperatorHandle::typed) or the kernel is boxed.
  template <class Return, class... Args>
  Return call(const OperatorHandle& op, DispatchKeySet ks, Args... args) const;
  /// The unboxed call alone, for a caller that has tested isValidUnboxed()
  /// and keeps the boxing path elsewhere (fallback_filter.h).
  /// Precondition: isValidUnboxed(), and `Return(Args...)` is the kernel's
  /// C++ signature.
  template <class Return, class... Args>
  Return callUnboxed(DispatchKeySet ks, Args... args) const {
    using Fn = Return(OperatorKernel*, DispatchKeySet, Args...);
    return reinterpret_cast<Fn*>(unboxed_fn_)(functor_, ks,
                                              std::forward<Args>(args)...);
  }

 private:
  KernelFunction(OperatorKernel* functor, BoxedKernelFn boxed, void* unboxed)
      : functor_(functor), boxed_fn_(boxed), unboxed_fn_(unboxed) {}

  OperatorKernel* functor_ = nullptr;  // owned: one reference
  BoxedKernelFn boxed_fn_ = nullptr;
  void* unboxed_fn_ = nullptr;  // Return(*)(OperatorKernel*, DispatchKeySet, Args...)
};

// Implementation details.

inline KernelFunction::KernelFunction(const KernelFunction& other)
    : functor_(other.functor_),
      boxed_fn_(other.boxed_fn_),
      unboxed_fn_(other.unboxed_fn_) {
  if (functor_) functor_->incref();
}

inline KernelFunction::KernelFunction(KernelFunction&& other) noexcept
    : functor_(std::exchange(other.functor_, nullptr)),
      boxed_fn_(std::exchange(other.boxed_fn_, nullptr)),
      unboxed_fn_(std::exchange(other.unboxed_fn_, nullptr)) {}

inline KernelFunction& KernelFunction::operator=(const KernelFunction& other) {
  if (other.functor_) other.functor_->incref();
  if (functor_) functor_->decref();
  functor_ = other.functor_;
  boxed_fn_ = other.boxed_fn_;
  unboxed_fn_ = other.unboxed_fn_;
  return *this;
}

inline KernelFunction& KernelFunction::operator=(
    KernelFunction&& other) noexcept {
  if (this != &other) {
    if (functor_) functor_->decref();
    functor_ = std::exchange(other.functor_, nullptr);
    boxed_fn_ = std::exchange(other.boxed_fn_, nullptr);
    unboxed_fn_ = std::exchange(other.unboxed_fn_, nullptr);
  }
  return *this;
}

inline KernelFunction::~KernelFunction() {
  if (functor_) functor_->decref();
}

template <class F>
KernelFunction KernelFunction::makeFromBoxedFunctor(std::unique_ptr<F> functor) {
  static_assert(std::is_base_of_v<OperatorKernel, F>,
                "a boxed functor must derive from turnout::OperatorKernel");
  BoxedKernelFn boxed = [](OperatorKernel* f, const OperatorHandle& op,
                           DispatchKeySet ks, Stack* stack) {
    (*static_cast<F*>(f))(op, ks, stack);
  };
  return KernelFunction(functor.release(), boxed, nullptr);
}

template <class Functor>
KernelFunction KernelFunction::makeFromUnboxedFunctor(
    std::unique_ptr<Functor> functor) {
  static_assert(std::is_base_of_v<OperatorKernel, Functor>,
                "a kernel functor must derive from turnout::OperatorKernel");
  using Wrap = detail::WrapKernelFunctor<Functor>;
  return KernelFunction(functor.release(), &Wrap::boxedCall,
                        reinterpret_cast<void*>(&Wrap::unboxedCall));
}

template <auto FuncPtr>
KernelFunction KernelFunction::makeFromUnboxedFunction(
    CompileTimeFunctionPointer<FuncPtr>) {
  using Functor = detail::CompileTimeFunctionFunctor<FuncPtr>;
  return makeFromUnboxedFunctor(std::make_unique<Functor>());
}

template <class FuncType>
KernelFunction KernelFunction::makeFromUnboxedRuntimeFunction(FuncType* fn) {
  static_assert(std::is_function_v<FuncType>,
                "makeFromUnboxedRuntimeFunction takes a function pointer");
  using Functor = detail::RuntimeFunctionFunctor<FuncType>;
  return makeFromUnboxedFunctor(std::make_unique<Functor>(fn));
}

template <class Lambda>
KernelFunction KernelFunction::makeFromUnboxedLambda(Lambda&& lambda) {
  using Functor = detail::LambdaFunctor<std::decay_t<Lambda>>;
  return makeFromUnboxedFunctor(
      std::make_unique<Functor>(std::forward<Lambda>(lambda)));
}

template <class Return, class... Args>
inline Return KernelFunction::call(const OperatorHandle& op, DispatchKeySet ks,
                                   Args... args) const {
  if (__builtin_expect(unboxed_fn_ != nullptr, 1)) {
    // Not callUnboxed(): one more inlining level here made GCC stop inlining
    // call() into TypedOperatorHandle::call (+22 Ir per call, callgrind).
    using Fn = Return(OperatorKernel*, DispatchKeySet, Args...);
    return reinterpret_cast<Fn*>(unboxed_fn_)(functor_, ks,
                                              std::forward<Args>(args)...);
  }
  return detail::BoxedKernelWrapper<Return(Args...)>::call(
      boxed_fn_, functor_, op, ks, std::forward<Args>(args)...);
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_KERNEL_FUNCTION_H_

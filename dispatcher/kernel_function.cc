#include "dispatcher/kernel_function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

#include "dispatcher/cpp_signature.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/operator_handle.h"

namespace turnout {
namespace {

struct BoxedFunctionFunctor final : OperatorKernel {
  explicit BoxedFunctionFunctor(BoxedFunction fn) : fn(fn) {}
  BoxedFunction fn;
};
struct BoxedFunctionWithKeysFunctor final : OperatorKernel {
  explicit BoxedFunctionWithKeysFunctor(BoxedFunctionWithKeys fn) : fn(fn) {}
  BoxedFunctionWithKeys fn;
};

void fallthroughKernel(OperatorKernel*, const OperatorHandle& op,
                       DispatchKeySet ks, Stack*) {
  TURNOUT_INTERNAL_ASSERT(false, "a fallthrough kernel of ",
                          toString(op.operator_name()),
                          " was called directly with ", toString(ks),
                          "; the dispatcher should have skipped its key");
}

void ambiguousAutogradOtherKernel(OperatorKernel*, const OperatorHandle& op,
                                  DispatchKeySet ks, Stack*) {
  TURNOUT_CHECK(
      false, ErrorKind::NotImplemented, toString(op.operator_name()),
      " has kernels registered to both CompositeImplicitAutograd and a "
      "backend mapped to AutogradOther (", toString(ks),
      "). This makes the backend kernel unreachable: the dispatcher would "
      "run the CompositeImplicitAutograd kernel for AutogradOther first. To "
      "fix it, register the backend kernel under CompositeExplicitAutograd "
      "instead, or register an autograd kernel for AutogradOther.");
}

void missingKernel(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks,
                   Stack*) {
  std::optional<Error> error;
  {
    std::lock_guard<std::mutex> lock(Dispatcher::singleton().registryMutex());
    error = op.entry()->missingKernelError(ks.highestPriorityTypeId(), ks);
  }
  throw *std::move(error);
}

}  // namespace

KernelFunction KernelFunction::makeFromBoxedFunction(BoxedFunction fn) {
  TURNOUT_CHECK(fn != nullptr, ErrorKind::InvalidArgument,
                "makeFromBoxedFunction: the function pointer is null");
  BoxedKernelFn boxed = [](OperatorKernel* f, const OperatorHandle& op,
                           DispatchKeySet, Stack* stack) {
    static_cast<BoxedFunctionFunctor*>(f)->fn(op, stack);
  };
  return KernelFunction(new BoxedFunctionFunctor(fn), boxed, nullptr);
}

KernelFunction KernelFunction::makeFromBoxedFunction(BoxedFunctionWithKeys fn) {
  TURNOUT_CHECK(fn != nullptr, ErrorKind::InvalidArgument,
                "makeFromBoxedFunction: the function pointer is null");
  BoxedKernelFn boxed = [](OperatorKernel* f, const OperatorHandle& op,
                           DispatchKeySet ks, Stack* stack) {
    static_cast<BoxedFunctionWithKeysFunctor*>(f)->fn(op, ks, stack);
  };
  return KernelFunction(new BoxedFunctionWithKeysFunctor(fn), boxed, nullptr);
}

KernelFunction KernelFunction::makeFallthrough() {
  return KernelFunction(nullptr, &fallthroughKernel, nullptr);
}

KernelFunction KernelFunction::makeAmbiguousAutogradOther() {
  return KernelFunction(nullptr, &ambiguousAutogradOtherKernel, nullptr);
}

KernelFunction KernelFunction::makeMissing() {
  return KernelFunction(nullptr, &missingKernel, nullptr);
}

bool KernelFunction::isValid() const {
  return boxed_fn_ != nullptr && boxed_fn_ != &missingKernel;
}

bool KernelFunction::isFallthrough() const {
  return boxed_fn_ == &fallthroughKernel;
}

bool KernelFunction::isAmbiguousAutogradOther() const {
  return boxed_fn_ == &ambiguousAutogradOtherKernel;
}

std::string CppSignature::name() const {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(type_.name(), nullptr, nullptr, &status), std::free);
  return status == 0 ? std::string(demangled.get()) : std::string(type_.name());
}

namespace detail {

void checkBoxedReturnCount(const OperatorHandle& op, size_t expected,
                           size_t found) {
  TURNOUT_CHECK(found == expected, ErrorKind::Type, "the boxed kernel of ",
                toString(op.operator_name()), " left ", found,
                " values on the stack, but the typed caller expects ",
                expected, " return values");
}

void throwStackTooShort(const OperatorHandle& op, size_t needed, size_t found) {
  throwError(ErrorKind::InvalidArgument,
             joinParts("calling ", toString(op.operator_name()),
                       " boxed: the kernel takes ", needed,
                       " arguments but the stack holds only ", found));
}

std::vector<std::optional<Tensor>> ivalueToOptionalTensorList(const IValue& v) {
  std::vector<std::optional<Tensor>> out;
  if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorListRef()) {
      out.emplace_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
    }
    return out;
  }
  TURNOUT_CHECK(v.isGenericList(), ErrorKind::Type,
                "expected a list of optional tensors (Tensor?[]), got ",
                v.tagKind());
  const std::vector<IValue>& elements = v.toListRef();
  out.reserve(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    const IValue& e = elements[i];
    if (e.isNone()) {
      out.emplace_back(std::nullopt);
      continue;
    }
    TURNOUT_CHECK(e.isTensor(), ErrorKind::Type,
                  "expected a list of optional tensors (Tensor?[]), got ",
                  e.tagKind(), " at position ", i);
    out.emplace_back(e.toTensor().defined() ? std::optional<Tensor>(e.toTensor())
                                            : std::nullopt);
  }
  return out;
}

}  // namespace detail
}  // namespace turnout

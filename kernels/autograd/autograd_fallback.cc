#include "kernels/autograd/autograd_fallback.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/fallback_filter.h"
#include "dispatcher/kernel_function.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"

namespace turnout {
namespace autograd {
namespace {

std::atomic<AutogradFallbackMode> g_mode{AutogradFallbackMode::Warn};

// What a call keeps of its key set below the autograd keys.
constexpr DispatchKeySet kAfterAutograd(DispatchKeySet::FULL_AFTER,
                                        DispatchKey::AutogradOther);

struct WarnState {
  std::mutex mu;
  std::unordered_set<std::string> warned;  // operator names
  AutogradFallbackWarningHandler handler;
};
WarnState& warnState() {
  static WarnState* const state = new WarnState();  // used at exit too
  return *state;
}

bool anyRequiresGrad(const IValue& v) {
  if (v.isTensor()) return requiresGrad(v.toTensor());
  if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorListRef()) {
      if (requiresGrad(t)) return true;
    }
  }
  return false;
}

bool anyFloatingTensor(const IValue& v) {
  auto floating = [](const Tensor& t) {
    return t.defined() && isFloatingType(t.scalar_type());
  };
  if (v.isTensor()) return floating(v.toTensor());
  if (v.isTensorList()) {
    for (const Tensor& t : v.toTensorListRef()) {
      if (floating(t)) return true;
    }
  }
  return false;
}

std::string message(const OperatorName& name) {
  const std::string op = toString(name);
  const std::string ns = name.name.substr(0, name.name.find("::"));
  std::string short_name = name.name.substr(name.name.find("::") + 2);
  if (!name.overload_name.empty()) short_name += "." + name.overload_name;
  return op +
         " has no autograd kernel, but was called with a Tensor that "
         "requires grad: its outputs get no grad_fn, so backward() will not "
         "reach those inputs (it fails with \"element 0 of tensors does not "
         "require grad\", or leaves their .grad unset). If the operator is "
         "differentiable, register an autograd kernel for it: in Python "
         "register_autograd (turnout.library, or the method of a custom_op), "
         "or Library.impl(\"" +
         short_name +
         "\", fn, \"Autograd\") with fn calling a turnout.autograd.Function; "
         "in C++ m.impl(\"" +
         short_name +
         "\", kernel) in a "
         "TURNOUT_LIBRARY_IMPL(" +
         ns +
         ", Autograd, m) block, the kernel calling "
         "autograd::Function<T>::apply "
         "(kernels/autograd/custom_function.h). If it is not differentiable, "
         "register a fallthrough for it at Autograd: Library.impl(\"" +
         short_name +
         "\", turnout.library.fallthrough_kernel, \"Autograd\"), or "
         "m.impl(\"" +
         short_name +
         "\", CppFunction::makeFallthrough()). (This warning is given once "
         "per operator.)";
}

void warnOnce(const OperatorHandle& op) {
  WarnState& state = warnState();
  AutogradFallbackWarningHandler handler;
  const std::string name = toString(op.operator_name());
  {
    std::lock_guard<std::mutex> lock(state.mu);
    if (!state.warned.insert(name).second) return;
    handler = state.handler;
  }
  // Outside the lock: a handler may take the GIL, or throw (a Python
  // warning filter set to "error").
  const std::string text = message(op.operator_name());
  if (handler) {
    handler(text);
  } else {
    warn(text);
  }
}

bool isOutOperator(const FunctionSchema& schema) {
  for (const Argument& a : schema.arguments()) {
    if (a.is_out()) return true;
  }
  return false;
}

// The overload of `out_op`'s name whose arguments are out_op's without its
// out= arguments (add.out -> add.Tensor, sort.values -> sort), if any.
std::optional<OperatorHandle> functionalOf(const OperatorHandle& out_op) {
  const FunctionSchema& s = out_op.schema();
  std::vector<Argument> inputs;
  for (const Argument& a : s.arguments()) {
    if (!a.is_out()) inputs.push_back(a);
  }
  const Dispatcher& d = Dispatcher::singleton();
  for (const OperatorName& name : d.getAllOpNames()) {
    if (name.name != s.name() || name == out_op.operator_name()) continue;
    std::optional<OperatorHandle> op = d.findSchema(name);
    if (op && op->schema().arguments() == inputs &&
        op->schema().returns().size() == s.returns().size()) {
      return op;
    }
  }
  return std::nullopt;
}

// Whether calls of `op` with arguments that require grad are refused, as
// torch refuses them: an out= overload records no autograd, so the out=
// form of a differentiable operator would silently cut the graph. Those of
// operators that are not differentiable (their functional overload falls
// through at Autograd: nonzero.out, argmax.out) run, and so do the out=
// overloads torch generates from a functional one (tagged "generated":
// sum.out, relu.out), which torch 1.13 runs too.
bool refusesGrad(const OperatorHandle& op) {
  if (!isOutOperator(op.schema()) || op.hasTag("generated")) return false;
  // torch 1.13 runs these too, though their functional overloads are
  // differentiable (found by test_op_db_torch.py's out= samples).
  static constexpr std::string_view kRunInTorch[] = {
      "aten::adaptive_avg_pool2d.out", "aten::floor_divide.out",
      "aten::log_softmax.int_out", "aten::silu_backward.grad_input",
      "aten::softmax.int_out"};
  const std::string name = toString(op.operator_name());
  for (std::string_view n : kRunInTorch) {
    if (name == n) return false;
  }
  std::optional<OperatorHandle> functional = functionalOf(op);
  return functional &&
         !functional->isKernelFallthroughKernel(DispatchKey::AutogradCPU);
}

// Throws NotImplemented (Python: NotImplementedError, a RuntimeError) for a
// call of the out= overload `name` that refusesGrad.
[[noreturn]] void refuseOutCallWithGrad(const OperatorName& name) {
  const std::string functional = name.name.substr(name.name.find("::") + 2);
  ::turnout::detail::throwError(
      ErrorKind::NotImplemented,
      toString(name) +
          ": an out= call records no autograd, and one of its "
          "arguments (an input or out) requires grad, so its result "
          "could not be differentiated. Call " +
          functional +
          " without out= to get a result that records the graph, or "
          "make the call under turnout.no_grad() (C++: NoGradGuard), "
          "or pass detached tensors.");
}

// The boxed fallback at every autograd key. The call goes on below autograd
// in every case. Its filter sends it only calls in grad mode with an input
// that requires grad; a direct boxed call (callBoxedForDispatchKey, the
// prototype table of an operator with no kernel) may still bring others,
// hence the same test here.
void autogradFallback(const OperatorHandle& op, DispatchKeySet ks,
                      Stack* stack) {
  bool check = false;
  if (GradMode::is_enabled()) {
    const size_t n = op.schema().arguments().size();
    TURNOUT_INTERNAL_ASSERT(stack->size() >= n, "the stack holds ",
                            stack->size(), " values for the ", n,
                            " arguments of ", toString(op.operator_name()));
    for (size_t i = stack->size() - n; i < stack->size() && !check; ++i) {
      check = anyRequiresGrad((*stack)[i]);
    }
  }
  if (check && refusesGrad(op)) refuseOutCallWithGrad(op.operator_name());
  op.redispatchBoxed(ks & kAfterAutograd, stack);
  if (!check) return;
  const size_t r = op.schema().returns().size();
  bool floating = false;
  for (size_t i = stack->size() - std::min(r, stack->size());
       i < stack->size() && !floating; ++i) {
    floating = anyFloatingTensor((*stack)[i]);
  }
  if (floating) warnOnce(op);
}

}  // namespace

void setAutogradFallbackMode(AutogradFallbackMode mode) {
  Dispatcher& d = Dispatcher::singleton();
  if (mode == AutogradFallbackMode::Nothing) {
    d.setFrameworkFallback(DispatchKey::Autograd, KernelFunction(), "");
  } else {
    // Only a call in grad mode with an input that requires grad can warn:
    // every other call passes the autograd keys unboxed, as the fallback
    // itself would (fallback_filter.h).
    FallbackFilter filter;
    filter.selects = &requiresGrad;
    filter.active = &GradMode::is_enabled;
    filter.pass_through = kAfterAutograd;
    d.setFrameworkFallback(
        DispatchKey::Autograd,
        KernelFunction::makeFromBoxedFunction(&autogradFallback),
        "autograd fallback (warns: no autograd kernel) registered in turnout "
        "framework (kernels/autograd/autograd_fallback.cc)",
        filter);
  }
  g_mode.store(mode, std::memory_order_relaxed);
}

AutogradFallbackMode autogradFallbackMode() {
  return g_mode.load(std::memory_order_relaxed);
}

AutogradFallbackWarningHandler setAutogradFallbackWarningHandler(
    AutogradFallbackWarningHandler handler) {
  WarnState& state = warnState();
  std::lock_guard<std::mutex> lock(state.mu);
  std::swap(state.handler, handler);
  return handler;
}

void resetAutogradFallbackWarnings() {
  WarnState& state = warnState();
  std::lock_guard<std::mutex> lock(state.mu);
  state.warned.clear();
}

namespace {

// The default mode, set when the runtime is loaded: Warn (torch 2.x's),
// unless TURNOUT_AUTOGRAD_FALLBACK_MODE=nothing (or warn) in the environment
// says otherwise. Warn costs a call of an operator without an autograd
// kernel a grad-mode test and a requires_grad test per tensor argument, no
// allocation (its filter: bench/README.md, "The autograd fallback"). An
// unknown value is reported (turnout::warn) and ignored.
AutogradFallbackMode defaultMode() {
  const char* env = std::getenv("TURNOUT_AUTOGRAD_FALLBACK_MODE");
  if (env == nullptr || *env == '\0') return AutogradFallbackMode::Warn;
  const std::string value(env);
  if (value == "nothing") return AutogradFallbackMode::Nothing;
  if (value != "warn") {
    warn("TURNOUT_AUTOGRAD_FALLBACK_MODE=" + value +
         " is neither \"warn\" nor \"nothing\"; using \"warn\"");
  }
  return AutogradFallbackMode::Warn;
}

// Registered by this file's static initialization (the library is
// alwayslink), before any user code can call an operator.
[[maybe_unused]] const bool kDefaultModeSet = [] {
  setAutogradFallbackMode(defaultMode());
  return true;
}();

}  // namespace

}  // namespace autograd
}  // namespace turnout

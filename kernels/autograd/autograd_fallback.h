// What a call does at the autograd keys when its operator has no autograd
// kernel (neither Autograd, CompositeImplicitAutograd, nor a fallthrough
// that declares it non-differentiable), as torch 2.x's autograd fallback.
//
//   autograd::setAutogradFallbackMode(autograd::AutogradFallbackMode::Warn);
//
// Warn (the default, torch 2.x's): when grad mode is on, a Tensor argument
// requires grad and an output is a floating-point Tensor, the first such
// call of each operator warns that its outputs get no grad_fn, naming the
// operator and the fix; the call then goes on below autograd. Without this,
// the mistake shows only later, as backward()'s "element 0 of tensors does
// not require grad". Nothing: the autograd keys fall through (no call at
// all), as in torch 1.13, whose tables the table-comparison tests pin
// (tests/python/torch113_tables.py). In Warn mode the fallback also
// refuses, as torch does, a call in grad mode of an out= overload of a
// differentiable operator with an argument that requires grad (it would
// record no graph). TURNOUT_AUTOGRAD_FALLBACK_MODE=nothing
// (or warn) in the environment, read once when the runtime is loaded,
// chooses the default.
//
// The cost is paid by operators without an autograd kernel only; operators
// with one never reach the fallback. The fallback is boxed, but filtered
// (dispatcher/fallback_filter.h): a call out of grad mode, or with no input
// that requires grad, tests that and goes on below autograd, unboxed if it
// was, with no allocation and no lock (a few instructions over Nothing:
// bench/README.md, "The autograd fallback"); only the calls that may warn
// are boxed.
//
// Thread safety: the mode and the handler may be set from any thread;
// setting the mode rebuilds the dispatch tables (a registration).
#ifndef TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_FALLBACK_H_
#define TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_FALLBACK_H_

#include <functional>
#include <string>

namespace turnout {
namespace autograd {

enum class AutogradFallbackMode { Nothing, Warn };

void setAutogradFallbackMode(AutogradFallbackMode mode);
AutogradFallbackMode autogradFallbackMode();

/// Receives the fallback's warnings; an empty handler restores the default
/// (turnout::warn). turnout._C installs one that raises a Python
/// UserWarning. Returns the previous handler.
using AutogradFallbackWarningHandler = std::function<void(const std::string&)>;
AutogradFallbackWarningHandler setAutogradFallbackWarningHandler(
    AutogradFallbackWarningHandler handler);

/// Forgets which operators have warned (tests).
void resetAutogradFallbackWarnings();

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_AUTOGRAD_FALLBACK_H_

// The tracer: runs a function once on example inputs and records every
// operator it calls into a Graph that the interpreter (or the graph
// executor) runs with the same results.
//
//   std::unique_ptr<Graph> g = trace(
//       [](const std::vector<IValue>& in) -> std::vector<IValue> {
//         Tensor x = in[0].toTensor();
//         return {relu(add(x, zeros({2})))};
//       },
//       {IValue(example)});
//   // graph(%0 : Tensor):
//   //   %1 : int[] = prim::Constant[value=[2]]()
//   //   %2 : NoneType = prim::Constant()          (and %3, %4, %5)
//   //   %6 : Tensor = aten::zeros(%1, %2, %3, %4, %5)
//   //   %7 : int = prim::Constant[value=1]()
//   //   %8 : Tensor = aten::add.Tensor(%0, %6, %7)
//   //   %9 : Tensor = aten::relu(%8)
//   //   return (%9)
//
// How: while `fn` runs, the thread includes the Tracer dispatch key, whose
// boxed backend fallback records each call -- its tensor inputs as the
// Values that produced them, every other argument as a prim::Constant, its
// outputs as new Values -- then redispatches to the keys below Tracer with
// Tracer excluded, so that the operators a composite kernel calls in turn
// are not recorded: only the outermost call is. Factories (no tensor
// inputs) are recorded like any other call. A tensor the trace never saw
// produced (captured from outside `fn`) becomes a tensor constant.
//
// Nodes print with their overload ("aten::add.Tensor") so that the text
// parses back to the same operators. Output types are the schema's return
// types (Tensor unrefined).
//
// What is not recorded: control flow (the trace follows the branch the
// example took), values computed outside operators (a Python int, a
// tensor's size read in C++) which are frozen as constants, and work
// forked to other threads, which fails clearly rather than go missing.
//
// Thread safety: tracing state is per thread; many threads may trace at
// once. trace() does not nest on one thread.
#ifndef TURNOUT_JIT_TRACER_TRACER_H_
#define TURNOUT_JIT_TRACER_TRACER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// The traced function: example inputs in, outputs out.
using TracedFunction =
    std::function<std::vector<IValue>(const std::vector<IValue>&)>;

struct TraceOptions {
  /// Names of the graph's inputs ("x", "y"); empty for numbered names.
  /// When given, one per example input.
  std::vector<std::string> input_names;
};

/// Runs `fn(example_inputs)` with tracing on and returns the graph of what
/// it did: one input per example input (each must be a distinct, defined
/// Tensor) and one output per value `fn` returned (tensors, lists and
/// tuples of them, or constants). Throws Error(InvalidArgument) for bad
/// example inputs, for a call to trace() while already tracing on this
/// thread, and for an argument or output a graph cannot hold; an exception
/// from `fn` propagates unchanged. On every path the thread-local dispatch
/// state is restored.
std::unique_ptr<Graph> trace(const TracedFunction& fn,
                             const std::vector<IValue>& example_inputs,
                             const TraceOptions& options = {});

/// True while the calling thread runs a function under trace().
bool isTracing();

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_TRACER_TRACER_H_

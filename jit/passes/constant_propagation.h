// Constant propagation: runs each node whose inputs are all constants once,
// at optimisation time, through the dispatcher, and replaces its outputs by
// prim::Constant nodes holding the results.
//
//   %a : int = prim::Constant[value=2]()
//   %b : int = aten::mul(%a, %a)              -> %b : int = prim::Constant[value=4]()
//   %t : Tensor = aten::ones(%sizes, ...)     -> a tensor constant
//
// Folded: pure nodes (side_effects.h) -- operators that neither write to an
// input nor draw random numbers, and prim::ListConstruct of ints or floats,
// prim::TupleUnpack / prim::ListUnpack of a constant -- whose results can be
// constants (None, bool, int, float, str, Device, Tensor, int[], float[]).
// A constant is one object shared by every run, so never folded: a node
// whose tensor output is a graph output (the caller would get the same
// tensor every time), a node with a tensor or list result in a graph where
// some node writes to an input (it could write to the constant), and a
// node whose kernel throws (the error is left for the run to report, with
// its source location).
//
// Operators run with the default thread-local dispatch state (no tracer, no
// Python mode, no autocast), whatever the caller's is.
//
// Thread safety: changes the graph; the caller owns it. Calls operators.
#ifndef TURNOUT_JIT_PASSES_CONSTANT_PROPAGATION_H_
#define TURNOUT_JIT_PASSES_CONSTANT_PROPAGATION_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Folds constant nodes in every block of `graph`, first to last, so that
/// folded results feed later nodes, and removes the folded nodes. Constants
/// whose users all went stay for eliminateDeadCode(). Returns true when it
/// changed the graph.
bool propagateConstants(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_CONSTANT_PROPAGATION_H_

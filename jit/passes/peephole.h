// Peephole simplifications: local rewrites that need no more than a node,
// its inputs' constants and the refined types the shape propagation (or
// the graph's author) wrote.
//
//   %y : Tensor = aten::add(%x, %zero, %one)   -> uses of %y use %x
//       (x + 0, x - 0, x * 1, x / 1: Scalar overloads, or a 0-dim tensor
//        constant of a dtype that does not promote x's)
//   %a = aten::t(%x); %b = aten::t(%a)         -> uses of %b use %x
//   %d : int = aten::dim(%x)                   -> a constant, when x's rank
//                                                 is known
//   %s : int[] = aten::size(%x)                -> a constant, when every
//                                                 size is known
//   %s : int = aten::size(%x, %i)              -> a constant, likewise
//
// An arithmetic identity is applied only when the dtype of x is known and
// the result's would be the same (x + 0 on a Bool tensor is Long; x / 1 on
// an integer tensor is Float), and alpha is a constant 1. `x + 0` keeps a
// -0.0 that eager execution would turn into +0.0; -0.0 == 0.0, as
// TorchScript's peephole pass also accepts. The rewrites that make one
// value stand for another (all but the constants) change aliasing, so
// they are skipped in a graph where some node writes to an input.
//
// Thread safety: changes the graph; the caller owns it.
#ifndef TURNOUT_JIT_PASSES_PEEPHOLE_H_
#define TURNOUT_JIT_PASSES_PEEPHOLE_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Applies the rewrites above in every block of `graph` and removes the
/// nodes they leave without uses. Returns true when it changed the graph.
bool peepholeOptimize(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_PEEPHOLE_H_

// Inlining of constant branches: a prim::If whose condition is a constant
// is replaced by the nodes of the branch it would take.
//
//   %c : bool = prim::Constant[value=1]()
//   %r : Tensor = prim::If(%c)
//     block0():
//       %y : Tensor = aten::neg(%x)
//       -> (%y)
//     block1():
//       -> (%x)
//   -> %y : Tensor = aten::neg(%x), and uses of %r use %y.
//
// Also a prim::Loop whose body never runs (a constant false condition or a
// constant trip count <= 0): its outputs are its initial carried values.
//
// Thread safety: changes the graph; the caller owns it.
#ifndef TURNOUT_JIT_PASSES_INLINE_CONSTANT_BRANCHES_H_
#define TURNOUT_JIT_PASSES_INLINE_CONSTANT_BRANCHES_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Inlines every constant branch in `graph`, nested ones included. Returns
/// true when it changed the graph.
bool inlineConstantBranches(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_INLINE_CONSTANT_BRANCHES_H_

// Dead code elimination: removes the nodes whose outputs nobody uses and
// that have no side effects (side_effects.h), and the unused outputs of
// prim::If.
//
//   graph(%x : Tensor):
//     %1 : int = prim::Constant[value=1]()
//     %unused : Tensor = aten::mul(%x, %x)
//     %w : Tensor = aten::add_(%x, %x, %1)      # writes %x: kept
//     return (%x)
//   -> the aten::mul is gone; the aten::add_ and its constant stay.
//
// Graph inputs are never removed (they are the graph's signature), nor are
// prim::Loop's carried values.
//
// Thread safety: changes the graph; the caller owns it.
#ifndef TURNOUT_JIT_PASSES_DEAD_CODE_ELIMINATION_H_
#define TURNOUT_JIT_PASSES_DEAD_CODE_ELIMINATION_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Removes dead nodes in every block of `graph`. Returns true when it
/// changed the graph.
bool eliminateDeadCode(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_DEAD_CODE_ELIMINATION_H_

// Common subexpression elimination: a pure node (side_effects.h) that
// repeats an earlier one -- same kind, same operator, same inputs, same
// attributes -- is replaced by the earlier one's outputs.
//
//   %a : Tensor = aten::mul(%x, %y)
//   %b : Tensor = aten::mul(%x, %y)          -> uses of %b use %a
//   %c : Tensor = aten::add(%a, %b, %1)      -> aten::add(%a, %a, %1)
//
// A node in a nested block may reuse one from an enclosing block that comes
// before it, never the other way round. When some node of the graph writes
// to an input, tensors and lists may change between two equal-looking
// nodes: only nodes whose inputs and outputs are all immutable (int, float,
// bool, str, None, Device) are merged then.
//
// Thread safety: changes the graph; the caller owns it.
#ifndef TURNOUT_JIT_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_
#define TURNOUT_JIT_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Merges repeated pure nodes in every block of `graph` and removes the
/// repeats. Returns true when it changed the graph.
bool eliminateCommonSubexpressions(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_COMMON_SUBEXPRESSION_ELIMINATION_H_

// What the passes may assume about a node: whether it has effects beyond its
// outputs, whether it draws from a random generator, whether it is a pure
// function of its inputs. Every pass asks here, so that the passes agree.
//
//   for (Node* n : g.block()->nodes()) {
//     if (hasSideEffects(n)) continue;      // DCE keeps it
//     if (isPure(n)) { ... }                // CSE / constant propagation
//   }
//
// Facts come from the operator's schema (alias annotations) and how it was
// registered (AliasAnalysisKind):
//   - a schema argument written to ("Tensor(a!) self"), CONSERVATIVE
//     registration, no outputs, prim::RaiseException: side effects;
//   - the random-number operators (rand, randn, dropout, ...) and the
//     uninitialized-memory factories (empty, empty_like, empty_strided):
//     non-deterministic. A user operator that is non-deterministic should be
//     registered CONSERVATIVE, which keeps every pass off it;
//   - an unresolved node (parsed with allow_unresolved) and prim::CallFunction
//     (its callee may write to what it is given): side effects, not pure;
//     a fork with a Subgraph has the effects of its subgraph.
//
// Thread safety: reads the dispatcher's registry under its lock; the graph
// is the caller's.
#ifndef TURNOUT_JIT_PASSES_SIDE_EFFECTS_H_
#define TURNOUT_JIT_PASSES_SIDE_EFFECTS_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// True when the node writes to one of its inputs (an alias annotation with
/// '!' on the argument, or on the list's element).
bool writesToInputs(const Node* n);

/// True when the operator draws from a random generator or returns
/// uninitialized memory: two calls with the same inputs may differ.
bool isNondeterministic(const Node* n);

/// True when removing the node would change what the graph does even if no
/// output is used: it writes to an input, raises, has no outputs, was
/// registered CONSERVATIVE, is non-deterministic (removing a draw would
/// shift every later draw), is unresolved, or holds such a node in a block.
bool hasSideEffects(const Node* n);

/// True when the node's outputs depend on its input values only: a resolved
/// operator (or one of the list/tuple prims), not writing, deterministic,
/// registered FROM_SCHEMA or PURE_FUNCTION, with outputs and no blocks.
bool isPure(const Node* n);

/// True when some node of the graph (in any block) writes to an input.
bool graphHasWrites(const Graph& g);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_SIDE_EFFECTS_H_

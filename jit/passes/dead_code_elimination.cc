#include "jit/passes/dead_code_elimination.h"

#include "jit/passes/side_effects.h"

namespace turnout {
namespace jit {
namespace {

bool anyOutputUsed(const Node* n) {
  for (const Value* v : n->outputs()) {
    if (v->hasUses()) return true;
  }
  return false;
}

// Drops output i of a prim::If that nobody uses, with the matching output
// of each branch.
bool dropUnusedIfOutputs(Node* n) {
  // Only in the shape lint() requires (two blocks with an output per
  // output of the node); anything else is left alone.
  if (n->blocks().size() != 2) return false;
  for (const Block* b : n->blocks()) {
    if (b->outputs().size() != n->outputs().size()) return false;
  }
  bool changed = false;
  for (size_t i = n->outputs().size(); i-- > 0;) {
    if (n->outputs()[i]->hasUses()) continue;
    for (Block* b : n->blocks()) b->eraseOutput(i);
    n->eraseOutput(i);
    changed = true;
  }
  return changed;
}

bool eliminateInBlock(Block* b) {
  bool changed = false;
  // Last to first: removing a user first makes its inputs' nodes dead too.
  for (Node* n = b->returnNode()->prev(); n != b->paramNode();) {
    Node* prev = n->prev();
    if (n->is(prim::kIf) && dropUnusedIfOutputs(n)) changed = true;
    for (Block* sub : n->blocks()) {
      if (eliminateInBlock(sub)) changed = true;
    }
    const bool dead = !anyOutputUsed(n) && !hasSideEffects(n);
    if (dead) {
      n->destroy();
      changed = true;
    }
    n = prev;
  }
  return changed;
}

}  // namespace

bool eliminateDeadCode(Graph& graph) {
  checkBlockNesting(graph, "eliminateDeadCode()");
  return eliminateInBlock(graph.block());
}

}  // namespace jit
}  // namespace turnout

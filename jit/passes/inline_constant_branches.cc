#include "jit/passes/inline_constant_branches.h"

#include <optional>
#include <vector>

namespace turnout {
namespace jit {
namespace {

// Moves the nodes of `b` before `n` and returns b's outputs.
std::vector<Value*> hoistBlock(Block* b, Node* n) {
  while (!b->empty()) {
    Node* first = b->paramNode()->next();
    first->moveBefore(n);
  }
  return b->outputs();
}

bool inlineIf(Node* n) {
  std::optional<IValue> c = toIValue(n->input(0));
  if (!c || !c->isBool()) return false;
  Block* taken = n->blocks()[c->toBool() ? 0 : 1];
  std::vector<Value*> outs = hoistBlock(taken, n);
  for (size_t i = 0; i < outs.size(); ++i) {
    n->outputs()[i]->replaceAllUsesWith(outs[i]);
  }
  n->destroy();
  return true;
}

// prim::Loop(max_trip_count, cond, carried...): never runs when cond is a
// constant false or the trip count a constant <= 0.
bool removeLoopThatNeverRuns(Node* n) {
  std::optional<IValue> trips = toIValue(n->input(0));
  std::optional<IValue> cond = toIValue(n->input(1));
  const bool never = (cond && cond->isBool() && !cond->toBool()) ||
                     (trips && trips->isInt() && trips->toInt() <= 0);
  if (!never) return false;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    n->outputs()[i]->replaceAllUsesWith(n->input(i + 2));
  }
  n->destroy();
  return true;
}

bool inlineInBlock(Block* b) {
  bool changed = false;
  for (Node* n = b->paramNode()->next(); n != b->returnNode();) {
    Node* next = n->next();
    for (Block* sub : n->blocks()) {
      if (inlineInBlock(sub)) changed = true;
    }
    if (n->is(prim::kIf)) {
      // The hoisted nodes were visited with the branch above.
      if (inlineIf(n)) changed = true;
    } else if (n->is(prim::kLoop)) {
      if (removeLoopThatNeverRuns(n)) changed = true;
    }
    n = next;
  }
  return changed;
}

}  // namespace

bool inlineConstantBranches(Graph& graph) {
  return inlineInBlock(graph.block());
}

}  // namespace jit
}  // namespace turnout

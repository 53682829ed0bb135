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

// Whether `n` has the shape lint() requires of a prim::If / prim::Loop: the
// passes may see graphs that never went through it, and leave those alone.
bool isWellFormedIf(const Node* n) {
  if (n->inputs().size() != 1 || n->blocks().size() != 2) return false;
  for (const Block* b : n->blocks()) {
    if (!b->inputs().empty() || b->outputs().size() != n->outputs().size()) {
      return false;
    }
  }
  return true;
}

bool isWellFormedLoop(const Node* n) {
  if (n->inputs().size() < 2 || n->blocks().size() != 1) return false;
  const size_t carried = n->inputs().size() - 2;
  const Block* b = n->blocks()[0];
  return n->outputs().size() == carried && b->inputs().size() == carried + 1 &&
         b->outputs().size() == carried + 1;
}

bool inlineIf(Node* n) {
  if (!isWellFormedIf(n)) return false;
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
  if (!isWellFormedLoop(n)) return false;
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
  checkBlockNesting(graph, "inlineConstantBranches()");
  return inlineInBlock(graph.block());
}

}  // namespace jit
}  // namespace turnout

#include "jit/passes/inline.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatcher/core/error.h"
#include "jit/ir/compilation_unit.h"

namespace turnout {
namespace jit {
namespace {

void collectCalls(Block* b, std::vector<Node*>& calls) {
  for (Node* n : b->nodes()) {
    if (n->is(prim::kCallFunction)) calls.push_back(n);
    for (Block* sub : n->blocks()) collectCalls(sub, calls);
  }
}

// Checks that every call reachable from `g` resolves and that none recurses,
// before anything changes. `stack`: the functions being entered.
void checkCalls(const Graph& g, std::vector<const Graph*>& stack) {
  std::vector<Node*> calls;
  collectCalls(g.block(), calls);
  for (Node* call : calls) {
    std::shared_ptr<const Graph> callee = resolveCallee(call);
    if (std::find(stack.begin(), stack.end(), callee.get()) != stack.end()) {
      throw Error(ErrorKind::InvalidArgument,
                  "inlineCalls(): recursive calls cannot be inlined: function "
                  "'" + std::get<std::string>(call->inputs()[0]->node()->attribute("name")) +
                      "' calls itself\n  in: " + call->toString());
    }
    stack.push_back(callee.get());
    checkCalls(*callee, stack);
    stack.pop_back();
  }
}

void inlineCall(Graph& g, Node* call) {
  std::shared_ptr<const Graph> callee = resolveCallee(call);
  std::unordered_map<const Value*, Value*> env;
  for (size_t i = 0; i < callee->inputs().size(); ++i) {
    env[callee->inputs()[i]] = call->inputs()[i + 1];
  }
  // The callee's own Function constants are cloned too: they resolve in
  // the same unit, and the loop in inlineCalls inlines their calls.
  for (const Node* n : callee->block()->nodes()) {
    g.createClone(n, env)->insertBefore(call);
  }
  for (size_t i = 0; i < call->outputs().size(); ++i) {
    call->outputs()[i]->replaceAllUsesWith(env.at(callee->outputs()[i]));
  }
  Node* constant = call->inputs()[0]->node();
  call->destroy();
  if (!constant->output()->hasUses()) constant->destroy();
}

}  // namespace

bool inlineCalls(Graph& graph) {
  std::vector<const Graph*> stack{&graph};
  checkCalls(graph, stack);
  bool changed = false;
  for (;;) {
    std::vector<Node*> calls;
    collectCalls(graph.block(), calls);
    if (calls.empty()) break;
    for (Node* call : calls) inlineCall(graph, call);
    changed = true;
  }
  return changed;
}

}  // namespace jit
}  // namespace turnout

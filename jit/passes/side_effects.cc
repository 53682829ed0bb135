#include "jit/passes/side_effects.h"

#include <mutex>
#include <string_view>

#include "dispatcher/dispatcher.h"

namespace turnout {
namespace jit {
namespace {

bool isRandomOrUninitialized(std::string_view kind) {
  static constexpr std::string_view kKinds[] = {
      "aten::rand",         "aten::randn",          "aten::rand_like",
      "aten::randn_like",   "aten::randint",        "aten::randint_like",
      "aten::randperm",     "aten::bernoulli",      "aten::bernoulli_",
      "aten::dropout",      "aten::native_dropout", "aten::feature_dropout",
      "aten::alpha_dropout", "aten::normal",        "aten::normal_",
      "aten::uniform_",     "aten::multinomial",    "aten::poisson",
      "aten::rrelu",        "aten::random_",        "aten::exponential_",
      "aten::geometric_",   "aten::log_normal_",    "aten::cauchy_",
      "aten::empty",        "aten::empty_like",     "aten::empty_strided",
  };
  for (std::string_view k : kKinds) {
    if (k == kind) return true;
  }
  return false;
}

AliasAnalysisKind aliasAnalysisOf(const OperatorHandle& op) {
  // Written under the registry lock by registerSchema: read it under the
  // same lock.
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().registryMutex());
  return op.entry()->aliasAnalysis();
}

// The Subgraph of a fork printed as torch prints it, or null.
const Graph* subgraphOf(const Node* n) {
  if (!n->is(prim::kFork) || !n->hasAttribute(prim::kSubgraph)) return nullptr;
  const auto* g =
      std::get_if<std::shared_ptr<const Graph>>(&n->attribute(prim::kSubgraph));
  return g == nullptr ? nullptr : g->get();
}

bool blockHasSideEffects(const Block* b) {
  for (const Node* n : b->nodes()) {
    if (hasSideEffects(n)) return true;
  }
  return false;
}

}  // namespace

bool writesToInputs(const Node* n) {
  const FunctionSchema* s = n->maybeSchema();
  if (s == nullptr) return false;
  for (const Argument& a : s->arguments()) {
    if (a.isWrite()) return true;
  }
  return false;
}

bool isNondeterministic(const Node* n) {
  return isRandomOrUninitialized(n->kind());
}

bool hasSideEffects(const Node* n) {
  if (n->is(prim::kRaiseException)) return true;
  // prim::If and prim::Loop have the effects of what they hold.
  for (const Block* b : n->blocks()) {
    if (blockHasSideEffects(b)) return true;
  }
  // A call may do anything its callee does (append to a list it was
  // given, warn): kept, as an unresolved node is.
  if (n->is(prim::kCallFunction)) return true;
  // A fork printed as torch prints it holds its body in a subgraph.
  if (const Graph* sub = subgraphOf(n)) {
    if (blockHasSideEffects(sub->block())) return true;
  }
  if (isInterpreterPrim(n->kind())) return false;
  if (!n->op() || n->outputs().empty()) return true;
  if (writesToInputs(n) || isNondeterministic(n)) return true;
  return aliasAnalysisOf(*n->op()) == AliasAnalysisKind::CONSERVATIVE;
}

bool isPure(const Node* n) {
  if (n->outputs().empty() || !n->blocks().empty()) return false;
  if (n->is(prim::kConstant) || n->is(prim::kListConstruct) ||
      n->is(prim::kDictConstruct) || n->is(prim::kTupleConstruct) || n->is(prim::kListUnpack) ||
      n->is(prim::kTupleUnpack)) {
    return true;
  }
  if (isInterpreterPrim(n->kind()) || !n->op()) return false;
  if (writesToInputs(n) || isNondeterministic(n)) return false;
  return aliasAnalysisOf(*n->op()) != AliasAnalysisKind::CONSERVATIVE;
}

namespace {
bool blockHasWrites(const Block* b) {
  for (const Node* n : b->nodes()) {
    // An unresolved node, or a call (its callee), may write anything.
    if (writesToInputs(n) || (!n->op() && !isInterpreterPrim(n->kind())) ||
        n->is(prim::kCallFunction)) {
      return true;
    }
    if (const Graph* sub = subgraphOf(n)) {
      if (blockHasWrites(sub->block())) return true;
    }
    for (const Block* sub : n->blocks()) {
      if (blockHasWrites(sub)) return true;
    }
  }
  return false;
}
}  // namespace

bool graphHasWrites(const Graph& g) {
  checkBlockNesting(g, "graphHasWrites()");
  return blockHasWrites(g.block());
}

}  // namespace jit
}  // namespace turnout

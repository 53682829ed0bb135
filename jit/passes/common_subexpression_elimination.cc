#include "jit/passes/common_subexpression_elimination.h"

#include <cstdio>
#include <string>
#include <unordered_map>

#include "jit/ir/printer.h"
#include "jit/passes/side_effects.h"

namespace turnout {
namespace jit {
namespace {

bool isImmutable(const Type& t) {
  switch (t.kind()) {
    case SchemaType::Kind::Int:
    case SchemaType::Kind::Float:
    case SchemaType::Kind::Bool:
    case SchemaType::Kind::Str:
    case SchemaType::Kind::None:
    case SchemaType::Kind::Device:
      return true;
    default:
      return false;
  }
}

std::string attributeKey(const AttributeValue& a) {
  // Tensors compare by identity: two constants holding equal values stay
  // two (comparing data could be arbitrarily slow).
  if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(&a)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "<graph %p>",
                  static_cast<const void*>(g->get()));
    return buf;
  }
  if (const Tensor* t = std::get_if<Tensor>(&a)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "<%p>",
                  static_cast<const void*>(t->unsafeGetTensorImpl()));
    return buf;
  }
  // A double prints with enough digits to tell any two apart; the index
  // keeps int 1 and float 1. apart.
  return std::to_string(a.index()) + ":" + attributeToString(a);
}

// Everything that makes two nodes equal, as one string.
std::string keyOf(const Node* n) {
  std::string key = n->kind();
  if (n->op()) key += "|" + toString(n->op()->operator_name());
  for (const Value* v : n->inputs()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "|%p", static_cast<const void*>(v));
    key += buf;
  }
  for (const auto& [name, value] : n->attributes()) {
    key += "|" + name + "=" + attributeKey(value);
  }
  // Output types too: a constant 1 typed int differs from one typed bool.
  for (const Value* v : n->outputs()) key += "|" + v->type().toString();
  return key;
}

bool candidate(const Node* n, bool graph_writes) {
  if (!isPure(n)) return false;
  if (!graph_writes) return true;
  for (const Value* v : n->inputs()) {
    if (!isImmutable(v->type())) return false;
  }
  for (const Value* v : n->outputs()) {
    if (!isImmutable(v->type())) return false;
  }
  return true;
}

// `seen` holds the nodes of the enclosing blocks before this block's owner;
// each block works on its own copy so that nothing leaks out of it.
bool eliminateInBlock(Block* b, std::unordered_map<std::string, Node*> seen,
                      bool graph_writes) {
  bool changed = false;
  for (Node* n = b->paramNode()->next(); n != b->returnNode();) {
    Node* next = n->next();
    for (Block* sub : n->blocks()) {
      if (eliminateInBlock(sub, seen, graph_writes)) changed = true;
    }
    if (candidate(n, graph_writes)) {
      auto [it, inserted] = seen.emplace(keyOf(n), n);
      if (!inserted) {
        n->replaceAllUsesWith(it->second);
        n->destroy();
        changed = true;
      }
    }
    n = next;
  }
  return changed;
}

}  // namespace

bool eliminateCommonSubexpressions(Graph& graph) {
  checkBlockNesting(graph, "eliminateCommonSubexpressions()");
  return eliminateInBlock(graph.block(), {}, graphHasWrites(graph));
}

}  // namespace jit
}  // namespace turnout

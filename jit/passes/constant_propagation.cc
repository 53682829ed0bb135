#include "jit/passes/constant_propagation.h"

#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/stack.h"
#include "jit/passes/side_effects.h"

namespace turnout {
namespace jit {
namespace {

bool isGraphOutput(const Value* v) {
  const Node* ret = v->owningGraph()->block()->returnNode();
  for (const Use& u : v->uses()) {
    if (u.user == ret) return true;
  }
  return false;
}

// The values of a node's inputs, when every one is a constant.
std::optional<Stack> constantInputs(const Node* n) {
  Stack stack;
  stack.reserve(n->inputs().size());
  for (const Value* v : n->inputs()) {
    std::optional<IValue> c = toIValue(v);
    if (!c) return std::nullopt;
    stack.push_back(std::move(*c));
  }
  return stack;
}

// Runs `n` on `inputs`; nullopt when it cannot be evaluated here.
std::optional<Stack> evaluate(const Node* n, Stack inputs) {
  // The prims are folded only in the shape the interpreter runs them in
  // (the passes may see graphs that never went through lint()).
  if (n->is(prim::kListConstruct)) {
    if (n->outputs().size() != 1) return std::nullopt;
    const Type& t = n->output()->type();
    if (t.kind() != SchemaType::Kind::List) return std::nullopt;
    const SchemaType::Kind e = t.schemaType()->elementType()->kind();
    if (e == SchemaType::Kind::Int) {
      std::vector<int64_t> xs;
      for (const IValue& v : inputs) {
        if (!v.isInt()) return std::nullopt;
        xs.push_back(v.toInt());
      }
      return Stack{IValue(std::move(xs))};
    }
    if (e == SchemaType::Kind::Float) {
      std::vector<double> xs;
      for (const IValue& v : inputs) {
        if (!v.isDouble()) return std::nullopt;
        xs.push_back(v.toDouble());
      }
      return Stack{IValue(std::move(xs))};
    }
    return std::nullopt;
  }
  if (n->is(prim::kListUnpack) || n->is(prim::kTupleUnpack)) {
    if (inputs.size() != 1) return std::nullopt;
    const IValue& in = inputs[0];
    std::vector<IValue> elements;
    // As the interpreter: ListUnpack takes only a list, TupleUnpack only a
    // tuple.
    if (n->is(prim::kListUnpack) && in.isList()) {
      elements = in.toList();
    } else if (n->is(prim::kTupleUnpack) && in.isTuple()) {
      elements = in.toTupleRef().elements();
    } else {
      return std::nullopt;
    }
    if (elements.size() != n->outputs().size()) return std::nullopt;
    return Stack(elements.begin(), elements.end());
  }
  if (isInterpreterPrim(n->kind()) || !n->op()) return std::nullopt;
  // Evaluate as a plain eager call would, outside any tracer or mode.
  ForceDispatchKeyGuard clean(default_included_set, default_excluded_set);
  // A vararg operator reads its input count after its inputs, as the
  // interpreter pushes it (interpreter.h).
  if (n->op()->schema().is_vararg()) {
    inputs.push_back(IValue(static_cast<int64_t>(n->inputs().size())));
  }
  try {
    n->op()->callBoxed(inputs);
  } catch (const Error&) {
    return std::nullopt;  // the run reports it, with the node's location
  }
  if (inputs.size() != n->outputs().size()) return std::nullopt;
  return inputs;
}

bool canBeConstant(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
    case IValue::Tag::Bool:
    case IValue::Tag::Int:
    case IValue::Tag::Double:
    case IValue::Tag::String:
    case IValue::Tag::Device:
    case IValue::Tag::IntList:
    case IValue::Tag::DoubleList:
      return true;
    case IValue::Tag::Tensor:
      // Constants never require grad; a result that does is not one.
      return v.toTensor().defined() && !v.toTensor().requires_grad();
    default:
      return false;
  }
}

bool isImmutable(const IValue& v) {
  return !v.isTensor() && !v.isList();
}

bool foldNode(Node* n, bool graph_writes) {
  if (n->is(prim::kConstant) || !isPure(n)) return false;
  for (const Value* out : n->outputs()) {
    if (out->type().isTensor() && isGraphOutput(out)) return false;
  }
  std::optional<Stack> inputs = constantInputs(n);
  if (!inputs) return false;
  std::optional<Stack> results = evaluate(n, std::move(*inputs));
  if (!results) return false;
  for (const IValue& r : *results) {
    if (!canBeConstant(r)) return false;
    // A constant is one object shared by every run: something that writes
    // could change it.
    if (graph_writes && !isImmutable(r)) return false;
  }
  WithInsertPoint guard(n);
  for (size_t i = 0; i < results->size(); ++i) {
    Value* out = n->outputs()[i];
    Value* c = n->owningGraph()->insertConstant((*results)[i]);
    c->node()->setSourceLocation(n->sourceLocation());
    out->replaceAllUsesWith(c);
  }
  n->destroy();
  return true;
}

bool propagateInBlock(Block* b, bool graph_writes) {
  bool changed = false;
  for (Node* n = b->paramNode()->next(); n != b->returnNode();) {
    Node* next = n->next();
    for (Block* sub : n->blocks()) {
      if (propagateInBlock(sub, graph_writes)) changed = true;
    }
    if (foldNode(n, graph_writes)) changed = true;
    n = next;
  }
  return changed;
}

}  // namespace

bool propagateConstants(Graph& graph) {
  checkBlockNesting(graph, "propagateConstants()");
  return propagateInBlock(graph.block(), graphHasWrites(graph));
}

}  // namespace jit
}  // namespace turnout

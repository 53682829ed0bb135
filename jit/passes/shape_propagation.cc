#include "jit/passes/shape_propagation.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/stack.h"
#include "kernels/factory_utils.h"

namespace turnout {
namespace jit {
namespace {

constexpr int kMaxLoopRounds = 8;

// The facts about a tensor input that the outputs inherit.
struct InputFacts {
  bool all_sizes_known = true;
  bool any_tensor = false;
  bool devices_known = true;
  std::optional<Device> device;
  bool devices_agree = true;
  bool none_requires_grad = true;
};

void noteDevice(InputFacts& f, std::optional<Device> d) {
  f.any_tensor = true;
  if (!d) {
    f.devices_known = false;
  } else if (!f.device) {
    f.device = d;
  } else if (!(*f.device == *d)) {
    f.devices_agree = false;
  }
}

// A meta stand-in for a tensor value of type `t`; nullopt when its dtype
// or rank is unknown.
std::optional<Tensor> metaFor(const Type& t, InputFacts& f,
                              int64_t placeholder) {
  const TensorRefinement* r = t.refinement();
  if (r == nullptr || !r->dtype || !r->sizes) return std::nullopt;
  std::vector<int64_t> sizes;
  for (const auto& s : *r->sizes) {
    if (!s) f.all_sizes_known = false;
    sizes.push_back(s.value_or(placeholder));
  }
  std::vector<int64_t> strides;
  bool strides_known = r->strides && r->strides->size() == sizes.size();
  if (strides_known) {
    for (const auto& s : *r->strides) {
      if (!s) strides_known = false;
      strides.push_back(s.value_or(0));
    }
  }
  if (!strides_known || !f.all_sizes_known) {
    strides.assign(sizes.size(), 1);
    for (size_t i = sizes.size(); i-- > 1;) {
      strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
    }
  }
  noteDevice(f, r->device);
  if (!r->requires_grad.has_value() || *r->requires_grad) {
    f.none_requires_grad = false;
  }
  return emptyStridedTensor(sizes, strides, *r->dtype,
                            Device(DeviceType::Meta));
}

std::optional<Tensor> metaForConstant(const Tensor& t, InputFacts& f) {
  if (!t.defined()) return Tensor();
  noteDevice(f, t.device());
  return emptyStridedTensor(t.sizes(), t.strides(), t.scalar_type(),
                            Device(DeviceType::Meta));
}

// The argument a meta run of a node gets for input `v`.
std::optional<IValue> metaArgument(const Value* v, InputFacts& f,
                                   int64_t placeholder) {
  if (std::optional<IValue> c = toIValue(v)) {
    if (!c->isTensor()) return c;
    std::optional<Tensor> m = metaForConstant(c->toTensor(), f);
    if (!m) return std::nullopt;
    return IValue(std::move(*m));
  }
  if (v->type().isTensor()) {
    std::optional<Tensor> m = metaFor(v->type(), f, placeholder);
    if (!m) return std::nullopt;
    return IValue(std::move(*m));
  }
  const Node* def = v->node();
  if (def->is(prim::kListConstruct) &&
      v->type().kind() == SchemaType::Kind::List &&
      v->type().schemaType()->elementType()->kind() ==
          SchemaType::Kind::Tensor) {
    std::vector<Tensor> list;
    for (const Value* e : def->inputs()) {
      std::optional<IValue> m = metaArgument(e, f, placeholder);
      if (!m || !m->isTensor()) return std::nullopt;
      list.push_back(m->toTensor());
    }
    return IValue(std::move(list));
  }
  return std::nullopt;
}

bool setType(Value* v, Type t) {
  if (v->type() == t) return false;
  v->setType(std::move(t));
  return true;
}

// Runs `n`'s operator on meta stand-ins of its inputs (unknown sizes
// replaced by `placeholder`); nullopt when it cannot.
std::optional<Stack> runOnMeta(const Node* n, InputFacts& facts,
                               int64_t placeholder) {
  Stack stack;
  stack.reserve(n->inputs().size());
  for (const Value* v : n->inputs()) {
    std::optional<IValue> a = metaArgument(v, facts, placeholder);
    if (!a) return std::nullopt;
    stack.push_back(std::move(*a));
  }
  ForceDispatchKeyGuard clean(default_included_set, default_excluded_set);
  // A vararg operator reads its input count after its inputs (interpreter.h).
  if (n->op()->schema().is_vararg()) {
    stack.push_back(IValue(static_cast<int64_t>(n->inputs().size())));
  }
  try {
    n->op()->callBoxed(stack);
  } catch (const Error&) {
    return std::nullopt;  // keep the types; the run reports the error
  }
  return stack;
}

bool propagateNode(Node* n) {
  if (!n->op()) return false;
  bool any_tensor_output = false;
  for (const Value* out : n->outputs()) {
    if (out->type().isTensor()) any_tensor_output = true;
  }
  if (!any_tensor_output) return false;
  InputFacts facts;
  std::optional<Stack> results = runOnMeta(n, facts, 1);
  if (!results) return false;
  Stack& stack = *results;
  // With a size unknown, the stand-in sizes could show in any size of the
  // result: claim only a rank, and only when a second run with other
  // stand-ins gives the same one (squeeze, for one, would not).
  std::optional<Stack> again;
  if (!facts.all_sizes_known) {
    InputFacts ignored;
    again = runOnMeta(n, ignored, 7);
  }
  if (stack.size() != n->outputs().size()) return false;
  bool changed = false;
  for (size_t i = 0; i < stack.size(); ++i) {
    Value* out = n->outputs()[i];
    if (!out->type().isTensor() || !stack[i].isTensor()) continue;
    const Tensor& t = stack[i].toTensor();
    if (!t.defined()) continue;
    TensorRefinement r;
    r.dtype = t.scalar_type();
    if (facts.all_sizes_known) {
      r.sizes.emplace(t.sizes().begin(), t.sizes().end());
      r.strides.emplace(t.strides().begin(), t.strides().end());
    } else if (again && again->size() == stack.size() &&
               (*again)[i].isTensor() && (*again)[i].toTensor().defined() &&
               (*again)[i].toTensor().dim() == t.dim()) {
      r.sizes.emplace(static_cast<size_t>(t.dim()), std::nullopt);
    }
    if (facts.any_tensor && facts.devices_known && facts.devices_agree) {
      r.device = facts.device;
    }
    if (!isFloatingType(t.scalar_type()) || (facts.any_tensor && facts.none_requires_grad)) {
      r.requires_grad = false;
    }
    if (setType(out, Type::tensor(std::move(r)))) changed = true;
  }
  return changed;
}

bool propagateBlock(Block* b);

// The types of every value a block defines, nested blocks included.
void collectTypes(const Block* b, std::vector<Type>& out) {
  for (const Value* v : b->inputs()) out.push_back(v->type());
  for (const Node* n : b->nodes()) {
    for (const Value* v : n->outputs()) out.push_back(v->type());
    for (const Block* sub : n->blocks()) collectTypes(sub, out);
  }
}

bool eraseBlock(Block* b, bool erase_inputs) {
  bool changed = false;
  // Tensors lose their refinements, at the top and inside tuples.
  if (erase_inputs) {
    for (Value* v : b->inputs()) {
      changed = setType(v, v->type().unrefined()) || changed;
    }
  }
  for (Node* n : b->nodes()) {
    if (!n->is(prim::kConstant)) {
      for (Value* v : n->outputs()) {
        changed = setType(v, v->type().unrefined()) || changed;
      }
    }
    for (Block* sub : n->blocks()) changed = eraseBlock(sub, true) || changed;
  }
  return changed;
}

// A tuple of refined tensors keeps their refinements, as torch types a
// traced graph's returned tuple; unpacking it gives them back. Not inlined:
// propagateBlock recurses once per nested block.
[[gnu::noinline]] bool propagateTuple(Node* n) {
  bool changed = false;
  if (n->is(prim::kTupleConstruct) && n->outputs().size() == 1) {
    std::vector<Type> elements;
    for (const Value* v : n->inputs()) elements.push_back(v->type());
    Type t = Type::tuple(std::move(elements));
    if (*t.schemaType() == *n->output()->type().schemaType()) {
      changed = setType(n->output(), std::move(t));
    }
  } else if (n->is(prim::kTupleUnpack) && n->inputs().size() == 1) {
    std::vector<Type> elements = n->input(0)->type().containedTypes();
    if (elements.size() == n->outputs().size()) {
      for (size_t i = 0; i < elements.size(); ++i) {
        if (*elements[i].schemaType() ==
            *n->outputs()[i]->type().schemaType()) {
          changed = setType(n->outputs()[i], elements[i]) || changed;
        }
      }
    }
  }
  return changed;
}

bool propagateIf(Node* n) {
  // Left alone unless in the shape lint() requires.
  if (n->blocks().size() != 2 ||
      n->blocks()[0]->outputs().size() != n->outputs().size() ||
      n->blocks()[1]->outputs().size() != n->outputs().size()) {
    return false;
  }
  bool changed = false;
  for (Block* b : n->blocks()) changed = propagateBlock(b) || changed;
  for (size_t i = 0; i < n->outputs().size(); ++i) {
    Value* out = n->outputs()[i];
    if (!out->type().isTensor()) continue;
    Type t = mergeTypes(n->blocks()[0]->outputs()[i]->type(),
                        n->blocks()[1]->outputs()[i]->type());
    if (!t.isTensor()) continue;
    changed = setType(out, std::move(t)) || changed;
  }
  return changed;
}

// Body inputs: (counter, carried...); outputs: (cond, carried...); node
// inputs: (max trip count, cond, carried...).
bool propagateLoop(Node* n) {
  // Left alone unless in the shape lint() requires.
  if (n->blocks().size() != 1 || n->inputs().size() < 2 ||
      n->outputs().size() != n->inputs().size() - 2 ||
      n->blocks()[0]->inputs().size() != n->outputs().size() + 1 ||
      n->blocks()[0]->outputs().size() != n->outputs().size() + 1) {
    return false;
  }
  Block* body = n->blocks()[0];
  const size_t carried = n->outputs().size();
  std::vector<Type> types;
  for (size_t i = 0; i < carried; ++i) types.push_back(n->input(i + 2)->type());
  // The rounds below try types that may not last: compare the end with the
  // start to tell whether anything changed.
  std::vector<Type> before;
  collectTypes(body, before);
  for (const Value* v : n->outputs()) before.push_back(v->type());
  for (int round = 0;; ++round) {
    for (size_t i = 0; i < carried; ++i) {
      if (body->inputs()[i + 1]->type().isTensor()) {
        setType(body->inputs()[i + 1], types[i]);
      }
    }
    eraseBlock(body, false);
    propagateBlock(body);
    bool stable = true;
    for (size_t i = 0; i < carried; ++i) {
      if (!types[i].isTensor()) continue;
      Type merged = mergeTypes(types[i], body->outputs()[i + 1]->type());
      if (merged != types[i]) {
        stable = false;
        types[i] = std::move(merged);
      }
    }
    if (stable) break;
    if (round == kMaxLoopRounds) {
      // Did not settle: claim nothing about the carried tensors.
      for (Type& t : types) {
        if (t.isTensor()) t = Type();
      }
    }
  }
  for (size_t i = 0; i < carried; ++i) {
    if (n->outputs()[i]->type().isTensor() && types[i].isTensor()) {
      setType(n->outputs()[i], types[i]);
    }
  }
  std::vector<Type> after;
  collectTypes(body, after);
  for (const Value* v : n->outputs()) after.push_back(v->type());
  return before != after;
}

bool propagateBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodes()) {
    if (n->is(prim::kIf)) {
      changed = propagateIf(n) || changed;
    } else if (n->is(prim::kLoop)) {
      changed = propagateLoop(n) || changed;
    } else if (n->is(prim::kTupleConstruct) || n->is(prim::kTupleUnpack)) {
      changed = propagateTuple(n) || changed;
    } else if (!isInterpreterPrim(n->kind())) {
      changed = propagateNode(n) || changed;
    }
  }
  return changed;
}

}  // namespace

Type mergeTypes(const Type& a, const Type& b) {
  if (a == b) return a;
  if (!a.isTensor() || !b.isTensor()) return a.unrefined();
  const TensorRefinement* ra = a.refinement();
  const TensorRefinement* rb = b.refinement();
  if (ra == nullptr || rb == nullptr) return Type();
  TensorRefinement r;
  if (ra->dtype == rb->dtype) r.dtype = ra->dtype;
  if (ra->requires_grad == rb->requires_grad) {
    r.requires_grad = ra->requires_grad;
  }
  if (ra->device && rb->device && *ra->device == *rb->device) {
    r.device = ra->device;
  }
  auto mergeDims = [](const auto& x, const auto& y, auto& out) {
    if (!x || !y || x->size() != y->size()) return;
    out.emplace();
    for (size_t i = 0; i < x->size(); ++i) {
      out->push_back((*x)[i] == (*y)[i] ? (*x)[i] : std::nullopt);
    }
  };
  mergeDims(ra->sizes, rb->sizes, r.sizes);
  mergeDims(ra->strides, rb->strides, r.strides);
  if (!r.dtype && !r.sizes && !r.strides && !r.requires_grad && !r.device) {
    return Type();
  }
  return Type::tensor(std::move(r));
}

bool propagateShapes(Graph& graph) {
  checkBlockNesting(graph, "propagateShapes()");
  return propagateBlock(graph.block());
}

bool eraseShapeInformation(Graph& graph) {
  checkBlockNesting(graph, "eraseShapeInformation()");
  return eraseBlock(graph.block(), false);
}

}  // namespace jit
}  // namespace turnout

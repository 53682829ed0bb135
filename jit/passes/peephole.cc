#include "jit/passes/peephole.h"

#include <optional>
#include <string>
#include <vector>

#include "jit/passes/side_effects.h"

namespace turnout {
namespace jit {
namespace {

// 0: bool, 1: integral, 2: floating, 3: complex -- the categories type
// promotion compares for a scalar-like operand.
int category(ScalarType t) {
  if (t == ScalarType::Bool) return 0;
  if (isIntegralType(t, /*include_bool=*/false)) return 1;
  if (isFloatingType(t)) return 2;
  return 3;
}

std::string overloadOf(const Node* n) {
  return n->op() ? n->op()->operator_name().overload_name : std::string();
}

std::optional<ScalarType> dtypeOf(const Value* v) {
  const TensorRefinement* r = v->type().refinement();
  if (r == nullptr) return std::nullopt;
  return r->dtype;
}

std::optional<int64_t> rankOf(const Value* v) {
  const TensorRefinement* r = v->type().refinement();
  if (r == nullptr || !r->sizes) return std::nullopt;
  return static_cast<int64_t>(r->sizes->size());
}

std::optional<std::vector<int64_t>> sizesOf(const Value* v) {
  const TensorRefinement* r = v->type().refinement();
  if (r == nullptr || !r->sizes) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& s : *r->sizes) {
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

bool isConstantOne(const Value* v) {
  std::optional<IValue> c = toIValue(v);
  return c && ((c->isInt() && c->toInt() == 1) ||
               (c->isDouble() && c->toDouble() == 1.0));
}

// True when `other` (a constant) equals `value` and combining x with it
// keeps x's dtype: a Scalar of a category x's covers, or a 0-dim tensor of
// such a category when x has at least one dimension.
bool isNeutralOperand(const Value* x, const Value* other, double value,
                      bool tensor_overload) {
  std::optional<ScalarType> xt = dtypeOf(x);
  if (!xt || *xt == ScalarType::Bool) return false;
  std::optional<IValue> c = toIValue(other);
  if (!c) return false;
  if (!tensor_overload) {
    if (c->isInt()) return c->toInt() == static_cast<int64_t>(value);
    if (c->isDouble()) {
      return c->toDouble() == value && category(*xt) >= 2;
    }
    return false;
  }
  if (!c->isTensor()) return false;
  const Tensor& t = c->toTensor();
  std::optional<int64_t> rank = rankOf(x);
  if (!rank || *rank == 0 || t.dim() != 0 || t.is_meta()) return false;
  if (category(t.scalar_type()) > category(*xt)) return false;
  return t.item().toDouble() == value;
}

// The value `n` computes when it is an identity on its first input.
Value* identityOf(const Node* n) {
  const std::string& k = n->kind();
  const std::string overload = overloadOf(n);
  const bool tensor = overload == "Tensor";
  const bool scalar = overload == "Scalar";
  if (!tensor && !scalar) {
    if (k == "aten::t") {
      if (n->inputs().size() != 1) return nullptr;
      const Node* inner = n->input(0)->node();
      if (!inner->is("aten::t") || inner->inputs().size() != 1) return nullptr;
      Value* x = inner->input(0);
      std::optional<int64_t> rank = rankOf(x);
      // t() refuses more than 2 dimensions: keep the error.
      return rank && *rank <= 2 ? x : nullptr;
    }
    return nullptr;
  }
  // Every form below reads inputs 0 and 1.
  if (n->inputs().size() < 2) return nullptr;
  Value* x = n->input(0);
  if (k == "aten::add" || k == "aten::sub") {
    if (n->inputs().size() != 3 || !isConstantOne(n->input(2))) return nullptr;
    return isNeutralOperand(x, n->input(1), 0.0, tensor) ? x : nullptr;
  }
  if (k == "aten::mul") {
    return isNeutralOperand(x, n->input(1), 1.0, tensor) ? x : nullptr;
  }
  if (k == "aten::div") {
    // True division: the result is floating whatever x is.
    std::optional<ScalarType> xt = dtypeOf(x);
    if (!xt || category(*xt) < 2) return nullptr;
    return isNeutralOperand(x, n->input(1), 1.0, tensor) ? x : nullptr;
  }
  return nullptr;
}

// The constant `n` computes from the known shape of its input, if any.
std::optional<IValue> shapeConstantOf(const Node* n) {
  if (n->outputs().size() != 1) return std::nullopt;
  const std::string& k = n->kind();
  if (k == "aten::dim" && n->inputs().size() == 1) {
    std::optional<int64_t> rank = rankOf(n->input(0));
    if (rank) return IValue(*rank);
  } else if (k == "aten::size" && n->inputs().size() == 1) {
    std::optional<std::vector<int64_t>> sizes = sizesOf(n->input(0));
    if (sizes) return IValue(std::move(*sizes));
  } else if (k == "aten::size" && n->inputs().size() == 2) {
    std::optional<std::vector<int64_t>> sizes = sizesOf(n->input(0));
    std::optional<IValue> d = toIValue(n->input(1));
    if (!sizes || !d || !d->isInt()) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(sizes->size());
    int64_t dim = d->toInt();
    if (dim < -rank || dim >= rank) return std::nullopt;  // the run reports it
    if (dim < 0) dim += rank;
    return IValue((*sizes)[static_cast<size_t>(dim)]);
  }
  return std::nullopt;
}

void removeIfUnused(Node* n) {
  for (const Value* v : n->outputs()) {
    if (v->hasUses()) return;
  }
  n->destroy();
}

bool peepholeBlock(Block* b, bool graph_writes) {
  bool changed = false;
  for (Node* n = b->paramNode()->next(); n != b->returnNode();) {
    Node* next = n->next();
    for (Block* sub : n->blocks()) {
      if (peepholeBlock(sub, graph_writes)) changed = true;
    }
    if (std::optional<IValue> c = shapeConstantOf(n)) {
      WithInsertPoint guard(n);
      Value* v = n->owningGraph()->insertConstant(*c);
      n->output()->replaceAllUsesWith(v);
      n->destroy();
      changed = true;
    } else if (!graph_writes && n->outputs().size() == 1) {
      if (Value* x = identityOf(n)) {
        Node* inner = n->is("aten::t") ? n->input(0)->node() : nullptr;
        n->output()->replaceAllUsesWith(x);
        n->destroy();
        if (inner != nullptr) removeIfUnused(inner);
        changed = true;
      }
    }
    n = next;
  }
  return changed;
}

}  // namespace

bool peepholeOptimize(Graph& graph) {
  checkBlockNesting(graph, "peepholeOptimize()");
  return peepholeBlock(graph.block(), graphHasWrites(graph));
}

}  // namespace jit
}  // namespace turnout

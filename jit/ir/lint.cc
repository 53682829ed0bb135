// Graph::lint(): checks the invariants listed in ir.h, and that every value
// is used as its user expects (types and operand counts).
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dispatcher/core/error.h"
#include "jit/ir/ir.h"

namespace turnout {
namespace jit {
namespace {

class Linter {
 public:
  Linter(const Graph& g, const std::unordered_set<Node*>& nodes,
         const std::unordered_set<Value*>& values,
         const std::unordered_map<std::string, Value*>& names)
      : g_(g), nodes_(nodes), values_(values), names_(names) {}

  void run() {
    // First, so that the recursion below stays shallow.
    checkBlockNesting(g_, "Graph::lint()");
    checkBlock(g_.block(), nullptr);
    checkUseCounts();
    checkNames();
  }

 private:
  [[noreturn]] void fail(const std::string& what, const Node* n) {
    std::string where;
    if (n != nullptr) where = "\n  at: " + n->toString();
    throw Error(ErrorKind::Internal, "Graph::lint(): " + what + where);
  }

  // A mistake in what the graph says (types, operand counts), as opposed to
  // a broken invariant of the data structure: the user's to fix.
  [[noreturn]] void failUse(const std::string& what, const Node* n) {
    throw Error(ErrorKind::InvalidArgument,
                "Graph::lint(): " + what + "\n  at: " + n->toString());
  }

  static std::string describe(const Value* v) {
    return "%" + v->debugName() + " : " + v->type().toString();
  }

  // Whether a value of type `actual` may be passed where `formal` is
  // expected (ir/type.h's matchScore: refinements, T for T?, numbers for
  // Scalar, int for ScalarType...).
  static bool fits(const SchemaType& actual, const SchemaType& formal) {
    return matchScore(actual, formal) >= 0;
  }
  static bool fits(const Value* v, const SchemaType& formal) {
    return matchScore(v->type(), formal) >= 0;
  }
  // Whether a value that holds a `produced` may be declared `declared`:
  // either is a subtype of the other (a Scalar result declared int, an int
  // declared Scalar), as TorchScript's refinements allow.
  static bool compatible(const SchemaType& produced,
                         const SchemaType& declared) {
    return fits(produced, declared) || fits(declared, produced);
  }

  // Binds the type variables of `formal` to the parts of `actual` they
  // stand for; the first binding of a name wins.
  static void bindVars(const SchemaType& formal, const SchemaTypePtr& actual,
                       std::map<std::string, SchemaTypePtr>& env) {
    const SchemaType* f = &formal;
    SchemaTypePtr a = actual;
    for (;;) {
      const SchemaType::Kind fk = f->kind();
      if (fk == SchemaType::Kind::Var) {
        env.emplace(f->varName(), a);
        return;
      }
      if (fk == SchemaType::Kind::Optional) {
        if (a->kind() == SchemaType::Kind::None) return;
        if (a->kind() == SchemaType::Kind::Optional) a = a->elementType();
        f = f->elementType().get();
        continue;
      }
      if (a->kind() != fk ||
          a->containedTypes().size() != f->containedTypes().size()) {
        return;
      }
      if (f->containedTypes().size() == 1 && fk != SchemaType::Kind::Tuple) {
        f = f->elementType().get();
        a = a->containedTypes()[0];
        continue;
      }
      for (size_t i = 0; i < f->containedTypes().size(); ++i) {
        bindVars(*f->containedTypes()[i], a->containedTypes()[i], env);
      }
      return;
    }
  }

  // `formal` with its type variables replaced by their bindings; null when
  // one is unbound or the type holds Any (then anything goes).
  static SchemaTypePtr substitute(
      const SchemaTypePtr& formal,
      const std::map<std::string, SchemaTypePtr>& env) {
    // Lists and optionals in a loop: they may nest without bound.
    std::vector<SchemaType::Kind> wrappers;
    const SchemaType* base = formal.get();
    while (base->kind() == SchemaType::Kind::List ||
           base->kind() == SchemaType::Kind::Optional) {
      wrappers.push_back(base->kind());
      base = base->elementType().get();
    }
    SchemaTypePtr out;
    switch (base->kind()) {
      case SchemaType::Kind::Var: {
        auto it = env.find(base->varName());
        if (it == env.end()) return nullptr;
        out = it->second;
        break;
      }
      case SchemaType::Kind::Any:
        return nullptr;
      case SchemaType::Kind::Dict:
      case SchemaType::Kind::Future:
      case SchemaType::Kind::RRef:
      case SchemaType::Kind::Tuple: {
        std::vector<SchemaTypePtr> elements;
        for (const SchemaTypePtr& c : base->containedTypes()) {
          elements.push_back(substitute(c, env));
          if (elements.back() == nullptr) return nullptr;
        }
        if (base->kind() == SchemaType::Kind::Dict) {
          out = SchemaType::dict(elements[0], elements[1]);
        } else if (base->kind() == SchemaType::Kind::Future) {
          out = SchemaType::future(elements[0]);
        } else if (base->kind() == SchemaType::Kind::RRef) {
          out = SchemaType::rref(elements[0]);
        } else {
          out = SchemaType::tuple(std::move(elements));
        }
        break;
      }
      default:
        if (wrappers.empty()) return formal;
        out = SchemaType::get(base->kind());
    }
    for (size_t i = wrappers.size(); i-- > 0;) {
      out = wrappers[i] == SchemaType::Kind::List ? SchemaType::list(out)
                                                  : SchemaType::optional(out);
    }
    return out;
  }

  // An operator node: counts and types against its schema.
  void checkOperator(const Node* n) {
    const FunctionSchema& s = *n->maybeSchema();
    // Named only in messages: built only for one.
    auto opName = [n] { return toString(n->op()->operator_name()); };
    const auto& args = s.arguments();
    const auto& rets = s.returns();
    if (s.is_vararg() ? n->inputs().size() < args.size()
                      : n->inputs().size() != args.size()) {
      failUse(opName() + " takes " + std::to_string(args.size()) +
                  (s.is_vararg() ? " or more" : "") + " inputs (" +
                  toString(s) + ") but the node has " +
                  std::to_string(n->inputs().size()),
              n);
    }
    if (!s.is_varret() && n->outputs().size() != rets.size()) {
      failUse(opName() + " returns " + std::to_string(rets.size()) +
                  " values (" + toString(s) + ") but the node has " +
                  std::to_string(n->outputs().size()) + " outputs",
              n);
    }
    std::map<std::string, SchemaTypePtr> env;
    for (size_t i = 0; i < args.size(); ++i) {
      const Value* v = n->inputs()[i];
      if (!fits(v, *args[i].type())) {
        failUse("input " + std::to_string(i) + " (" + describe(v) + ") of " +
                    opName() + " does not fit its argument '" +
                    args[i].type()->toString() + " " + args[i].name() +
                    "'; convert it first, or pick another overload",
                n);
      }
      bindVars(*args[i].type(), v->type().schemaType(), env);
    }
    if (s.is_varret()) return;
    // prim::unchecked_cast's output type is the graph's claim, unchecked by
    // definition: torch's passes leave casts of a None constant to bool or
    // Tensor in branches that never run (F.cross_entropy's size_average).
    if (n->kind() == "prim::unchecked_cast") return;
    for (size_t i = 0; i < rets.size(); ++i) {
      SchemaTypePtr r = substitute(rets[i].type(), env);
      const Value* out = n->outputs()[i];
      if (r != nullptr && !compatible(*r, *out->type().schemaType())) {
        failUse("output " + std::to_string(i) + " (" + describe(out) +
                    ") of " + opName() +
                    " is declared with a type its result (" + r->toString() +
                    ") cannot have",
                n);
      }
    }
  }

  void needInputs(const Node* n, size_t min, size_t max) {
    const size_t k = n->inputs().size();
    if (k < min || k > max) {
      failUse(n->kind() + " takes " +
                  (min == max ? std::to_string(min)
                              : std::to_string(min) + " to " +
                                    std::to_string(max)) +
                  " inputs but has " + std::to_string(k),
              n);
    }
  }
  void needOutputs(const Node* n, size_t count) {
    if (n->outputs().size() != count) {
      failUse(n->kind() + " has " + std::to_string(count) +
                  " output(s) but this one has " +
                  std::to_string(n->outputs().size()),
              n);
    }
  }
  void needInput(const Node* n, size_t i, const SchemaType& formal,
                 const char* role) {
    if (!fits(n->inputs()[i], formal)) {
      failUse(std::string("the ") + role + " of " + n->kind() + " must be " +
                  formal.toString() + ", not " + describe(n->inputs()[i]),
              n);
    }
  }

  // The interpreter's prims: operand counts (beyond checkShape's) and
  // types, as the interpreter and the passes read them.
  void checkPrim(const Node* n) {
    using K = SchemaType::Kind;
    const SchemaType& bool_t = *SchemaType::get(K::Bool);
    const SchemaType& int_t = *SchemaType::get(K::Int);
    if (n->is(prim::kIf)) {
      needInput(n, 0, bool_t, "condition");
      for (size_t b = 0; b < 2; ++b) {
        for (size_t i = 0; i < n->outputs().size(); ++i) {
          const Value* v = n->blocks()[b]->outputs()[i];
          if (!fits(v, *n->outputs()[i]->type().schemaType())) {
            failUse("block" + std::to_string(b) + " returns " + describe(v) +
                        " for output " + describe(n->outputs()[i]),
                    n);
          }
        }
      }
    } else if (n->is(prim::kLoop)) {
      needInput(n, 0, int_t, "max trip count (input 0)");
      needInput(n, 1, bool_t, "start condition (input 1)");
      const Block* body = n->blocks()[0];
      if (!fits(int_t, *body->inputs()[0]->type().schemaType())) {
        failUse("the iteration counter of prim::Loop is an int, not " +
                    describe(body->inputs()[0]),
                n);
      }
      if (!fits(body->outputs()[0], bool_t)) {
        failUse("the loop condition a prim::Loop block returns must be bool, "
                "not " + describe(body->outputs()[0]),
                n);
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        const Value* carried = body->inputs()[i + 1];
        const SchemaType& t = *carried->type().schemaType();
        const Value* in = n->inputs()[i + 2];
        const Value* next = body->outputs()[i + 1];
        const Value* out = n->outputs()[i];
        if (!fits(in, t) || !fits(next, t) ||
            !fits(t, *out->type().schemaType())) {
          failUse("loop-carried value " + std::to_string(i) + " has types " +
                      describe(in) + " (in), " + describe(carried) +
                      " (block input), " + describe(next) +
                      " (block output) and " + describe(out) +
                      " (out) that do not fit each other",
                  n);
        }
      }
    } else if (n->is(prim::kListConstruct)) {
      needOutputs(n, 1);
      const SchemaType& t = *n->output()->type().schemaType();
      if (t.kind() != K::List) {
        failUse("prim::ListConstruct makes a list, not " +
                    describe(n->output()),
                n);
      }
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        if (!fits(n->inputs()[i], *t.elementType())) {
          failUse("input " + std::to_string(i) + " (" +
                      describe(n->inputs()[i]) + ") does not fit the element "
                      "type of " + describe(n->output()),
                  n);
        }
      }
    } else if (n->is(prim::kDictConstruct)) {
      needOutputs(n, 1);
      const SchemaType& t = *n->output()->type().schemaType();
      if (t.kind() != K::Dict) {
        failUse("prim::DictConstruct makes a dict, not " +
                    describe(n->output()),
                n);
      }
      if (n->inputs().size() % 2 != 0) {
        failUse("prim::DictConstruct takes keys and values in pairs; it has " +
                    std::to_string(n->inputs().size()) + " inputs",
                n);
      }
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        const SchemaType& want = *t.containedTypes()[i % 2];
        if (!fits(n->inputs()[i], want)) {
          failUse("input " + std::to_string(i) + " (" +
                      describe(n->inputs()[i]) + ") does not fit the " +
                      (i % 2 == 0 ? "key" : "value") + " type of " +
                      describe(n->output()),
                  n);
        }
      }
    } else if (n->is(prim::kTupleConstruct)) {
      needOutputs(n, 1);
      const SchemaType& t = *n->output()->type().schemaType();
      if (t.kind() != K::Tuple ||
          t.containedTypes().size() != n->inputs().size()) {
        failUse("prim::TupleConstruct of " +
                    std::to_string(n->inputs().size()) +
                    " values makes a tuple of as many, not " +
                    describe(n->output()),
                n);
      }
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        if (!fits(n->inputs()[i], *t.containedTypes()[i])) {
          failUse("input " + std::to_string(i) + " (" +
                      describe(n->inputs()[i]) + ") does not fit element " +
                      std::to_string(i) + " of " + describe(n->output()),
                  n);
        }
      }
    } else if (n->is(prim::kListUnpack) || n->is(prim::kTupleUnpack)) {
      needInputs(n, 1, 1);
      const bool list = n->is(prim::kListUnpack);
      const Value* in = n->inputs()[0];
      const SchemaType& t = *in->type().schemaType();
      if (t.kind() != (list ? K::List : K::Tuple) ||
          (!list && t.containedTypes().size() != n->outputs().size())) {
        failUse(n->kind() + " into " + std::to_string(n->outputs().size()) +
                    " values needs " +
                    (list ? std::string("a list")
                          : "a tuple of " +
                                std::to_string(n->outputs().size()) +
                                " elements") +
                    ", not " + describe(in),
                n);
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        const SchemaType& e = list ? *t.elementType() : *t.containedTypes()[i];
        if (!compatible(e, *n->outputs()[i]->type().schemaType())) {
          failUse("output " + std::to_string(i) + " (" +
                      describe(n->outputs()[i]) + ") cannot hold an element "
                      "of " + describe(in),
                  n);
        }
      }
    } else if (n->is(prim::kRaiseException)) {
      needInputs(n, 1, 2);
      needInput(n, 0, *SchemaType::get(K::Str), "message (input 0)");
      if (n->inputs().size() == 2) {
        needInput(n, 1, *SchemaType::optional(SchemaType::get(K::Str)),
                  "exception class (input 1)");
      }
    } else if (n->is(prim::kUninitialized)) {
      needInputs(n, 0, 0);
      needOutputs(n, 1);
    } else if (n->is(prim::kFork)) {
      const Block* body =
          n->hasAttribute(prim::kSubgraph)
              ? std::get<std::shared_ptr<const Graph>>(
                    n->attribute(prim::kSubgraph))->block()
              : n->blocks()[0];
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        if (!fits(n->inputs()[i], *body->inputs()[i]->type().schemaType())) {
          failUse("input " + std::to_string(i) + " (" +
                      describe(n->inputs()[i]) + ") does not fit block "
                      "input " + describe(body->inputs()[i]),
                  n);
        }
      }
      const SchemaType& t = *n->output()->type().schemaType();
      if (t.kind() != K::Future ||
          !fits(body->outputs()[0], *t.elementType())) {
        failUse("prim::fork's output must be a Future of what its block "
                "returns (" + describe(body->outputs()[0]) + "), not " +
                    describe(n->output()),
                n);
      }
    } else if (n->is(prim::kCallFunction)) {
      if (n->inputs().empty() || !n->inputs()[0]->type().isFunction()) {
        failUse("prim::CallFunction's first input must be a Function "
                "(%f : Function = prim::Constant[name=\"f\"]())",
                n);
      }
    } else if (n->is(prim::kIsInstance)) {
      needInputs(n, 1, 1);
      needOutputs(n, 1);
      if (n->output()->type().kind() != K::Bool) {
        failUse("prim::isinstance's output is a bool, not " +
                    describe(n->output()),
                n);
      }
      if (!n->hasAttribute("types") ||
          !std::holds_alternative<std::vector<Type>>(n->attribute("types")) ||
          std::get<std::vector<Type>>(n->attribute("types")).empty()) {
        failUse("prim::isinstance needs the types it tests: "
                "prim::isinstance[types=[int, float]](%x)",
                n);
      }
    } else if (n->is(prim::kGetAttr)) {
      needInputs(n, 1, 1);
      needOutputs(n, 1);
      if (!n->inputs()[0]->type().isClass()) {
        failUse("prim::GetAttr reads an attribute of a module object (a "
                "class type such as __torch__.M), not of " +
                    describe(n->inputs()[0]),
                n);
      }
      if (!n->hasAttribute("name") ||
          !std::holds_alternative<std::string>(n->attribute("name")) ||
          std::get<std::string>(n->attribute("name")).empty()) {
        failUse("prim::GetAttr needs the attribute's name: "
                "prim::GetAttr[name=\"weight\"](%self)",
                n);
      }
    } else if (n->is(prim::kWait)) {
      needInputs(n, 1, 1);
      needOutputs(n, 1);
      const SchemaType& t = *n->inputs()[0]->type().schemaType();
      if (t.kind() != K::Future) {
        failUse("aten::wait takes a Future, not " + describe(n->inputs()[0]),
                n);
      }
      if (!compatible(*t.elementType(), *n->output()->type().schemaType())) {
        failUse("the output " + describe(n->output()) +
                    " cannot hold what " + describe(n->inputs()[0]) +
                    " yields",
                n);
      }
    }
  }

  void checkTypes(const Node* n) {
    if (isInterpreterPrim(n->kind())) {
      checkPrim(n);
    } else if (n->op()) {
      checkOperator(n);
    }
    // An unresolved node cannot run; the interpreter refuses it.
  }

  void checkValue(const Value* v, const Node* def, size_t offset) {
    if (values_.count(const_cast<Value*>(v)) == 0) {
      fail("an output is not owned by the graph", def);
    }
    if (v->node() != def || v->offset() != offset) {
      fail("%" + v->debugName() + " does not point back to its definition "
               "(node or offset wrong)",
           def);
    }
    for (const Use& u : v->uses()) {
      if (nodes_.count(u.user) == 0 || u.offset >= u.user->inputs().size() ||
          u.user->inputs()[u.offset] != v) {
        fail("the use list of %" + v->debugName() +
                 " names a use that does not exist",
             def);
      }
      if (!u.user->inBlockList()) {
        fail("%" + v->debugName() + " is used by a node in no block", def);
      }
    }
    if (v->uses().size() > 1) {
      // No use listed twice (sorted copy: O(U log U), not O(U^2)).
      std::vector<std::pair<const Node*, size_t>> uses;
      uses.reserve(v->uses().size());
      for (const Use& u : v->uses()) uses.emplace_back(u.user, u.offset);
      std::sort(uses.begin(), uses.end());
      auto twice = std::adjacent_find(uses.begin(), uses.end());
      if (twice != uses.end()) {
        fail("the use list of %" + v->debugName() + " names input " +
                 std::to_string(twice->second) + " of " +
                 twice->first->kind() + " twice",
             def);
      }
    }
    if (!visible_.insert(v).second) {
      fail("%" + v->debugName() + " is defined twice", def);
    }
    scope_.back().push_back(v);
  }

  // Every use listed is a real input (checkValue) and none twice; so the
  // lists are exact when each value has as many uses as inputs name it.
  void checkUseCounts() {
    for (const Value* v : values_) {
      auto it = occurrences_.find(v);
      const size_t inputs = it == occurrences_.end() ? 0 : it->second;
      if (inputs != v->uses().size()) {
        fail("the use list of %" + v->debugName() + " has " +
                 std::to_string(v->uses().size()) + " entries but " +
                 std::to_string(inputs) +
                 " inputs of the graph's nodes name it",
             v->node());
      }
    }
  }

  void checkUse(const Node* n, size_t i) {
    const Value* v = n->inputs()[i];
    if (visible_.count(v) == 0) {
      fail("input %" + v->debugName() + " of " + n->kind() +
               " is not defined before it, in this block or an enclosing "
               "one",
           n);
    }
    // Counted, and compared with the use list once at the end: looking
    // each use up in the list would be quadratic in a value's uses.
    ++occurrences_[v];
  }

  void checkShape(const Node* n) {
    const size_t nb = n->blocks().size();
    if (n->is(prim::kIf)) {
      if (nb != 2 || n->inputs().size() != 1) {
        fail("prim::If needs one input and two blocks", n);
      }
      for (const Block* b : n->blocks()) {
        if (!b->inputs().empty() ||
            b->outputs().size() != n->outputs().size()) {
          fail("a prim::If block takes no inputs and returns as many "
               "values as the node has outputs",
               n);
        }
      }
    } else if (n->is(prim::kLoop)) {
      if (nb != 1 || n->inputs().size() < 2) {
        fail("prim::Loop needs (max_trip_count, cond, carried...) and one "
             "block",
             n);
      }
      const size_t carried = n->inputs().size() - 2;
      const Block* b = n->blocks()[0];
      if (n->outputs().size() != carried ||
          b->inputs().size() != carried + 1 ||
          b->outputs().size() != carried + 1) {
        fail("prim::Loop with " + std::to_string(carried) +
                 " carried values needs that many outputs, and a block with "
                 "(i, carried...) inputs and (cond, carried...) outputs",
             n);
      }
    } else if (n->is(prim::kFork) && n->hasAttribute(prim::kSubgraph)) {
      const auto* g = std::get_if<std::shared_ptr<const Graph>>(
          &n->attribute(prim::kSubgraph));
      if (nb != 0 || n->outputs().size() != 1 || g == nullptr ||
          *g == nullptr || (*g)->inputs().size() != n->inputs().size() ||
          (*g)->outputs().size() != 1) {
        fail("prim::fork with a Subgraph needs one output, no blocks, and a "
             "subgraph taking the node's inputs and returning one value",
             n);
      }
    } else if (n->is(prim::kFork)) {
      if (nb != 1 || n->outputs().size() != 1 ||
          n->blocks()[0]->inputs().size() != n->inputs().size() ||
          n->blocks()[0]->outputs().size() != 1) {
        fail("prim::fork needs one output and one block taking the node's "
             "inputs and returning one value",
             n);
      }
    } else if (nb != 0) {
      fail(n->kind() + " may not have blocks", n);
    }
    if (n->is(prim::kConstant) &&
        (!n->inputs().empty() || n->outputs().size() != 1)) {
      fail("prim::Constant has no inputs and one output", n);
    }
  }

  void checkBlock(const Block* b, const Node* owner) {
    if (b->owningNode() != owner || b->owningGraph() != &g_) {
      fail("a block's owning node or graph is wrong", owner);
    }
    scope_.emplace_back();
    const Node* param = b->paramNode();
    if (param->owningBlock() != b) fail("a param node's block is wrong", owner);
    for (size_t i = 0; i < param->outputs().size(); ++i) {
      checkValue(param->outputs()[i], param, i);
    }
    const Node* prev = param;
    for (const Node* n : b->nodes()) {
      if (nodes_.count(const_cast<Node*>(n)) == 0) {
        fail("a node in a block list is not owned by the graph", nullptr);
      }
      if (n->prev() != prev || prev->next() != n) {
        fail("the node list is broken (prev/next disagree)", n);
      }
      if (n->owningBlock() != b || n->owningGraph() != &g_) {
        fail("a node's owning block or graph is wrong", n);
      }
      for (size_t i = 0; i < n->inputs().size(); ++i) checkUse(n, i);
      checkShape(n);
      checkTypes(n);
      for (const Block* sub : n->blocks()) checkBlock(sub, n);
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        checkValue(n->outputs()[i], n, i);
      }
      prev = n;
    }
    const Node* ret = b->returnNode();
    if (ret->prev() != prev || ret->owningBlock() != b) {
      fail("the node list does not end at the block's return node", owner);
    }
    for (size_t i = 0; i < ret->inputs().size(); ++i) checkUse(ret, i);
    for (const Value* v : scope_.back()) visible_.erase(v);
    scope_.pop_back();
  }

  void checkNames() {
    std::unordered_set<std::string> seen;
    for (const Value* v : values_) {
      if (v->debugName().empty()) fail("a value has no name", v->node());
      if (!seen.insert(v->debugName()).second) {
        fail("two values are named %" + v->debugName(), v->node());
      }
      auto it = names_.find(v->debugName());
      if (it == names_.end() || it->second != v) {
        fail("%" + v->debugName() + " is missing from the name table",
             v->node());
      }
    }
    if (names_.size() != values_.size()) {
      fail("the name table holds names of values that no longer exist",
           nullptr);
    }
  }

  const Graph& g_;
  const std::unordered_set<Node*>& nodes_;
  const std::unordered_set<Value*>& values_;
  const std::unordered_map<std::string, Value*>& names_;
  std::unordered_set<const Value*> visible_;
  std::unordered_map<const Value*, size_t> occurrences_;  // inputs naming it
  std::vector<std::vector<const Value*>> scope_;
};

}  // namespace

void Graph::lint() const {
  Linter(*this, all_nodes_, all_values_, names_).run();
}

}  // namespace jit
}  // namespace turnout

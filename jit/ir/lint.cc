// Graph::lint(): checks the invariants listed in ir.h.
#include <string>
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
    checkBlock(g_.block(), nullptr);
    checkNames();
  }

 private:
  [[noreturn]] void fail(const std::string& what, const Node* n) {
    std::string where;
    if (n != nullptr) where = "\n  at: " + n->toString();
    throw Error(ErrorKind::Internal, "Graph::lint(): " + what + where);
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
    if (!visible_.insert(v).second) {
      fail("%" + v->debugName() + " is defined twice", def);
    }
    scope_.back().push_back(v);
  }

  void checkUse(const Node* n, size_t i) {
    const Value* v = n->inputs()[i];
    if (visible_.count(v) == 0) {
      fail("input %" + v->debugName() + " of " + n->kind() +
               " is not defined before it, in this block or an enclosing "
               "one",
           n);
    }
    size_t count = 0;
    for (const Use& u : v->uses()) {
      if (u.user == n && u.offset == i) ++count;
    }
    if (count != 1) {
      fail("input " + std::to_string(i) + " (%" + v->debugName() + ") of " +
               n->kind() + " appears " + std::to_string(count) +
               " times in its value's use list, not once",
           n);
    }
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
  std::vector<std::vector<const Value*>> scope_;
};

}  // namespace

void Graph::lint() const {
  Linter(*this, all_nodes_, all_values_, names_).run();
}

}  // namespace jit
}  // namespace turnout

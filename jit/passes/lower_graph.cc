#include "jit/passes/lower_graph.h"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "jit/ir/type.h"

namespace turnout {
namespace jit {
namespace {

std::string dotted(const std::vector<std::string>& path) {
  std::string out = "self";
  for (const std::string& p : path) out += "." + p;
  return out;
}

std::string where(const Node* n) {
  std::string out = "\n  in: " + n->toString();
  if (!n->sourceLocation().empty()) out += "  # " + n->sourceLocation();
  return out;
}

[[noreturn]] void fail(const std::string& what, const Node* n) {
  throw Error(ErrorKind::InvalidArgument, "lowerGraph(): " + what + where(n));
}

class Lowering {
 public:
  Lowering(Graph& g, const AttributeResolver& resolve)
      : g_(g), resolve_(resolve) {}

  void run(LoweredGraph& out) {
    modules_[g_.inputs()[0]] = {};
    visit(g_.block());
    // Users first: a GetAttr of a submodule is read by later GetAttrs.
    for (auto it = reads_.rbegin(); it != reads_.rend(); ++it) (*it)->destroy();
    g_.block()->eraseInput(0);
    // A folded constant keeps the name of the read it replaces (`%training`)
    // unless that was a bare number.
    for (auto& [c, name] : constant_names_) {
      if (name.find_first_not_of("0123456789") != std::string::npos) {
        c->setDebugName(name);
      }
    }
    for (size_t i = 0; i < added_.size(); ++i) {
      std::string name;
      for (char c : names_[i]) name += c == '.' ? '_' : c;
      added_[i]->setDebugName(name);
    }
    out.names = std::move(names_);
    out.values = std::move(values_);
  }

 private:
  void visit(Block* b) {
    for (Node* n : b->nodes()) {
      checkUses(n);
      if (n->is(prim::kGetAttr) && modules_.count(n->inputs()[0]) > 0) {
        lowerRead(n);
      }
      for (Block* sub : n->blocks()) visit(sub);
    }
    checkUses(b->returnNode());
  }

  // Only prim::GetAttr may read a module value.
  void checkUses(Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      auto it = modules_.find(n->inputs()[i]);
      if (it == modules_.end()) continue;
      if (n->is(prim::kGetAttr) && i == 0) continue;
      const std::string what = dotted(it->second);
      if (n->is(prim::kReturn)) {
        fail(what + " is returned (" +
                 (n->owningBlock() == g_.block() ? "by the graph"
                                                  : "by a block") +
                 "); only prim::GetAttr reads of a module can be lowered",
             n->owningBlock()->owningNode() != nullptr
                 ? n->owningBlock()->owningNode()
                 : n);
      }
      fail(what + " is used by " + n->kind() + " (input " +
               std::to_string(i) +
               "); only prim::GetAttr reads of a module can be lowered "
               "(inline method calls first: torch's inlined_graph)",
           n);
    }
  }

  const ModuleAttribute& find(const std::vector<std::string>& path,
                              const Node* n) {
    auto it = cache_.find(path);
    if (it != cache_.end()) return it->second;
    std::optional<ModuleAttribute> found = resolve_(path);
    if (!found) {
      fail("the module has no attribute " + dotted(path) +
               " (the object given for self lacks what the graph reads; "
               "pass the module the graph was made from)",
           n);
    }
    return cache_.emplace(path, std::move(*found)).first->second;
  }

  void lowerRead(Node* n) {
    if (!n->hasAttribute("name") ||
        !std::holds_alternative<std::string>(n->attribute("name")) ||
        n->outputs().size() != 1) {
      fail("prim::GetAttr needs one output and the attribute's name: "
           "prim::GetAttr[name=\"weight\"](%self)",
           n);
    }
    std::vector<std::string> path = modules_.at(n->inputs()[0]);
    path.push_back(std::get<std::string>(n->attribute("name")));
    const ModuleAttribute& attr = find(path, n);
    Value* out = n->output();
    const Type& declared = out->type();
    auto mismatch = [&](const std::string& found) {
      fail(dotted(path) + " is " + found + ", but the graph reads it as " +
               declared.toString() +
               " (pass the module the graph was made from)",
           n);
    };
    switch (attr.kind) {
      case ModuleAttribute::Kind::Object:
        if (!declared.isClass()) mismatch(attr.description);
        modules_[out] = path;
        break;
      case ModuleAttribute::Kind::Tensor: {
        if (!attr.value.isTensor()) {
          throw Error(ErrorKind::Internal,
                      "lowerGraph(): the resolver said " + dotted(path) +
                          " is a tensor but gave " + attr.value.tagKind() +
                          " (a turnout bug)");
        }
        if (declared.isClass() || matchScore(Type(), *declared.schemaType()) < 0) {
          mismatch("a tensor");
        }
        auto it = inputs_.find(path);
        if (it == inputs_.end()) {
          Value* v = g_.addInput();
          it = inputs_.emplace(path, v).first;
          added_.push_back(v);
          std::string name;
          for (size_t i = 0; i < path.size(); ++i) {
            name += (i > 0 ? "." : "") + path[i];
          }
          names_.push_back(std::move(name));
          values_.push_back(attr.value);
        }
        out->replaceAllUsesWith(it->second);
        break;
      }
      case ModuleAttribute::Kind::Constant: {
        Value* c = nullptr;
        {
          WithInsertPoint guard(n);
          c = g_.insertConstant(attr.value);
        }
        c->node()->setSourceLocation(n->sourceLocation());
        if (declared.isClass() ||
            matchScore(c->type(), *declared.schemaType()) < 0) {
          c->node()->destroy();
          mismatch(attr.description);
        }
        out->replaceAllUsesWith(c);
        constant_names_.emplace_back(c, out->debugName());
        break;
      }
    }
    reads_.push_back(n);
  }

  Graph& g_;
  const AttributeResolver& resolve_;
  // Module values and their paths from self.
  std::unordered_map<const Value*, std::vector<std::string>> modules_;
  std::map<std::vector<std::string>, ModuleAttribute> cache_;
  std::map<std::vector<std::string>, Value*> inputs_;
  std::vector<Node*> reads_;
  std::vector<Value*> added_;
  std::vector<std::string> names_;
  std::vector<IValue> values_;
  std::vector<std::pair<Value*, std::string>> constant_names_;
};

}  // namespace

LoweredGraph lowerGraph(const Graph& graph, const AttributeResolver& resolve) {
  if (graph.inputs().empty() || !graph.inputs()[0]->type().isClass()) {
    throw Error(
        ErrorKind::InvalidArgument,
        "lowerGraph(): the graph's first input must be the module, a class "
        "type (%self : __torch__.M), but it is " +
            (graph.inputs().empty()
                 ? std::string("absent (the graph takes no inputs)")
                 : "%" + graph.inputs()[0]->debugName() + " : " +
                       graph.inputs()[0]->type().toString()));
  }
  // The work is done on a copy: an error leaves the caller's graph as it
  // was and leaves no half-lowered graph behind.
  LoweredGraph out;
  out.graph = std::shared_ptr<Graph>(graph.copy());
  Lowering(*out.graph, resolve).run(out);
  return out;
}

}  // namespace jit
}  // namespace turnout

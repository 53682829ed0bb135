#include "jit/ir/compilation_unit.h"

#include <utility>

#include "dispatcher/core/error.h"
#include "jit/ir/parser.h"

namespace turnout {
namespace jit {

std::shared_ptr<CompilationUnit> CompilationUnit::create() {
  return std::shared_ptr<CompilationUnit>(new CompilationUnit());
}

void CompilationUnit::checkNewName(const std::string& name) const {
  TURNOUT_CHECK(!name.empty(), ErrorKind::InvalidArgument,
                "CompilationUnit::define(): a function needs a name");
  TURNOUT_CHECK(functions_.count(name) == 0, ErrorKind::InvalidArgument,
                "CompilationUnit::define(): function '", name,
                "' is already defined; functions are never replaced (compiled "
                "callers hold them): define it under another name or in a "
                "new CompilationUnit");
}

std::shared_ptr<const Graph> CompilationUnit::define(const std::string& name,
                                                     std::string_view ir) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    checkNewName(name);
  }
  ParseOptions options;
  options.compilation_unit = weak_from_this();
  return define(name, parseIR(ir, options));
}

std::shared_ptr<const Graph> CompilationUnit::define(
    const std::string& name, std::unique_ptr<Graph> graph) {
  TURNOUT_CHECK(graph != nullptr, ErrorKind::InvalidArgument,
                "CompilationUnit::define(): function '", name,
                "' has no graph");
  graph->setCompilationUnit(weak_from_this());
  std::shared_ptr<const Graph> g(std::move(graph));
  std::lock_guard<std::mutex> lock(mutex_);
  checkNewName(name);
  functions_.emplace(name, g);
  return g;
}

std::shared_ptr<const Graph> CompilationUnit::find(
    std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

std::vector<std::string> CompilationUnit::functionNames() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  for (const auto& entry : functions_) out.push_back(entry.first);
  return out;
}

std::shared_ptr<const Graph> resolveCallee(const Node* call) {
  auto fail = [&](const std::string& why) {
    std::string where = call->sourceLocation().empty()
                            ? std::string()
                            : " at " + call->sourceLocation();
    throw Error(ErrorKind::InvalidArgument,
                "prim::CallFunction" + where + ": " + why +
                    "\n  in: " + call->toString());
  };
  if (call->inputs().empty()) fail("the call has no function input");
  const Node* c = call->inputs()[0]->node();
  if (!c->is(prim::kConstant) || !call->inputs()[0]->type().isFunction() ||
      !c->hasAttribute("name")) {
    fail("the first input must be a Function constant "
         "(%f : Function = prim::Constant[name=\"f\"]())");
  }
  const std::string& name = std::get<std::string>(c->attribute("name"));
  std::shared_ptr<const CompilationUnit> unit =
      call->owningGraph()->compilationUnit();
  if (unit == nullptr) {
    fail("the graph has no CompilationUnit to find function '" + name +
         "' in; parse it with ParseOptions::compilation_unit or define it "
         "in a CompilationUnit");
  }
  std::shared_ptr<const Graph> g = unit->find(name);
  if (g == nullptr) {
    std::string names;
    for (const std::string& n : unit->functionNames()) {
      names += names.empty() ? n : ", " + n;
    }
    fail("function '" + name +
         "' is not defined in the graph's CompilationUnit (defined: " +
         (names.empty() ? std::string("none") : names) +
         "); define it first");
  }
  if (g->inputs().size() != call->inputs().size() - 1 ||
      g->outputs().size() != call->outputs().size()) {
    fail("function '" + name + "' takes " + std::to_string(g->inputs().size()) +
         " inputs and returns " + std::to_string(g->outputs().size()) +
         " values, but the call passes " +
         std::to_string(call->inputs().size() - 1) + " and expects " +
         std::to_string(call->outputs().size()));
  }
  return g;
}

}  // namespace jit
}  // namespace turnout

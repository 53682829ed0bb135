// CompilationUnit: graph functions defined by name, which Function constants
// (`%f : Function = prim::Constant[name="inner"]()`) name and
// prim::CallFunction calls, as in a TorchScript compilation unit.
//
//   auto cu = CompilationUnit::create();
//   cu->define("inner", R"IR(
//     graph(%x : Tensor):
//       %y : Tensor = aten::neg(%x)
//       return (%y))IR");
//   cu->define("outer", R"IR(
//     graph(%x : Tensor):
//       %f : Function = prim::Constant[name="inner"]()
//       %y : Tensor = prim::CallFunction(%f, %x)
//       return (%y))IR");
//   Code(*cu->find("outer")).run(stack);   // runs inner through the call
//   inlineCalls(graph);                    // passes/inline.h: the body instead
//
// A function may name functions defined after it: names are looked up when
// a graph is compiled or inlined, not when it is parsed.
//
// Thread safety: define() and find() take the unit's mutex; a defined
// graph is never changed or replaced, so the graph find() returns may be
// read from any thread.
#ifndef TURNOUT_JIT_IR_COMPILATION_UNIT_H_
#define TURNOUT_JIT_IR_COMPILATION_UNIT_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

class CompilationUnit
    : public std::enable_shared_from_this<CompilationUnit> {
 public:
  /// A new, empty unit. Units are shared: the graphs they define refer
  /// back to them (weakly).
  static std::shared_ptr<CompilationUnit> create();

  /// Parses `ir` (parser.h) and defines it as function `name`; its Function
  /// constants resolve in this unit. Returns the defined graph. Throws
  /// Error(InvalidArgument) when `name` is empty or already defined (a
  /// function is never replaced: compiled callers hold it), or the text does
  /// not parse.
  std::shared_ptr<const Graph> define(const std::string& name,
                                      std::string_view ir);
  /// Defines `graph` as function `name`; the unit takes it and sets its
  /// compilation unit to this one. Throws as above.
  std::shared_ptr<const Graph> define(const std::string& name,
                                      std::unique_ptr<Graph> graph);

  /// The function named `name`, or null.
  std::shared_ptr<const Graph> find(std::string_view name) const;
  /// The defined names, sorted.
  std::vector<std::string> functionNames() const;

 private:
  CompilationUnit() = default;
  void checkNewName(const std::string& name) const;  // mutex held

  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Graph>, std::less<>> functions_;
};

/// The function a prim::CallFunction node calls: its first input must be a
/// Function constant whose name the graph's compilation unit defines.
/// Throws Error(InvalidArgument) naming the node and what is missing (no
/// Function constant, no compilation unit, an undefined name).
std::shared_ptr<const Graph> resolveCallee(const Node* call);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_COMPILATION_UNIT_H_

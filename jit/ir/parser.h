// The parser: reads TorchScript's text form of a graph (as printer.h and
// PyTorch 1.13's str(graph) write it) into a Graph.
//
//   std::unique_ptr<Graph> g = parseIR(R"IR(
//     graph(%x.1 : Tensor, %n.1 : int):
//       %2 : int = prim::Constant[value=1]()
//       %y : Tensor = aten::add(%x.1, %x.1, %2) # model.py:5:8
//       return (%y)
//   )IR");
//
// Operators are resolved against the dispatcher's registered schemas while
// parsing: a name without an overload ("aten::add") picks the overload
// whose arguments the input types fit best (Tensor, Tensor, int ->
// add.Tensor; Tensor, float, int -> add.Scalar); a name with one
// ("aten::add.Tensor") must fit that overload. The interpreter's own prims
// (ir.h) need no schema.
//
// Errors throw turnout::Error(InvalidArgument) with the line and column,
// what was expected and what was found, and the line with a caret:
//   parse error at 3:27: expected ')' but found ','
//       %y : Tensor = aten::add(%x.1,, %2)
//                               ^
//
// Thread safety: parsing reads the dispatcher's registry; call it from any
// thread.
#ifndef TURNOUT_JIT_IR_PARSER_H_
#define TURNOUT_JIT_IR_PARSER_H_

#include <memory>
#include <string_view>

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

struct ParseOptions {
  /// Leave a node whose operator is not registered, or whose inputs fit no
  /// registered overload, unresolved (Node::op() empty) instead of failing.
  /// For loading graphs to print or transform, not to run.
  bool allow_unresolved = false;
  /// Where the graph's Function constants (`prim::Constant[name="f"]()`)
  /// find their functions when the graph is compiled or inlined; see
  /// compilation_unit.h. The graph keeps a weak reference.
  std::weak_ptr<const CompilationUnit> compilation_unit;
};

/// Parses one graph. Throws Error(InvalidArgument) as described above; the
/// returned graph passes lint().
std::unique_ptr<Graph> parseIR(std::string_view text,
                               const ParseOptions& options = {});

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_PARSER_H_

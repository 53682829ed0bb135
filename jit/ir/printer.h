// The printer: TorchScript's text form of a graph, exactly as PyTorch 1.13's
// str(graph) writes it, so that parser.h reads it back unchanged.
//
//   graph(%x.1 : Tensor,
//         %n.1 : int):
//     %2 : int = prim::Constant[value=1]()
//     %c : bool = aten::gt(%n.1, %2) # model.py:6:7
//     %r : Tensor = prim::If(%c) # model.py:6:4
//       block0():
//         -> (%x.1)
//       block1():
//         -> (%x.1)
//     return (%r)
//
// Graph::toString() and Node::toString() (ir.h) are implemented here.
//
// Thread safety: printing only reads the graph.
#ifndef TURNOUT_JIT_IR_PRINTER_H_
#define TURNOUT_JIT_IR_PRINTER_H_

#include <string>

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// An attribute value as it appears inside `[...]`: 1, 0.5, 1., "str",
/// {2} (a 0-dim tensor), <Tensor> (any other tensor), [1, 2].
std::string attributeToString(const AttributeValue& value);

/// The text of one node at `indent` spaces, with its blocks, ending in a
/// newline.
std::string nodeToString(const Node* node, int indent);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_PRINTER_H_

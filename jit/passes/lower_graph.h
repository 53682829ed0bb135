// Lowering a module's graph: the graph of a scripted module's method takes
// the module as its first input (`%self : __torch__.M`) and reads its
// parameters, buffers and settings with prim::GetAttr, possibly through
// submodules. turnout holds no module objects, so lowerGraph makes a graph
// that does not need one, as torch's `torch._C._jit_pass_lower_graph` does:
//
//   graph(%self : __torch__.M, %x : Tensor):
//     %l : __torch__.Linear = prim::GetAttr[name="l"](%self)
//     %w : Tensor = prim::GetAttr[name="weight"](%l)
//     %t : bool = prim::GetAttr[name="training"](%self)
//     ...
//   -> graph(%x : Tensor, %l_weight : Tensor):
//        %t : bool = prim::Constant[value=0]()
//        ...
//   with values = {the tensor at self.l.weight}, names = {"l.weight"}.
//
// Each tensor attribute becomes a new graph input, after the graph's own
// inputs, in the order of the first read in program order (blocks visited
// where they stand), one input per attribute however often it is read.
// Each attribute that is None, a bool, an int, a float or a str becomes a
// prim::Constant where it was read (torch's pass refuses those: turnout
// folds them, since there is no module left to read them from). Submodules
// are followed.
//
// Thread safety: reads `graph`, returns a new one; the resolver is called
// on the caller's thread.
#ifndef TURNOUT_JIT_PASSES_LOWER_GRAPH_H_
#define TURNOUT_JIT_PASSES_LOWER_GRAPH_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// An attribute of a module object, as the caller's resolver finds it.
struct ModuleAttribute {
  enum class Kind : uint8_t {
    /// A submodule (or any object whose attributes the graph reads).
    Object,
    /// A tensor: becomes a graph input; `value` holds it.
    Tensor,
    /// None, bool, int, float or str: becomes a constant; `value` holds it.
    Constant,
  };
  Kind kind = Kind::Object;
  IValue value;
  /// What the attribute is, for error messages ("a Linear object").
  std::string description;
};

/// Finds the attribute at `path` (names from the module outward:
/// {"sub", "l", "weight"} is self.sub.l.weight); nullopt when there is no
/// such attribute. May throw Error for a value it cannot describe.
using AttributeResolver = std::function<std::optional<ModuleAttribute>(
    const std::vector<std::string>& path)>;

/// What lowerGraph returns.
struct LoweredGraph {
  /// The graph without the module input.
  std::shared_ptr<Graph> graph;
  /// The tensors of the inputs it added, in input order.
  std::vector<IValue> values;
  /// Their dotted paths ("l.weight"), in the same order.
  std::vector<std::string> names;
};

/// Lowers `graph`, whose first input is a module (a class type), reading
/// its attributes through `resolve`. The added inputs are named after the
/// dotted path with '_' for '.' (`%l_weight`).
///
/// Throws Error(InvalidArgument), leaving `graph` as it was, when the first
/// input is not a class type; when the module (or a submodule) is used
/// other than by prim::GetAttr (passed to an operator, returned, put in a
/// tuple); when an attribute is missing; or when what the resolver finds
/// does not fit the type the graph reads (a tensor where the graph reads an
/// int, an object where it reads a tensor, a list, ...). Each message names
/// the attribute's path and the node that reads it.
LoweredGraph lowerGraph(const Graph& graph, const AttributeResolver& resolve);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_LOWER_GRAPH_H_

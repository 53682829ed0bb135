// Shape and dtype propagation through the Meta kernels: each node whose
// tensor inputs have a known dtype (and rank) is run once on meta tensors
// -- tensors with sizes, strides and a dtype but no data -- and its tensor
// outputs get the types the results have.
//
//   graph(%x : Float(2, 3, device=cpu), %y : Float(3, device=cpu)):
//     %1 : int = prim::Constant[value=1]()
//     %z : Tensor = aten::add(%x, %y, %1)
//   -> %z : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)
//
// What a node needs: every tensor input typed with a dtype and a rank, and
// every other input a constant (or a list built by prim::ListConstruct of
// such tensors). With every size known the outputs get dtype, sizes and
// strides; with a size unknown (`*`) the dtype, and the rank when two runs
// with different stand-in sizes (1 and 7) agree on it -- a stand-in could
// change the rest (squeeze). The device is the inputs' common device
// when every tensor input knows it; requires_grad=0 when no input requires
// grad or the result is not floating. A node whose kernel fails on the meta
// tensors (no Meta kernel, an error the run will report) keeps its types.
// prim::If outputs get what both branches agree on; prim::Loop carried
// values what every iteration agrees on.
//
// The types of a graph written by someone else (a traced graph's
// `Float(3, 4)`) describe the inputs it was traced with: run
// eraseShapeInformation() first when the inputs may differ.
//
// Thread safety: changes the graph; the caller owns it. Calls operators
// with the default thread-local dispatch state.
#ifndef TURNOUT_JIT_PASSES_SHAPE_PROPAGATION_H_
#define TURNOUT_JIT_PASSES_SHAPE_PROPAGATION_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Refines the tensor types of every node output from the graph inputs'
/// types. Returns true when some type changed.
bool propagateShapes(Graph& graph);

/// Makes every refined tensor type in the graph plain `Tensor`, except the
/// graph's inputs and the outputs of prim::Constant (whose types are
/// facts). Returns true when some type changed.
bool eraseShapeInformation(Graph& graph);

/// What two types have in common: the same type when equal; for two
/// tensors, the refinement fields they agree on (sizes per dimension when
/// the ranks agree); otherwise the first type without its refinement.
Type mergeTypes(const Type& a, const Type& b);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_SHAPE_PROPAGATION_H_

// Operator resolution: which registered overload a node calls, from its
// kind and the types of its inputs.
//
//   Node* n = g.create("aten::add", {x, y, one});
//   resolveOperator(n);  // n->op() is aten::add.Tensor
//
// Thread safety: reads the dispatcher's registry; the node is the caller's.
#ifndef TURNOUT_JIT_IR_RESOLVE_H_
#define TURNOUT_JIT_IR_RESOLVE_H_

#include <optional>
#include <string>
#include <string_view>

#include "dispatcher/operator_handle.h"
#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// The outcome of matching a node against the registered overloads.
struct Resolution {
  std::optional<OperatorHandle> op;  // set on success
  bool name_known = false;           // some overload of the name exists
  std::string error;                 // why not, when op is empty
};

/// Finds the overload of `n->kind()` that `n`'s input types fit best (or,
/// when `overload` is given, checks that one), also matching the number of
/// outputs. Does not change `n`.
Resolution findOperator(const Node* n,
                        std::optional<std::string_view> overload);

/// findOperator, then setOp(); throws Error(InvalidArgument) with the
/// reason when nothing fits.
void resolveOperator(Node* n);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_RESOLVE_H_

// Inlining: replaces each prim::CallFunction by the body of the function it
// calls (found in the graph's CompilationUnit, compilation_unit.h), as
// TorchScript's inlined_graph does, so that the other passes see through
// calls.
//
//   %f : Function = prim::Constant[name="inner"]()
//   %y : Tensor = prim::CallFunction(%f, %x)      # inner(x) = neg(x)
//   -> %y : Tensor = aten::neg(%x)                 # the Function constant goes
//
// Calls inside the inlined bodies are inlined too; a function that calls
// itself (directly or not) is refused, as TorchScript refuses recursion.
// Inlined values get fresh numeric names; the callee's nodes keep their
// source locations.
//
// Thread safety: changes the graph; the caller owns it. Reads the
// compilation unit, which may be shared.
#ifndef TURNOUT_JIT_PASSES_INLINE_H_
#define TURNOUT_JIT_PASSES_INLINE_H_

#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// Inlines every prim::CallFunction of `graph`, in every block. Returns true
/// when it changed the graph. Throws Error(InvalidArgument) for a call it
/// cannot resolve (naming the call and the missing function) or a
/// recursive one; the graph is then left unchanged.
bool inlineCalls(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_PASSES_INLINE_H_

// SavedVariable: a tensor a backward Node keeps, with the version it had,
// so that backward through a tensor modified in place since fails clearly.
//
//   self_ = SavedVariable(self);            // in the autograd kernel
//   Tensor s = self_.unpack(this);          // in apply(): checked
//
// Saving an output of the Node itself would make a reference cycle (output
// -> grad_fn -> saved output); such a Node saves the output's data only
// (SavedVariable(out, /*is_output=*/true)), and unpack(node) in grad mode
// gives back a new tensor over that data whose grad_fn is `node` again (as
// torch's SavedVariable reattaches the Node it was saved for), so that a
// formula using the result (exp' = exp) is itself differentiable under
// create_graph=True. Outside grad mode (a plain backward) the data comes
// back without history: nothing would record it.
//
// Under Python dispatch (a dispatch mode active, or a tensor subclass with a
// handler) saving an output, and unpacking it, makes its copy through the
// handlers, as torch's shallow_copy_and_detach does: they see one
// aten::detach call each time (see setPythonShallowCopyHook). An input, or
// an output the Node does not attach, is kept as it is and seen by nobody.
//
// Copies share one saved value: release() (the engine's, after backward
// without retain_graph) frees the tensor for all of them, and unpack()
// then raises torch's "backward through the graph a second time" error.
//
// Thread safety: as Node.
#ifndef TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_
#define TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_

#include <cstdint>
#include <memory>

#include "dispatcher/core/tensor.h"

namespace turnout {
namespace autograd {

class Node;

/// Makes torch's shallow_copy_and_detach of `t` through the Python key's
/// handlers when they want to see it (a dispatch mode active, or `t` a
/// subclass with a handler, and the Python key not excluded); returns an
/// undefined Tensor when none does. May throw what the handler raised.
using PythonShallowCopyHook = Tensor (*)(const Tensor& t);
/// Installed once by the Python bindings when they load; without them (a
/// plain C++ program) saving an output costs one relaxed atomic load more.
void setPythonShallowCopyHook(PythonShallowCopyHook hook);

class SavedVariable {
 public:
  SavedVariable() = default;
  /// `is_output`: `t` is output number `output_nr` of the Node that saves
  /// it (its grad_fn, once recorded). An output the Node does not attach
  /// (num_inputs() <= output_nr, or not floating point) comes back from
  /// unpack() without history; save it with is_output false instead (as
  /// torch keeps an output without grad_fn: no detach under Python
  /// dispatch).
  explicit SavedVariable(const Tensor& t, bool is_output = false,
                         uint32_t output_nr = 0);

  /// The saved tensor. Throws InvalidArgument when it was modified in place
  /// after being saved, naming the Node and both versions, or when it was
  /// released. An output comes back with `saved_for` as its grad_fn when
  /// grad mode is on (see above).
  Tensor unpack(const Node* saved_for) const;
  bool defined() const { return state_ != nullptr; }
  /// Frees the tensor (every copy of this SavedVariable sees it freed).
  void release() const;
  bool released() const { return state_ != nullptr && state_->released; }

 private:
  struct State {
    Tensor data;
    uint32_t saved_version = 0;
    bool released = false;
    bool is_output = false;
    uint32_t output_nr = 0;
  };
  // Null for an undefined tensor (nothing saved).
  std::shared_ptr<State> state_;
};

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_

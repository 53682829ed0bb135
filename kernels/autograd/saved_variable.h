// SavedVariable: a tensor a backward Node keeps, with the version it had,
// so that backward through a tensor modified in place since fails clearly.
//
//   self_ = SavedVariable(self);            // in the autograd kernel
//   Tensor s = self_.unpack(this);          // in apply(): checked
//
// Saving an output of the Node itself would make a reference cycle (output
// -> grad_fn -> saved output); such a Node saves the output's data only
// (SavedVariable(out, /*is_output=*/true)) and unpack() gives it back
// without history.
//
// Thread safety: as Node.
#ifndef TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_
#define TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_

#include <cstdint>

#include "dispatcher/core/tensor.h"

namespace turnout {
namespace autograd {

class Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  explicit SavedVariable(const Tensor& t, bool is_output = false);

  /// The saved tensor. Throws InvalidArgument when it was modified in place
  /// after being saved, naming the Node and both versions.
  Tensor unpack(const Node* saved_for) const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
};

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_SAVED_VARIABLE_H_

#include "kernels/autograd/saved_variable.h"

#include <string>

#include "dispatcher/core/error.h"
#include "kernels/autograd/node.h"

namespace turnout {
namespace autograd {
namespace {

std::string describe(const Tensor& t) {
  std::string out = "[" + std::string(toString(t.scalar_type())) + " [";
  for (size_t i = 0; i < t.sizes().size(); ++i) {
    out += (i ? ", " : "") + std::to_string(t.sizes()[i]);
  }
  return out + "]]";
}

}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  saved_version_ = t.unsafeGetTensorImpl()->version();
  // An output is kept as a tensor of its own over the same memory and
  // version counter, without autograd history: no cycle.
  data_ = is_output ? Tensor(make_intrusive<TensorImpl, UndefinedTensorImpl>(
                          t.storage(), t.scalar_type(), t.device(), t.layout(),
                          t.key_set()))
                    : t;
  if (is_output) {
    TensorImpl* impl = data_.unsafeGetTensorImpl();
    impl->set_sizes_and_strides(t.sizes(), t.strides());
    impl->set_storage_offset(t.storage_offset());
    impl->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
  }
}

Tensor SavedVariable::unpack(const Node* saved_for) const {
  if (!data_.defined()) return Tensor();
  const uint32_t current = data_.unsafeGetTensorImpl()->version();
  TURNOUT_CHECK(current == saved_version_, ErrorKind::InvalidArgument,
                "one of the variables needed for gradient computation has "
                "been modified by an inplace operation: ",
                describe(data_), ", which is saved by ",
                saved_for ? saved_for->name() : std::string("a node"),
                ", is at version ", current, "; expected version ",
                saved_version_,
                " instead. Hint: make the in-place operation out-of-place, or "
                "clone() the tensor before modifying it.");
  return data_;
}

}  // namespace autograd
}  // namespace turnout

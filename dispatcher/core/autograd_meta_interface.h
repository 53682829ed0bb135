// The hooks TensorImpl offers to autograd, which lives above the dispatcher
// (kernels/autograd): an opaque, owned autograd state, and a version counter
// that in-place writes bump and that views share with their base.
//
//   impl->bump_version();                  // an in-place kernel wrote to it
//   view_impl->set_version_counter(base_impl->version_counter());
//
// Thread safety: the version counter is atomic. The autograd state is set by
// the thread that owns the tensor before it is shared.
#ifndef TURNOUT_DISPATCHER_CORE_AUTOGRAD_META_INTERFACE_H_
#define TURNOUT_DISPATCHER_CORE_AUTOGRAD_META_INTERFACE_H_

#include <atomic>
#include <cstdint>

#include "dispatcher/core/intrusive_ptr.h"

namespace turnout {

/// Base of the autograd state a TensorImpl owns (see kernels/autograd).
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
};

/// How many in-place writes a tensor's memory has seen; shared by a tensor
/// and its views.
class VersionCounter : public IntrusivePtrTarget {
 public:
  uint32_t current() const { return version_.load(std::memory_order_relaxed); }
  void bump() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_AUTOGRAD_META_INTERFACE_H_

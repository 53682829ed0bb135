// Helpers shared by the dispatcher's tests: tensors that carry only a key
// set, and operator lookup by name.
//
//   Tensor x = testing::cpuTensor();
//   testing::op("ns::f").typed<Tensor(const Tensor&)>().call(x);
#ifndef TURNOUT_TESTS_DISPATCHER_TESTING_H_
#define TURNOUT_TESTS_DISPATCHER_TESTING_H_

#include <initializer_list>

#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"

namespace turnout {
namespace testing {

/// A tensor with no storage whose key set is `keys`.
inline Tensor tensorWith(std::initializer_list<DispatchKey> keys) {
  return detail::makeTensorWithKeySet(DispatchKeySet(keys));
}

/// A tensor with the keys of a CPU tensor that requires grad tracking:
/// CPU, AutogradCPU and ADInplaceOrView.
inline Tensor cpuTensor() {
  return tensorWith({DispatchKey::CPU, DispatchKey::AutogradCPU,
                     DispatchKey::ADInplaceOrView});
}

/// The operator "ns::name" (default overload); throws when it is not there.
inline OperatorHandle op(const char* name) {
  return Dispatcher::singleton().findSchemaOrThrow(name, "");
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_DISPATCHER_TESTING_H_

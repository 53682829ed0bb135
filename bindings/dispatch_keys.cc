#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/device.h"
#include "dispatcher/core/dispatch_key_set.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {

void initDispatchKeys(py::module_& m) {
  py::enum_<DispatchKey> key(m, "DispatchKey",
                             "A dispatch key, named as in c10.");
  for (int i = 0; i <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (isValidDispatchKey(k)) key.value(toString(k), k);
  }
  // As torch's: a key may be passed by name wherever a DispatchKey is taken
  // (_dispatch_has_backend_fallback("XLA")).
  key.def(py::init([](const std::string& name) { return parseDispatchKey(name); }),
          py::arg("name"));
  py::implicitly_convertible<py::str, DispatchKey>();

  py::class_<DispatchKeySet>(m, "DispatchKeySet",
                             "A set of dispatch keys (c10's DispatchKeySet).")
      .def(py::init<>())
      .def(py::init<DispatchKey>())
      .def(py::init([](const std::vector<DispatchKey>& keys) {
        DispatchKeySet ks;
        for (DispatchKey k : keys) ks = ks.add(k);
        return ks;
      }))
      .def("__or__", [](DispatchKeySet a, DispatchKeySet b) { return a | b; })
      .def("__and__", [](DispatchKeySet a, DispatchKeySet b) { return a & b; })
      .def("__sub__", [](DispatchKeySet a, DispatchKeySet b) { return a - b; })
      .def("__eq__", [](DispatchKeySet a, DispatchKeySet b) { return a == b; })
      .def("__hash__", [](DispatchKeySet a) { return a.raw_repr(); })
      .def("has", &DispatchKeySet::has)
      .def("add", [](DispatchKeySet a, DispatchKey k) { return a.add(k); })
      .def("remove", [](DispatchKeySet a, DispatchKey k) { return a.remove(k); })
      .def("empty", &DispatchKeySet::empty)
      .def("raw_repr", &DispatchKeySet::raw_repr)
      .def("highestPriorityTypeId", &DispatchKeySet::highestPriorityTypeId)
      .def("__iter__",
           [](DispatchKeySet ks) {
             return py::iter(py::cast(std::vector<DispatchKey>(ks.begin(), ks.end())));
           })
      .def("__repr__", [](DispatchKeySet ks) { return toString(ks); });

  m.def("_dispatch_key_name", [](DispatchKey k) { return std::string(toString(k)); });
  m.def("_dispatch_key_parse", &parseDispatchKey,
        "The key named `name`; ValueError 'could not parse dispatch key: NAME'.");
  m.def("_dispatch_keyset_full_after", [](DispatchKey k) {
    return DispatchKeySet(DispatchKeySet::FULL_AFTER, k);
  });
  m.def("_dispatch_keyset_full",
        [] { return DispatchKeySet(DispatchKeySet::FULL); });
  m.def("_dispatch_is_alias_key", &isAliasDispatchKey);
  m.def(
      "_dispatch_is_included_in_alias",
      [](DispatchKey k, DispatchKey alias) {
        return runtimeDispatchKeySetHas(alias, k);
      },
      "True when a kernel at alias key `alias` serves runtime key `k` (as "
      "torch's; False for Undefined).");
  m.attr("_dispatch_autogradother_backends") = autogradother_backends;
  m.def("_dispatch_keyset_to_string",
        [](DispatchKeySet ks) { return toString(ks); });
  m.def("_to_functionality_key", &toFunctionalityKey,
        "The functionality of a key: AutogradCPU -> AutogradFunctionality, "
        "CPU -> Dense, Python -> Python.");
  m.def(
      "_functionality_to_backend_keys",
      [](DispatchKey k) {
        std::vector<DispatchKey> out;
        if (!isPerBackendFunctionalityKey(k)) return std::vector<DispatchKey>{k};
        for (int b = 1; b <= kNumBackends; ++b) {
          out.push_back(toRuntimePerBackendFunctionalityKey(
              k, static_cast<BackendComponent>(b)));
        }
        return out;
      },
      "The runtime keys of a per-backend functionality, one per backend "
      "(Dense -> [CPU, CUDA, ...]); any other key alone.");
  m.def("_dispatch_num_backends", [] { return kNumBackends; },
        "How many backend components a DispatchKeySet has bits for.");
  m.def(
      "_dispatch_key_for_device",
      [](const std::string& device_type) {
        return std::string(toString(computeDispatchKey(
            ScalarType::Float, Layout::Strided, Device(device_type))));
      },
      py::arg("device_type"),
      "The backend key of a dense tensor on `device_type` ('cpu' -> 'CPU', "
      "'cuda' -> 'CUDA', 'meta' -> 'Meta').");
  m.def("_dispatch_get_backend_keyset_from_autograd",
        &getBackendKeySetFromAutograd,
        "The backend keys an autograd key covers (AutogradCPU -> CPU, ...).");
  // As c10's after_autograd_keyset / after_ADInplaceOrView_keyset: what a
  // kernel at those keys redispatches with.
  m.attr("_after_autograd_keyset") =
      DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradOther);
  m.attr("_after_ADInplaceOrView_keyset") =
      DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::ADInplaceOrView);
}

}  // namespace bindings
}  // namespace turnout

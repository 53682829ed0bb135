#include <pybind11/operators.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <vector>

#include "bindings/bindings.h"
#include "dispatcher/dispatch_key_set.h"

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
  m.def("_dispatch_keyset_to_string",
        [](DispatchKeySet ks) { return toString(ks); });
}

}  // namespace bindings
}  // namespace turnout

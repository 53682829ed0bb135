#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "dispatcher/schema/schema_parser.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

// The operator called `name` ("ns::op" or "ns::op.overload"), with a
// schema or at least one kernel; ValueError otherwise.
OperatorHandle findOp(const std::string& name) {
  OperatorName op = parseName(name);
  std::optional<OperatorHandle> handle = Dispatcher::singleton().findOp(op);
  TURNOUT_CHECK(handle.has_value(), ErrorKind::InvalidArgument,
                "no operator named '", name,
                "' is registered (no def and no kernel); check the name and "
                "the overload, e.g. 'aten::add.Tensor'");
  return *handle;
}

// The operator called `name`, or nothing when it has no schema and no
// kernel.
std::optional<OperatorHandle> findOpIfAny(const std::string& name) {
  return Dispatcher::singleton().findOp(parseName(name));
}

std::vector<std::string> names(const std::vector<OperatorName>& ops) {
  std::vector<std::string> out;
  out.reserve(ops.size());
  for (const OperatorName& op : ops) out.push_back(toString(op));
  return out;
}

}  // namespace

void initDispatcher(py::module_& m) {
  // As torch's: an operator that does not exist (yet, or any more) dumps as
  // "" and has no invariants to break.
  m.def(
      "_dispatch_dump",
      [](const std::string& name) {
        std::optional<OperatorHandle> op = findOpIfAny(name);
        return op ? op->dumpState() : std::string();
      },
      "The registrations of one operator, in c10's dumpState() format; '' "
      "for an operator with no def and no kernel.");
  m.def(
      "_dispatch_dump_table",
      [](const std::string& name) {
        std::optional<OperatorHandle> op = findOpIfAny(name);
        return op ? op->dumpComputedTable() : std::string();
      },
      "What each runtime key of one operator runs, and why; '' for an "
      "operator with no def and no kernel.");
  m.def(
      "_dispatch_has_kernel",
      [](const std::string& name) {
        return Dispatcher::singleton().findOp(parseName(name)).has_value();
      },
      "True when operator `name` has a schema or a kernel.");
  m.def("_dispatch_kernel_for_dispatch_key_is_fallthrough",
        [](const std::string& name, DispatchKey k) {
          return findOp(name).isKernelFallthroughKernel(k);
        },
        "True when the computed entry of runtime key `k` is a fallthrough.");
  m.def(
      "_dispatch_get_tags",
      [](const std::string& name) { return findOp(name).tags(); },
      py::arg("name"),
      "The tags given with the schema of operator `name` "
      "(\"ns::op.overload\"), in order.");
  m.def(
      "_dispatch_check_invariants",
      [](const std::string& name) {
        if (std::optional<OperatorHandle> op = findOpIfAny(name)) {
          op->checkInvariants();
        }
      },
      "Asserts the invariants of operator `name` (nothing to check for an "
      "operator with no def and no kernel).");
  m.def("_dispatch_check_all_invariants",
        [] { Dispatcher::singleton().checkInvariants(); });
  m.def("_dispatch_has_kernel_for_dispatch_key",
        [](const std::string& name, DispatchKey k) {
          return findOp(name).hasKernelForDispatchKey(k);
        });
  m.def("_dispatch_has_kernel_for_any_dispatch_key",
        [](const std::string& name, DispatchKeySet ks) {
          return findOp(name).hasKernelForAnyDispatchKey(ks);
        });
  m.def("_dispatch_has_computed_kernel_for_dispatch_key",
        [](const std::string& name, DispatchKey k) {
          return findOp(name).hasComputedKernelForDispatchKey(k);
        });
  m.def("_dispatch_find_dangling_impls", [] {
    std::vector<std::string> out;
    for (const OperatorHandle& op : Dispatcher::singleton().findDanglingImpls()) {
      out.push_back(op.dumpState());
    }
    return out;
  });
  m.def("_dispatch_get_all_op_names",
        [] { return names(Dispatcher::singleton().getAllOpNames()); });
  m.def("_dispatch_get_registrations_for_dispatch_key",
        [](const std::string& key) {
          std::optional<DispatchKey> k;
          if (!key.empty()) k = parseDispatchKey(key);
          return names(Dispatcher::singleton().getRegistrationsForDispatchKey(k));
        },
        py::arg("dispatch_key") = "");
  m.def(
      "_dispatch_print_registrations_for_dispatch_key",
      [](const std::string& key) {
        std::optional<DispatchKey> k;
        if (!key.empty()) k = parseDispatchKey(key);
        py::object print = py::module_::import("builtins").attr("print");
        for (const OperatorName& op :
             Dispatcher::singleton().getRegistrationsForDispatchKey(k)) {
          print(toString(op));
        }
      },
      py::arg("dispatch_key") = "",
      "Prints, one a line, the operators with a kernel for `dispatch_key` "
      "(every registered operator when '').");
  m.def(
      "_dispatch_key_set",
      [](const Tensor& t) { return toString(t.key_set()); },
      "The key set of a tensor, as text (torch's _dispatch_key_set).");
  m.def("_dispatch_has_backend_fallback", [](DispatchKey k) {
    return Dispatcher::singleton().hasBackendFallbackForDispatchKey(k);
  });

  m.def("_dispatch_tls_set_dispatch_key_excluded",
        &tls_set_dispatch_key_excluded);
  m.def("_dispatch_tls_set_dispatch_key_included",
        &tls_set_dispatch_key_included);
  m.def("_dispatch_tls_is_dispatch_key_excluded", &tls_is_dispatch_key_excluded);
  m.def("_dispatch_tls_is_dispatch_key_included", &tls_is_dispatch_key_included);
  m.def("_dispatch_tls_local_include_set",
        [] { return tls_local_dispatch_key_set().included_; });
  m.def("_dispatch_tls_local_exclude_set",
        [] { return tls_local_dispatch_key_set().excluded_; });
}

}  // namespace bindings
}  // namespace turnout

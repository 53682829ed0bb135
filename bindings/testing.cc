// turnout._C's side of turnout.library.opcheck and turnout.autograd.gradcheck.
//
//   >>> _C._opcheck("aten::add", "Tensor", (x, y), {}, ["test_schema"], 1e-6, 1e-5, 1e-3)
//   [('test_schema', True, '')]
//   >>> _C._gradcheck(lambda ts: [t.tanh() for t in ts], [x], 1e-6, 1e-5, 1e-3)
//   (True, '')
//
// Bindings convert and delegate: the rules are in testing/opcheck.h and
// kernels/autograd/gradcheck.h, shared with C++ callers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/gil.h"
#include "bindings/ivalue.h"
#include "bindings/python_error.h"
#include "bindings/tensor.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "kernels/autograd/gradcheck.h"
#include "testing/opcheck.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

using OpCheckRow = std::tuple<std::string, bool, std::string>;

std::vector<OpCheckRow> opcheckBinding(const std::string& qualname,
                                       const std::string& overload,
                                       const py::tuple& args,
                                       const py::dict& kwargs,
                                       const std::vector<std::string>& tests,
                                       double eps, double atol, double rtol) {
  const std::string o = overload == "default" ? "" : overload;
  std::optional<OperatorHandle> op =
      Dispatcher::singleton().findSchema(OperatorName{qualname, o});
  TURNOUT_CHECK(op.has_value(), ErrorKind::InvalidArgument,
                "opcheck: no operator ", qualname, o.empty() ? "" : ".", o,
                " has a schema; check the name, e.g. "
                "turnout.ops.aten.add.Tensor or 'aten::add.Tensor'");
  Stack stack = bindArguments(*op, args, kwargs);
  testing::OpCheckOptions options;
  options.tests = tests;
  options.eps = eps;
  options.atol = atol;
  options.rtol = rtol;
  testing::OpCheckReport report;
  // Python kernels take the GIL back themselves.
  withoutGil([&] { report = testing::opcheck(*op, stack, options); });
  std::vector<OpCheckRow> rows;
  for (const testing::OpCheckResult& r : report.results) {
    rows.emplace_back(r.test, r.ok, r.message);
  }
  return rows;
}

std::pair<bool, std::string> gradcheckBinding(const py::function& fn,
                                              const py::list& inputs,
                                              double eps, double atol,
                                              double rtol) {
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    py::handle h = inputs[i];
    TURNOUT_CHECK(isTensor(h.ptr()), ErrorKind::Type, "gradcheck: input ", i,
                  " must be a Tensor, got ", describePyType(h));
    tensors.push_back(unpackTensor(h.ptr()));
  }
  // fn(list of tensors) -> list of tensors, called with the GIL held; its
  // exceptions travel through gradcheck as PythonError.
  autograd::GradcheckFunction call = [&fn](const std::vector<Tensor>& in) {
    GilAcquire gil;
    try {
      py::list args;
      for (const Tensor& t : in) args.append(wrapTensor(t));
      py::object out = fn(args);
      std::vector<Tensor> result;
      for (py::handle h : out) {
        TURNOUT_CHECK(isTensor(h.ptr()), ErrorKind::Type,
                      "gradcheck: the function must return tensors, got ",
                      describePyType(h));
        result.push_back(unpackTensor(h.ptr()));
      }
      return result;
    } catch (py::error_already_set& e) {
      throw PythonError(e);
    }
  };
  autograd::GradcheckOptions options;
  options.eps = eps;
  options.atol = atol;
  options.rtol = rtol;
  options.raise_exception = false;
  autograd::GradcheckResult result;
  withoutGil([&] { result = autograd::gradcheck(call, tensors, options); });
  return {result.ok, result.message};
}

}  // namespace

void initTesting(py::module_& m) {
  m.def("_opcheck", &opcheckBinding, py::arg("qualname"), py::arg("overload"),
        py::arg("args"), py::arg("kwargs"), py::arg("tests"), py::arg("eps"),
        py::arg("atol"), py::arg("rtol"),
        "testing::opcheck on a call with these Python arguments: a list of "
        "(test, ok, message).");
  m.def("_gradcheck", &gradcheckBinding, py::arg("fn"), py::arg("inputs"),
        py::arg("eps"), py::arg("atol"), py::arg("rtol"),
        "autograd::gradcheck of fn (list of tensors -> list of tensors) at "
        "inputs: (ok, message).");
}

}  // namespace bindings
}  // namespace turnout

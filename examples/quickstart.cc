// turnout quickstart: define a small operator library, call it unboxed and
// boxed, and look at how the dispatcher routes it.
//
//   bazel run //examples:quickstart
#include <iostream>

#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "dispatcher/tensor.h"

using turnout::CppFunction;
using turnout::DispatchKey;
using turnout::Tensor;

namespace {

Tensor newLike(const Tensor& x) {
  return turnout::detail::makeEmptyTensor(x.sizes(), x.scalar_type(), x.device());
}

// The CPU kernel of quickstart::scale.
Tensor scale_cpu(const Tensor& x, double factor) {
  Tensor out = newLike(x);
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) o[i] = in[i] * static_cast<float>(factor);
  return out;
}

// A CompositeImplicitAutograd kernel: written in terms of other operators,
// it serves every backend that has a kernel for those.
Tensor double_it(const Tensor& x) {
  static auto scale = turnout::Dispatcher::singleton()
                          .findSchemaOrThrow("quickstart::scale", "")
                          .typed<Tensor(const Tensor&, double)>();
  return scale.call(x, 2.0);
}

void print(const char* label, const Tensor& t) {
  std::cout << label << " = [";
  for (int64_t i = 0; i < t.numel(); ++i) {
    std::cout << (i ? ", " : "") << t.data_ptr<float>()[i];
  }
  std::cout << "]\n";
}

}  // namespace

TURNOUT_LIBRARY(quickstart, m) {
  m.def("scale(Tensor x, float factor) -> Tensor");
  m.def("double_it(Tensor x) -> Tensor", TURNOUT_FN(double_it));
}

TURNOUT_LIBRARY_IMPL(quickstart, CPU, m) {
  m.impl("scale", TURNOUT_FN(scale_cpu));
}

// The tracer has nothing to record for scale: skip the key entirely.
TURNOUT_LIBRARY_IMPL(quickstart, Tracer, m) {
  m.impl("scale", CppFunction::makeFallthrough());
}

int main() {
  auto& dispatcher = turnout::Dispatcher::singleton();
  Tensor x = turnout::detail::makeEmptyTensor({3}, turnout::ScalarType::Float,
                                              turnout::Device("cpu"));
  for (int i = 0; i < 3; ++i) x.data_ptr<float>()[i] = static_cast<float>(i + 1);
  print("x", x);

  // Unboxed: typed arguments straight to the kernel.
  auto scale = dispatcher.findSchemaOrThrow("quickstart::scale", "")
                   .typed<Tensor(const Tensor&, double)>();
  print("scale(x, 10)", scale.call(x, 10.0));

  // Boxed: arguments on a stack, as interpreters and Python call.
  turnout::OperatorHandle double_it =
      dispatcher.findSchemaOrThrow("quickstart::double_it", "");
  turnout::Stack stack{turnout::IValue(x)};
  double_it.callBoxed(stack);
  print("double_it(x)", stack[0].toTensor());

  turnout::OperatorHandle scale_op =
      dispatcher.findSchemaOrThrow("quickstart::scale", "");
  std::cout << "\n== quickstart::scale dumpState() ==\n" << scale_op.dumpState();
  std::cout << "\n== quickstart::scale dumpComputedTable() ==\n"
            << scale_op.dumpComputedTable();
  std::cout << "\n== quickstart::double_it dumpState() ==\n"
            << double_it.dumpState();
  return 0;
}

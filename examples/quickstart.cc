// turnout quickstart: define a small operator library, call it unboxed and
// boxed, see how the dispatcher routes it; then compute with tensors.
//
//   bazel run //examples:quickstart
#include <iostream>
#include <sstream>
#include <string>

#include "dispatcher/core/tensor.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "jit/runtime/graph_executor.h"
#include "jit/tracer/tracer.h"
#include "kernels/ops.h"

using turnout::CppFunction;
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

// ---- Tensors: the reference operators through the C++ front end ------------

namespace {

// Prints "a = [[0, 1, 2], [3, 4, 5]]" (2-d), "[3, 12]" (1-d) or "15" (0-d).
void show(const char* expression, const Tensor& t) {
  Tensor d = t.to(turnout::kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  const int64_t rows = d.dim() == 2 ? d.size(0) : 1;
  const int64_t cols = d.dim() == 0 ? 1 : d.size(-1);
  std::cout << expression << " = " << (d.dim() == 2 ? "[" : "");
  for (int64_t r = 0; r < rows; ++r) {
    std::cout << (r ? ", " : "") << (d.dim() > 0 ? "[" : "");
    for (int64_t c = 0; c < cols; ++c) {
      std::cout << (c ? ", " : "") << p[r * cols + c];
    }
    std::cout << (d.dim() > 0 ? "]" : "");
  }
  std::cout << (d.dim() == 2 ? "]" : "") << "\n";
}

void tensorTour() {
  // Factories: Float on the CPU unless told otherwise.
  Tensor a = turnout::arange(6, turnout::kFloat).view({2, 3});
  Tensor b = turnout::ones({2, 3});
  Tensor w = turnout::full({3, 2}, 0.5);
  show("a", a);
  show("b", b);
  show("w", w);

  // Operators, free functions and methods: each call goes through the
  // dispatcher to the CPU kernel of aten::add.Tensor, aten::mm, ...
  show("a + b", a + b);
  show("a * 2 - b", a * 2 - b);
  show("a.mm(w)", a.mm(w));
  show("a.t()", a.t());
  show("a.sum()", a.sum());
  show("a.sum({1})", a.sum({1}));
  show("turnout::relu(a - 2)", turnout::relu(a - 2));
  std::cout << "a.mm(w) is " << a.mm(w) << "\n";
  std::cout << "a.sum().item<double>() = " << a.sum().item<double>() << "\n";

  // Autograd: the operators run on a tensor that requires grad are recorded;
  // backward() runs their derivatives and accumulates into grad().
  Tensor v = turnout::full({3, 2}, 0.5);
  v.requires_grad_();
  a.mm(v).sum().backward();
  show("v.grad() after a.mm(v).sum().backward()", v.grad());
}

// ---- Graphs: trace a function, run the graph with the executor -----------

void graphTour() {
  // Tracing runs the function once and records every operator it calls,
  // outermost calls only: quickstart::double_it is one node, though its
  // kernel calls quickstart::scale.
  static auto double_it = turnout::Dispatcher::singleton()
                              .findSchemaOrThrow("quickstart::double_it", "")
                              .typed<Tensor(const Tensor&)>();
  auto model = [](const Tensor& a, const Tensor& w) {
    return double_it.call(turnout::relu(a.mm(w) - 1));
  };
  Tensor a = turnout::arange(6, turnout::kFloat).view({2, 3});
  Tensor w = turnout::full({3, 2}, 0.5);
  std::unique_ptr<turnout::jit::Graph> graph = turnout::jit::trace(
      [&](const std::vector<turnout::IValue>& in) {
        return std::vector<turnout::IValue>{
            model(in[0].toTensor(), in[1].toTensor())};
      },
      {a, w}, {{"a", "w"}});
  std::cout << "traced graph:\n" << *graph;

  // The graph executor runs it on new inputs, through the same kernels:
  // on the first call it makes a plan for the inputs' dtypes, devices and
  // ranks -- the graph typed by them, optimised (shapes propagated,
  // constants folded and merged, dead code removed) and compiled.
  turnout::jit::GraphExecutor executor(*graph);
  turnout::Stack stack{turnout::IValue(a * 2), turnout::IValue(w)};
  executor.run(stack);
  show("graph(a * 2, w)", stack[0].toTensor());
  show("model(a * 2, w)", model(a * 2, w));
  // Here: tensor types propagated from the inputs' (dtype, rank), and the
  // tracer's two constants 1 merged into one.
  std::cout << "what the executor ran (optimised for these inputs):\n"
            << *executor.lastExecutedOptimizedGraph();
  // Inputs of the same dtypes, devices and ranks reuse that plan; others
  // (say, Double tensors) would get a plan of their own.
  stack = {turnout::IValue(a * 3), turnout::IValue(w)};
  executor.run(stack);
  show("graph(a * 3, w)", stack[0].toTensor());
  std::cout << "plans made: " << executor.getDebugState().plans.size() << "\n";
}

}  // namespace

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
  // What each runtime key runs, and why: one line per key. The lines of the
  // keys a CPU call meets, and of the key quickstart skips (README.md shows
  // them; //tests/examples:readme_samples_test checks that it does).
  std::cout << "\n== quickstart::scale dumpComputedTable() excerpt ==\n";
  std::istringstream table(scale_op.dumpComputedTable());
  for (std::string line; std::getline(table, line);) {
    const std::string key = line.substr(0, line.find(':'));
    if (key == "CPU" || key == "AutogradCPU" || key == "Tracer") {
      std::cout << line << "\n";
    }
  }
  std::cout << "\n== quickstart::double_it dumpState() ==\n"
            << double_it.dumpState();

  std::cout << "\n== tensors ==\n";
  tensorTour();

  std::cout << "\n== graphs ==\n";
  graphTour();
  return 0;
}

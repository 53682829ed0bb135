// Calls myops::scaled_add (my_ops.cc) through the dispatcher: on CPU
// tensors, on meta tensors (shapes only), and with autograd; then prints
// what the dispatcher runs for it per key, with each kernel's registration
// site.
//
//   ./main      # built by the Makefile or CMakeLists.txt beside this file
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string>

#include "dispatcher/dispatcher.h"
#include "kernels/autograd/node.h"  // grad_fn()->name()
#include "kernels/ops.h"
#include "my_ops.h"

using turnout::Tensor;

namespace {

// "[0.5, 1.5, 2.5, 3.5]": the values of a 1-d Float tensor on the CPU.
std::string values(const Tensor& t) {
  const Tensor c = t.contiguous();
  std::ostringstream out;
  out << "[";
  for (int64_t i = 0; i < c.numel(); ++i) {
    out << (i ? ", " : "") << c.data_ptr<float>()[i];
  }
  return out.str() + "]";
}

}  // namespace

int main() {
  const Tensor a = turnout::arange(4, turnout::kFloat);  // [0, 1, 2, 3]
  const Tensor b = turnout::ones({4});

  std::cout << "scaled_add(a, b, 0.5) = "
            << values(myops::scaled_add(a, b, 0.5)) << "\n";

  // The Meta kernel: the output's shape and dtype, no data.
  const Tensor m = myops::scaled_add(a.to(turnout::Device("meta")),
                                     b.to(turnout::Device("meta")), 0.5);
  std::cout << "on meta: " << m << "\n";

  // The autograd kernel: d/da = 1, d/db = alpha.
  a.requires_grad_();
  b.requires_grad_();
  const Tensor y = myops::scaled_add(a, b, 0.5);
  y.sum().backward();
  std::cout << "grad_fn: " << y.grad_fn()->name() << "\n";
  std::cout << "a.grad = " << values(a.grad()) << "\n";
  std::cout << "b.grad = " << values(b.grad()) << "\n";

  const turnout::OperatorHandle op =
      turnout::Dispatcher::singleton().findSchemaOrThrow("myops::scaled_add",
                                                         "");
  std::cout << "\n" << op.schema() << "\n" << op.dumpComputedTable();
  return 0;
}

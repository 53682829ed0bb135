// The example PrivateUse1 backend at work: tensors on the device, an
// operator with a kernel of the backend's own, operators that run through
// its CPU fallback, and the dispatch tables that say which is which.
//
//   bazel run //examples/privateuse1:demo
#include <iostream>
#include <sstream>
#include <string>

#include "dispatcher/dispatcher.h"
#include "examples/privateuse1/backend.h"
#include "kernels/ops.h"

using turnout::Tensor;

namespace {

void print(const char* label, const Tensor& t) {
  Tensor host = t.to(turnout::kCPU).contiguous();
  std::cout << label << " on " << t.device() << " = [";
  for (int64_t i = 0; i < host.numel(); ++i) {
    std::cout << (i ? ", " : "") << host.data_ptr<float>()[i];
  }
  std::cout << "]\n";
}

}  // namespace

int main() {
  const turnout::Device device = privateuse1_example::device();
  Tensor x = turnout::arange(6, turnout::kFloat).view({2, 3}).to(device);
  print("x", x);
  print("x.add(x)                (own kernel)", x.add(x));
  print("x.mul(x).sub(6).relu()  (fallback)", x.mul(x).sub(6).relu());
  print("x.sum({1})              (fallback)", x.sum({1}));
  x.mul_(10);  // in place, through the fallback: written back to the device
  print("x after x.mul_(10)      (fallback)", x);

  privateuse1_example::Stats s = privateuse1_example::stats();
  std::cout << "\nfallback calls: " << s.fallback_calls
            << ", own add kernel calls: " << s.add_kernel_calls
            << ", device allocations: " << s.allocations << " ("
            << s.live_allocations << " live)\n";

  // The computed dispatch tables say where a call on the device goes: this
  // backend's kernel for add.Tensor, its fallback for mul.Tensor. (Only the
  // backend lines are printed; the full tables list every runtime key.)
  auto& dispatcher = turnout::Dispatcher::singleton();
  for (const char* name : {"add", "mul"}) {
    std::cout << "\n== aten::" << name << ".Tensor dumpComputedTable() ==\n";
    std::istringstream table(
        dispatcher.findSchemaOrThrow(std::string("aten::") + name, "Tensor")
            .dumpComputedTable());
    for (std::string line; std::getline(table, line);) {
      if (line.rfind("CPU:", 0) == 0 || line.rfind("PrivateUse1:", 0) == 0) {
        std::cout << line << "\n";
      }
    }
  }
  return 0;
}

#include "bindings/gil.h"

#include <Python.h>

#include <chrono>
#include <thread>

namespace turnout {
namespace bindings {

void parkIfFinalizing() {
  if (__builtin_expect(_Py_IsFinalizing(), 0)) parkForever();
}

void parkForever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace bindings
}  // namespace turnout

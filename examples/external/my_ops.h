// A user's library of operators, built outside turnout's tree: its C++ front
// end. The operator itself is myops::scaled_add, defined in my_ops.cc:
//
//   scaled_add(Tensor a, Tensor b, float alpha) -> Tensor   # a + alpha * b
//
//   #include "my_ops.h"
//   turnout::Tensor y = myops::scaled_add(a, b, 0.5);
//
// Programs that call the operator through this function link libmy_ops.so;
// others (Python, `inspect --load`) load the library and find the operator
// by name in the dispatcher.
#ifndef MY_OPS_H_
#define MY_OPS_H_

#include "dispatcher/core/tensor.h"

namespace myops {

/// a + alpha * b, elementwise, through the dispatcher: CPU and Meta kernels,
/// and autograd. a and b must be Float tensors of the same shape.
turnout::Tensor scaled_add(const turnout::Tensor& a, const turnout::Tensor& b,
                           double alpha);

}  // namespace myops

#endif  // MY_OPS_H_

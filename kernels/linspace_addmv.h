// The C++ front end of aten::linspace and aten::addmv.
//
//   Tensor t = turnout::linspace(0, 1, 5);            // 0, .25, .5, .75, 1
//   Tensor y = turnout::addmv(b, w, x, /*beta=*/1, /*alpha=*/2);  // b + 2 w@x
//
// linspace: `steps` evenly spaced values, both ends included (Float unless
// the options say otherwise; integral dtypes truncate). addmv: beta * self
// + alpha * (mat @ vec), self broadcast to mat's rows; with beta == 0,
// self's values are ignored.
//
// Thread safety: as the dispatcher; reentrant.
#ifndef TURNOUT_KERNELS_LINSPACE_ADDMV_H_
#define TURNOUT_KERNELS_LINSPACE_ADDMV_H_

#include <cstdint>

#include "dispatcher/core/scalar.h"
#include "dispatcher/core/tensor.h"
#include "kernels/factory.h"

namespace turnout {

/// aten::linspace.
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                TensorOptions options = {});
/// aten::addmv.
Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec,
             const Scalar& beta = 1, const Scalar& alpha = 1);

}  // namespace turnout

#endif  // TURNOUT_KERNELS_LINSPACE_ADDMV_H_

// The C++ front end of the reference operators (namespace aten), in one
// include: free functions such as turnout::add, turnout::sum, turnout::mm
// that call through the dispatcher.
//
//   #include "kernels/ops.h"
//   Tensor y = turnout::relu(turnout::add(x, b));
//
// One line per area header; link //kernels:ops.
#ifndef TURNOUT_KERNELS_OPS_H_
#define TURNOUT_KERNELS_OPS_H_

#include "kernels/batch_norm.h"
#include "kernels/conv.h"
#include "kernels/copy.h"
#include "kernels/dim_ops.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/linalg.h"
#include "kernels/linspace_addmv.h"
#include "kernels/nn.h"
#include "kernels/pool.h"
#include "kernels/rnn_cell.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/scalar_ops.h"
#include "kernels/shape.h"
#include "kernels/shape_ops.h"
#include "kernels/unary_math.h"

#endif  // TURNOUT_KERNELS_OPS_H_

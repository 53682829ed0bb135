// The host-side interface of the CUDA kernels (elementwise.cu, reduce.cu):
// plain structs of pointers, dtypes and strides, and launchers that return
// a cudaError_t as an int. Nothing here includes CUDA or turnout headers, so
// the .cu files build with nvcc alone and the .cc files with the C++
// compiler alone; the .cc files fill the structs from Tensors, check the
// returned error and throw turnout::Error.
//
//   ElementwiseArgs args;                       // built by cuda_loops.cc
//   args.op = ElementwiseOp::Add;  ...
//   int err = launchElementwise(args, kDtypeFloat);  // 0 is cudaSuccess
//
// Dtypes are ScalarType's enumerator values (Byte = 0 ... BFloat16 = 15).
// Device code never throws: a launch reports through its return value.
#ifndef TURNOUT_KERNELS_CUDA_LAUNCH_H_
#define TURNOUT_KERNELS_CUDA_LAUNCH_H_

#include <cstdint>

// cudaStream_t is `CUstream_st*`; declared here so that this header needs no
// CUDA header. Every launcher queues its work on the stream it is given
// (nullptr: the default stream); the .cc callers pass the current stream
// (stream.h's currentStreamHandle()).
struct CUstream_st;

namespace turnout {
namespace cuda {

/// The most dimensions an elementwise operand may have.
constexpr int kMaxDims = 16;
/// The most inputs of one elementwise operation (where.self has three).
constexpr int kMaxInputs = 3;

/// What an elementwise kernel computes per element, in the compute dtype's
/// math type (float for Half and BFloat16). Inputs are first converted to
/// the compute dtype, as the CPU kernels' castTo does; the result (compute
/// dtype, or Bool for comparisons) is converted to the output's dtype.
enum class ElementwiseOp : int {
  Copy,   // in0
  Fill,   // scalar0
  Add,    // in0 + scalar0 (alpha) * in1
  Sub,    // in0 - scalar0 (alpha) * in1
  Mul,
  Div,    // floating compute only
  Eq, Ne, Lt, Le, Gt, Ge,  // Bool results
  Neg, Abs, Exp, Log, Sqrt, Tanh, Sigmoid, Relu,
  Pow,    // in0 ** scalar0
  Clamp,  // scalar0 = min (if has_scalar[0]), scalar1 = max (if has_scalar[1])
  Where,  // in0 (Bool) ? in1 : in2
  // Unary, floating compute only (the host computes integral and Bool
  // inputs in the default float dtype).
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Expm1, Log2, Log10, Log1p,
  Rsqrt, Reciprocal, Erf, Acosh, Asinh, Atanh, Erfc, Lgamma, Digamma, Angle,
  // Unary in the input's dtype.
  Sign,
  Floor, Ceil, Round, Trunc,  // integral inputs are copied
  RoundDecimals,  // scalar0.f = 10^|decimals|, scalar0.i = decimals < 0
  Polygamma,      // psi^(n)(in0), n = scalar0.i >= 0; floating compute only
  BitwiseNot,     // integral and Bool compute only
  LogicalNot,     // Bool result: in0 == 0
  // Binary, both inputs converted to the compute dtype.
  Maximum, Minimum,  // NaN propagates (the first NaN operand)
  Fmod,              // C's fmod; integers: sign of in0, 0 for a 0 divisor
  Remainder,         // Python's %; integers: sign of in1, 0 for a 0 divisor
  FloorDivide,       // Python's //; integers: 0 for a 0 divisor
  BitwiseXor,        // integral and Bool compute only
  PowTensor,         // in0 ** in1; integers: wrapping, 0 for a negative
                     // exponent but of a base of 1 or -1
  TanhBackward,      // in0 * (1 - in1^2); floating compute only
  SigmoidBackward,   // in0 * (1 - in1) * in1; floating compute only
  // Ternary, the inputs converted to the compute dtype.
  Addcmul,  // in0 + scalar0 (value) * in1 * in2; integers wrap
  Addcdiv,  // in0 + scalar0 (value) * in1 / in2; floating compute only
  Lerp,     // in0 + w * (in1 - in0), w = scalar0 if has_scalar[0] else in2,
            // as the CPU kernel computes it; floating compute only
};

/// One operand: data at element 0, dtype, and strides in elements over the
/// output's dimensions (0 for broadcast dimensions).
struct Operand {
  void* data = nullptr;
  int dtype = 0;
  int64_t strides[kMaxDims] = {};
};

/// A Scalar argument, held as the compute type will read it.
struct ScalarArg {
  double f = 0;     // for floating compute dtypes
  int64_t i = 0;    // for integral and Bool compute dtypes
};

struct ElementwiseArgs {
  ElementwiseOp op = ElementwiseOp::Copy;
  int ndim = 0;
  int num_inputs = 0;
  int64_t numel = 0;
  int64_t sizes[kMaxDims] = {};
  Operand out;
  Operand in[kMaxInputs];
  ScalarArg scalar[2];
  bool has_scalar[2] = {false, false};
  /// When >= 0: input `scalar_input` is not read from memory but is
  /// scalar[1] in the math type, unrounded (a Scalar operand, as the CPU
  /// kernels use it).
  int scalar_input = -1;
};

/// Runs `args` on `stream` of the current device with compute dtype
/// `compute_dtype`. Returns 0 (cudaSuccess) or the launch's error code.
int launchElementwise(const ElementwiseArgs& args, int compute_dtype,
                      CUstream_st* stream);

enum class ReduceOp : int { Sum, Mean, Max, Min, ArgMax, Prod, ArgMin };

/// Bytes of device scratch memory launchReduce needs for `outer` rows of
/// `inner` elements of `dtype` on the current device: 0 when each row is
/// reduced by one block, else room for the partials of the many blocks
/// that share each row (few long rows, e.g. a full reduction).
int64_t reduceScratchBytes(int dtype, int64_t outer, int64_t inner);

/// Reduces a contiguous [outer, inner] array of `dtype` along `inner` into
/// `outer` elements of `out` (contiguous): `dtype` for Sum, Mean, Max, Min
/// and Prod (accumulated in double for floating dtypes, int64 for the
/// others, whose products wrap), Long indices for ArgMax and ArgMin (the
/// first maximum or minimum; a NaN is both). An empty row sums to 0,
/// multiplies to 1 and averages to NaN. `scratch`: device memory of at least
/// reduceScratchBytes(dtype, outer, inner) bytes, 8-byte aligned (nullptr
/// when that is 0), used by work queued on `stream`. Returns 0 or a
/// cudaError_t.
int launchReduce(ReduceOp op, const void* in, void* out, int dtype,
                 int64_t outer, int64_t inner, void* scratch,
                 CUstream_st* stream);

/// Softmax (or log-softmax with `log`) of each contiguous row of `inner`
/// elements of `dtype` (floating), from `in` into `out` (both [outer,
/// inner], contiguous), in double: the maximum, the sum of exp(x - max),
/// then the outputs. A NaN anywhere in a row makes the row NaN. Returns 0 or
/// a cudaError_t.
int launchSoftmax(const void* in, void* out, int dtype, int64_t outer,
                  int64_t inner, bool log, CUstream_st* stream);

/// The gradient of softmax (of log-softmax with `log`) along each contiguous
/// row of `inner` elements: from `grad` (the gradient of the forward's
/// output) and `output` (the forward's output), both [outer, inner]
/// contiguous of floating `dtype`, into `grad_input` ([outer, inner],
/// contiguous, floating `grad_input_dtype`), in double:
///   softmax:     grad_input = y * (g - sum(g * y))
///   log_softmax: grad_input = g - exp(y) * sum(g)
/// Returns 0 or a cudaError_t.
int launchSoftmaxBackward(const void* grad, const void* output,
                          void* grad_input, int dtype, int grad_input_dtype,
                          int64_t outer, int64_t inner, bool log,
                          CUstream_st* stream);

}  // namespace cuda
}  // namespace turnout

#endif  // TURNOUT_KERNELS_CUDA_LAUNCH_H_

// aten::mm, bmm, matmul, addmm, linear (and out=): schemas, CPU and Meta
// kernels, and the front end declared in linalg.h.
//
// Every product is planned first as one batched GEMM over sizes and strides
// (GemmPlan): which dimensions are batch dimensions (with stride 0 where an
// operand is broadcast), and each operand's row and column strides. The
// plan does all the shape checks, so the CPU and Meta kernels share them;
// the CPU kernel then runs blas_internal::gemm once per batch element (once
// in all for a matrix product, or for a batch folded into the rows).
#include "kernels/linalg.h"

#include <string>
#include <tuple>
#include <utility>

#include "dispatcher/core/size_arithmetic.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/blas.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/loops.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

using reduce_internal::checkSameDevice;
using reduce_internal::sizesToString;

// C[batch] (m x n, contiguous) = beta*C + alpha * A[batch] @ B[batch].
struct GemmPlan {
  DimVector out_sizes;  // the result's shape
  DimVector batch;      // batch sizes; the result is [batch..., m, n] in memory
  DimVector a_batch_strides;
  DimVector b_batch_strides;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0;
};

void checkSameDtype(const char* op, const Tensor& a, const Tensor& b,
                    const char* a_name, const char* b_name) {
  TURNOUT_CHECK(a.scalar_type() == b.scalar_type(), ErrorKind::InvalidArgument,
                op, ": expected ", a_name, " and ", b_name,
                " to have the same dtype, but got: ", a.scalar_type(),
                " != ", b.scalar_type());
}

[[noreturn]] void throwMmShapes(const char* op, int64_t r1, int64_t c1,
                                int64_t r2, int64_t c2) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, op,
                ": mat1 and mat2 shapes cannot be multiplied (", r1, "x", c1,
                " and ", r2, "x", c2, ")");
  __builtin_unreachable();
}

GemmPlan planMm(const char* op, const Tensor& a, const Tensor& b) {
  GemmPlan p;
  p.m = a.size(0);
  p.k = a.size(1);
  p.n = b.size(1);
  if (b.size(0) != p.k) throwMmShapes(op, p.m, p.k, b.size(0), p.n);
  p.a_rs = a.stride(0);
  p.a_cs = a.stride(1);
  p.b_rs = b.stride(0);
  p.b_cs = b.stride(1);
  p.out_sizes = {p.m, p.n};
  return p;
}

// torch.matmul's cases, on sizes and strides (so linear can pass a
// transposed weight without making a view).
GemmPlan planMatmul(const char* op, IntArrayRef as, IntArrayRef ast,
                    IntArrayRef bs, IntArrayRef bst) {
  const int64_t d1 = static_cast<int64_t>(as.size());
  const int64_t d2 = static_cast<int64_t>(bs.size());
  TURNOUT_CHECK(d1 >= 1 && d2 >= 1, ErrorKind::InvalidArgument, op,
                ": both arguments to matmul need to be at least 1D, but they "
                "are ",
                d1, "D and ", d2, "D");
  GemmPlan p;
  if (d1 == 1 && d2 == 1) {  // dot
    TURNOUT_CHECK(as[0] == bs[0], ErrorKind::InvalidArgument, op,
                  ": inconsistent tensor size, expected tensor [", as[0],
                  "] and src [", bs[0],
                  "] to have the same number of elements, but got ", as[0],
                  " and ", bs[0], " elements respectively");
    p.m = 1;
    p.n = 1;
    p.k = as[0];
    p.a_rs = 1;
    p.a_cs = ast[0];
    p.b_rs = bst[0];
    p.b_cs = 1;
    return p;  // out_sizes: 0-dim
  }
  if (d2 <= 2 && d1 >= 2) {
    // Matrix (or a batch of them, folded into rows when the strides allow)
    // times a matrix or a vector.
    p.k = as[d1 - 1];
    const int64_t k2 = bs[0];
    p.n = d2 == 2 ? bs[1] : 1;
    int64_t rows = 1;
    for (int64_t i = 0; i < d1 - 1; ++i) rows *= as[i];
    if (p.k != k2) {
      TURNOUT_CHECK(d2 == 2, ErrorKind::InvalidArgument, op,
                    ": size mismatch, got input (", rows, "), mat (", rows, "x",
                    p.k, "), vec (", k2, ")");
      throwMmShapes(op, rows, p.k, k2, p.n);
    }
    p.out_sizes.assign(as.begin(), as.end() - 1);
    if (d2 == 2) p.out_sizes.push_back(p.n);
    p.a_cs = ast[d1 - 1];
    p.b_rs = bst[0];
    p.b_cs = d2 == 2 ? bst[1] : 1;
    // Fold the batch into the rows when each dimension steps over whole
    // copies of the next one.
    // Size-1 dimensions are left out: their strides mean nothing.
    bool foldable = true;
    int64_t inner_stride = -1;  // stride of the next non-size-1 dimension
    int64_t inner_size = 1;
    for (int64_t i = d1 - 2; i >= 0; --i) {
      if (as[i] == 1) continue;
      if (inner_stride >= 0 && ast[i] != inner_stride * inner_size) {
        foldable = false;
      }
      if (inner_stride < 0) p.a_rs = ast[i];
      inner_stride = ast[i];
      inner_size = as[i];
    }
    if (foldable) {
      p.m = rows;
      if (inner_stride < 0) p.a_rs = p.k;  // a single row
    } else {
      p.m = as[d1 - 2];
      p.a_rs = ast[d1 - 2];
      p.batch.assign(as.begin(), as.end() - 2);
      p.a_batch_strides.assign(ast.begin(), ast.end() - 2);
      p.b_batch_strides.assign(p.batch.size(), 0);
    }
    return p;
  }
  if (d1 == 1 && d2 == 2) {  // vector times matrix
    if (as[0] != bs[0]) throwMmShapes(op, 1, as[0], bs[0], bs[1]);
    p.m = 1;
    p.k = as[0];
    p.n = bs[1];
    p.a_rs = 1;
    p.a_cs = ast[0];
    p.b_rs = bst[0];
    p.b_cs = bst[1];
    p.out_sizes = {p.n};
    return p;
  }
  // Batched: at least one operand has 3 or more dimensions. A 1-D first
  // operand is a 1 x k matrix, a 1-D second one a k x 1 matrix; the batch
  // dimensions broadcast.
  const bool a_vec = d1 == 1;
  const bool b_vec = d2 == 1;
  p.m = a_vec ? 1 : as[d1 - 2];
  p.k = as[d1 - 1];
  const int64_t k2 = b_vec ? bs[0] : bs[d2 - 2];
  p.n = b_vec ? 1 : bs[d2 - 1];
  p.a_rs = a_vec ? 1 : ast[d1 - 2];
  p.a_cs = ast[d1 - 1];
  p.b_rs = b_vec ? bst[0] : bst[d2 - 2];
  p.b_cs = b_vec ? 1 : bst[d2 - 1];
  IntArrayRef a_batch = a_vec ? IntArrayRef() : as.subspan(0, d1 - 2);
  IntArrayRef b_batch = b_vec ? IntArrayRef() : bs.subspan(0, d2 - 2);
  p.batch = inferBroadcastSize(a_batch, b_batch);
  const size_t nb = p.batch.size();
  const int64_t batch_numel = checkedNumel(p.batch, op);
  TURNOUT_CHECK(p.k == k2, ErrorKind::InvalidArgument, op,
                ": Expected size for first two dimensions of batch2 tensor to "
                "be: [",
                batch_numel, ", ", p.k, "] but got: [", batch_numel, ", ", k2,
                "].");
  p.a_batch_strides.assign(nb, 0);
  p.b_batch_strides.assign(nb, 0);
  for (size_t i = 0; i < a_batch.size(); ++i) {
    const size_t j = nb - a_batch.size() + i;
    p.a_batch_strides[j] = a_batch[i] == 1 ? 0 : ast[i];
  }
  for (size_t i = 0; i < b_batch.size(); ++i) {
    const size_t j = nb - b_batch.size() + i;
    p.b_batch_strides[j] = b_batch[i] == 1 ? 0 : bst[i];
  }
  p.out_sizes = p.batch;
  if (!a_vec) p.out_sizes.push_back(p.m);
  if (!b_vec) p.out_sizes.push_back(p.n);
  return p;
}

GemmPlan planMatmul(const char* op, const Tensor& a, const Tensor& b) {
  return planMatmul(op, a.sizes(), a.strides(), b.sizes(), b.strides());
}

void checkMatmulArgs(const char* op, const Tensor& a, const Tensor& b,
                     const char* a_name, const char* b_name) {
  checkSameDevice(op, a, b);
  checkSameDtype(op, a, b, a_name, b_name);
}

void checkIntegralScalar(const char* op, ScalarType dtype, const Scalar& s,
                         const char* name) {
  if (!isIntegralType(dtype, /*include_bool=*/true)) return;
  TURNOUT_CHECK(!s.isFloatingPoint(), ErrorKind::InvalidArgument, op,
                ": For integral input tensors, argument ", name,
                " must not be a floating point number.");
}

// Runs `p` on CPU data: c (contiguous [batch..., m, n]) = beta*c +
// alpha*a@b. With beta == 0, c is only written.
void runPlan(const char* op, const GemmPlan& p, const Tensor& a,
             const Tensor& b, const Tensor& c, const Scalar& alpha,
             const Scalar& beta) {
  TURNOUT_CHECK(a.scalar_type() != ScalarType::Bool, ErrorKind::NotImplemented,
                op, ": not implemented for 'Bool'");
  if (c.numel() == 0) return;
  visitDtype(a.scalar_type(), op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      using S = OpMathType<T>;
      const S alpha_v = alpha.to<S>();
      const S beta_v = beta.to<S>();
      const T* a_base = static_cast<const T*>(a.data_ptr());
      const T* b_base = static_cast<const T*>(b.data_ptr());
      T* c_base = static_cast<T*>(c.data_ptr());
      const int64_t batch_numel = numelOf(p.batch);
      const int64_t nb = static_cast<int64_t>(p.batch.size());
      for (int64_t bi = 0; bi < batch_numel; ++bi) {
        int64_t a_off = 0;
        int64_t b_off = 0;
        int64_t rest = bi;
        for (int64_t d = nb - 1; d >= 0; --d) {
          const int64_t idx = rest % p.batch[d];
          rest /= p.batch[d];
          a_off += idx * p.a_batch_strides[d];
          b_off += idx * p.b_batch_strides[d];
        }
        blas_internal::gemm<T, S>(p.m, p.n, p.k, alpha_v, a_base + a_off,
                                  p.a_rs, p.a_cs, b_base + b_off, p.b_rs,
                                  p.b_cs, beta_v, c_base + bi * p.m * p.n, p.n,
                                  1);
      }
    }
  });
}

Tensor runProduct(const char* op, const GemmPlan& p, const Tensor& a,
                  const Tensor& b) {
  Tensor out = emptyTensor(p.out_sizes, a.scalar_type(), a.device());
  if (!out.is_meta()) runPlan(op, p, a, b, out, 1, 0);
  return out;
}

Tensor& writeOut(const char* op, const Tensor& result, Tensor& out) {
  return reduce_internal::copyToOut(op, result, out);
}

// ---- mm
// ----------------------------------------------------------------------

GemmPlan checkMm(const Tensor& self, const Tensor& mat2) {
  TURNOUT_CHECK(self.dim() == 2, ErrorKind::InvalidArgument,
                "mm(): self must be a matrix, got ", self.dim(), "-D tensor");
  TURNOUT_CHECK(mat2.dim() == 2, ErrorKind::InvalidArgument,
                "mm(): mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  checkMatmulArgs("mm()", self, mat2, "self", "mat2");
  return planMm("mm()", self, mat2);
}

Tensor mm_kernel(const Tensor& self, const Tensor& mat2) {
  return runProduct("mm()", checkMm(self, mat2), self, mat2);
}

Tensor& mm_out_kernel(const Tensor& self, const Tensor& mat2, Tensor& out) {
  return writeOut("mm.out()", mm_kernel(self, mat2), out);
}

// ---- bmm
// ---------------------------------------------------------------------

GemmPlan checkBmm(const Tensor& self, const Tensor& mat2) {
  TURNOUT_CHECK(self.dim() == 3, ErrorKind::InvalidArgument,
                "bmm(): batch1 must be a 3D tensor, got ", self.dim(),
                "-D tensor");
  TURNOUT_CHECK(mat2.dim() == 3, ErrorKind::InvalidArgument,
                "bmm(): batch2 must be a 3D tensor, got ", mat2.dim(),
                "-D tensor");
  checkMatmulArgs("bmm()", self, mat2, "batch1", "batch2");
  TURNOUT_CHECK(self.size(0) == mat2.size(0), ErrorKind::InvalidArgument,
                "bmm(): batch1 and batch2 must have same number of batches, "
                "got ",
                self.size(0), " and ", mat2.size(0));
  TURNOUT_CHECK(self.size(2) == mat2.size(1), ErrorKind::InvalidArgument,
                "bmm(): Expected size for first two dimensions of batch2 "
                "tensor to be: [",
                self.size(0), ", ", self.size(2), "] but got: [", mat2.size(0),
                ", ", mat2.size(1), "].");
  GemmPlan p;
  p.batch = {self.size(0)};
  p.a_batch_strides = {self.stride(0)};
  p.b_batch_strides = {mat2.stride(0)};
  p.m = self.size(1);
  p.k = self.size(2);
  p.n = mat2.size(2);
  p.a_rs = self.stride(1);
  p.a_cs = self.stride(2);
  p.b_rs = mat2.stride(1);
  p.b_cs = mat2.stride(2);
  p.out_sizes = {self.size(0), p.m, p.n};
  return p;
}

Tensor bmm_kernel(const Tensor& self, const Tensor& mat2) {
  return runProduct("bmm()", checkBmm(self, mat2), self, mat2);
}

Tensor& bmm_out_kernel(const Tensor& self, const Tensor& mat2, Tensor& out) {
  return writeOut("bmm.out()", bmm_kernel(self, mat2), out);
}

// ---- addmm
// -------------------------------------------------------------------

Tensor addmm_kernel(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                    const Scalar& beta, const Scalar& alpha) {
  const char* op = "addmm()";
  TURNOUT_CHECK(mat1.dim() == 2, ErrorKind::InvalidArgument, op,
                ": mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TURNOUT_CHECK(mat2.dim() == 2, ErrorKind::InvalidArgument, op,
                ": mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  checkMatmulArgs(op, mat1, mat2, "mat1", "mat2");
  checkSameDevice(op, self, mat1);
  TURNOUT_CHECK(self.scalar_type() == mat1.scalar_type(),
                ErrorKind::InvalidArgument, op,
                ": self and mat2 must have the same dtype, but got ",
                self.scalar_type(), " and ", mat2.scalar_type());
  checkIntegralScalar(op, self.scalar_type(), beta, "beta");
  checkIntegralScalar(op, self.scalar_type(), alpha, "alpha");
  GemmPlan p = planMm(op, mat1, mat2);
  // self expands to [m, n], as Tensor.expand does.
  const DimVector target = {p.m, p.n};
  const int64_t sd = self.dim();
  TURNOUT_CHECK(sd <= 2, ErrorKind::InvalidArgument, op,
                ": the number of sizes provided (2) must be greater or equal "
                "to the number of dimensions in the tensor (",
                sd, ")");
  DimVector strides(2, 0);
  for (int64_t i = 0; i < sd; ++i) {
    const int64_t t = 2 - sd + i;
    const int64_t have = self.size(i);
    TURNOUT_CHECK(have == target[t] || have == 1, ErrorKind::InvalidArgument,
                  op, ": The expanded size of the tensor (", target[t],
                  ") must match the existing size (", have,
                  ") at non-singleton dimension ", t,
                  ".  Target sizes: ", sizesToString(target),
                  ".  Tensor sizes: ", sizesToString(self.sizes()));
    strides[t] = have == 1 ? 0 : self.stride(i);
  }
  Tensor out = emptyTensor(p.out_sizes, mat1.scalar_type(), mat1.device());
  if (out.is_meta() || out.numel() == 0) return out;
  const bool use_self =
      !(beta.isIntegral(true) ? beta.toLong() == 0 : beta.toDouble() == 0.0);
  if (use_self) {
    copyCast(out, makeView(self, target, strides, self.storage_offset()));
  }
  runPlan(op, p, mat1, mat2, out, alpha, use_self ? beta : Scalar(0));
  return out;
}

Tensor& addmm_out_kernel(const Tensor& self, const Tensor& mat1,
                         const Tensor& mat2, const Scalar& beta,
                         const Scalar& alpha, Tensor& out) {
  return writeOut("addmm.out()", addmm_kernel(self, mat1, mat2, beta, alpha),
                  out);
}

// ---- linear
// ------------------------------------------------------------------

// linear's argument checks (shared by the kernel behind linear.out and the
// CompositeImplicitAutograd linear): the plan of input @ weight^T.
GemmPlan checkLinear(const Tensor& input, const Tensor& weight,
                     const std::optional<Tensor>& bias) {
  const char* op = "linear()";
  checkMatmulArgs(op, input, weight, "input", "weight");
  TURNOUT_CHECK(
      weight.dim() == 1 || weight.dim() == 2, ErrorKind::InvalidArgument, op,
      ": weight must be a 1-D or 2-D tensor, got ", weight.dim(), "-D tensor");
  // input @ weight^T, with the transpose done by swapping the strides.
  DimVector wt_sizes(weight.sizes().rbegin(), weight.sizes().rend());
  DimVector wt_strides(weight.strides().rbegin(), weight.strides().rend());
  GemmPlan p =
      planMatmul(op, input.sizes(), input.strides(), wt_sizes, wt_strides);
  const bool has_bias = bias.has_value() && bias->defined();
  if (has_bias) {
    checkSameDevice(op, input, *bias);
    TURNOUT_CHECK(bias->scalar_type() == input.scalar_type(),
                  ErrorKind::InvalidArgument, op,
                  ": expected bias to have dtype ", input.scalar_type(),
                  ", but got ", bias->scalar_type());
    const DimVector b = inferBroadcastSize(p.out_sizes, bias->sizes());
    TURNOUT_CHECK(IntArrayRef(b) == IntArrayRef(p.out_sizes),
                  ErrorKind::InvalidArgument, op, ": output with shape ",
                  sizesToString(p.out_sizes),
                  " doesn't match the broadcast shape ", sizesToString(b));
  }
  return p;
}

Tensor linear_kernel(const Tensor& input, const Tensor& weight,
                     const std::optional<Tensor>& bias) {
  const char* op = "linear()";
  const GemmPlan p = checkLinear(input, weight, bias);
  const bool has_bias = bias.has_value() && bias->defined();
  Tensor out = emptyTensor(p.out_sizes, input.scalar_type(), input.device());
  if (out.is_meta() || out.numel() == 0) return out;
  if (has_bias) {
    // out = bias (broadcast), then out = 1*out + input @ weight^T.
    const int64_t nd = out.dim();
    const int64_t bd = bias->dim();
    DimVector strides(nd, 0);
    for (int64_t i = 0; i < bd; ++i) {
      if (bias->size(i) != 1) strides[nd - bd + i] = bias->stride(i);
    }
    copyCast(out,
             makeView(*bias, out.sizes(), strides, bias->storage_offset()));
    runPlan(op, p, input, weight, out, 1, 1);
  } else {
    runPlan(op, p, input, weight, out, 1, 0);
  }
  return out;
}

Tensor& linear_out_kernel(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias, Tensor& out) {
  return writeOut("linear.out()", linear_kernel(input, weight, bias), out);
}

// ---- matmul and linear as CompositeImplicitAutograd -------------------------
// As in PyTorch, matmul and linear are built out of mm / bmm / addmm and
// views, so that their gradients come from those operators' autograd
// kernels. The checks run first so that errors name matmul() / linear().
// (linear.out keeps the direct kernel above.)

// The operands of a batched matmul: vectors as 1 x k / k x 1 matrices,
// broadcast to the batch dimensions, which fold into one (bmm's).
std::pair<Tensor, Tensor> batchedOperands(const Tensor& self,
                                          const Tensor& other,
                                          const GemmPlan& p) {
  const Tensor a = self.dim() == 1 ? unsqueeze(self, 0) : self;
  const Tensor b = other.dim() == 1 ? unsqueeze(other, 1) : other;
  int64_t batch = 1;
  for (int64_t n : p.batch) batch *= n;
  DimVector a_sizes = p.batch;
  a_sizes.push_back(p.m);
  a_sizes.push_back(p.k);
  DimVector b_sizes = p.batch;
  b_sizes.push_back(p.k);
  b_sizes.push_back(p.n);
  const int64_t a3[] = {batch, p.m, p.k};
  const int64_t b3[] = {batch, p.k, p.n};
  return {reshape(expand(a, a_sizes), a3), reshape(expand(b, b_sizes), b3)};
}

Tensor matmul_composite(const Tensor& self, const Tensor& other) {
  const char* op = "matmul()";
  checkMatmulArgs(op, self, other, "self", "other");
  const GemmPlan p = planMatmul(op, self, other);
  const int64_t d1 = self.dim();
  const int64_t d2 = other.dim();
  if (d1 == 2 && d2 == 2) return mm(self, other);
  if (d1 == 1 && d2 == 1) {
    return view(mm(reshape(self, {1, p.k}), reshape(other, {p.k, 1})),
                IntArrayRef());
  }
  if (d1 == 1 && d2 == 2) return squeeze(mm(unsqueeze(self, 0), other), 0);
  if (d1 >= 2 && d2 <= 2) {
    // Fold the leading dimensions of self into rows.
    const Tensor b = d2 == 2 ? other : unsqueeze(other, 1);
    return view(mm(reshape(self, {-1, p.k}), b), p.out_sizes);
  }
  const auto [a3, b3] = batchedOperands(self, other, p);
  return view(bmm(a3, b3), p.out_sizes);
}

// matmul.out, as torch 1.13's (CompositeImplicitAutograd): the out= form of
// the product it comes to writes the result, into out itself (dot.out,
// mv.out, mm.out) or into out seen with its batch dimensions folded
// (mm.out, mv.out, bmm.out; through a contiguous buffer copied back when
// out cannot be seen so). A mode sees those calls, and their autograd
// fallback refuses gradients as torch's out= forms do. (torch folds a
// batched right operand into mm/mv with transposes; this writes it with
// bmm, the values the same.)
Tensor& matmul_out_composite(const Tensor& self, const Tensor& other,
                             Tensor& out) {
  const char* op = "matmul()";
  checkMatmulArgs(op, self, other, "self", "other");
  const GemmPlan p = planMatmul(op, self, other);
  const int64_t d1 = self.dim();
  const int64_t d2 = other.dim();
  using OutSig = Tensor&(const Tensor&, const Tensor&, Tensor&);
  static const auto dot_out = Dispatcher::singleton()
                                  .findSchemaOrThrow("aten::dot", "out")
                                  .typed<OutSig>();
  static const auto mv_out = Dispatcher::singleton()
                                 .findSchemaOrThrow("aten::mv", "out")
                                 .typed<OutSig>();
  if (d1 == 1 && d2 == 1) return dot_out.call(self, other, out);
  if (d1 == 2 && d2 == 1) return mv_out.call(self, other, out);
  if (d1 == 2 && d2 == 2) return mm_out(out, self, other);

  // The rest write a product of 2-D or 3-D operands into out of the
  // result's shape, seen as that product's output.
  reduce_internal::resizeOutput(out, p.out_sizes, "matmul.out()");
  int64_t batch = 1;
  for (int64_t b : p.batch) batch *= b;
  // The product's operands and output shape.
  Tensor a;
  Tensor b;
  DimVector shape;
  bool vector_rhs = false;
  if (d1 >= 2 && d2 <= 2) {
    // Fold self's leading dimensions into rows: an mm, or an mv for a
    // vector right operand.
    int64_t rows = 1;
    for (int64_t i = 0; i + 1 < d1; ++i) rows *= self.size(i);
    const int64_t rows_shape[] = {rows, p.k};
    a = reshape(self, rows_shape);
    b = other;
    vector_rhs = d2 == 1;
    shape = vector_rhs ? DimVector{rows} : DimVector{rows, p.n};
  } else if (d1 == 1 && d2 == 2) {
    a = unsqueeze(self, 0);
    b = other;
    shape = {1, p.n};
  } else {
    std::tie(a, b) = batchedOperands(self, other, p);
    shape = {batch, p.m, p.n};
  }
  const bool direct = out.is_contiguous();
  Tensor target = direct ? view(out, shape)
                         : emptyTensor(shape, out.scalar_type(), out.device());
  if (shape.size() == 3) {
    bmm_out(target, a, b);
  } else if (vector_rhs) {
    mv_out.call(a, b, target);
  } else {
    mm_out(target, a, b);
  }
  if (!direct) {
    static const auto copy = Dispatcher::singleton()
                                 .findSchemaOrThrow("aten::copy_", "")
                                 .typed<Tensor&(Tensor&, const Tensor&, bool)>();
    copy.call(out, view(target, p.out_sizes), false);
  }
  return out;
}

Tensor linear_composite(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias) {
  checkLinear(input, weight, bias);
  const bool has_bias = bias.has_value() && bias->defined();
  const Tensor wt = weight.dim() == 2 ? t(weight) : weight;
  if (input.dim() == 2 && weight.dim() == 2 && has_bias) {
    return addmm(*bias, input, wt);
  }
  const Tensor out = matmul(input, wt);
  return has_bias ? add(out, *bias) : out;
}

}  // namespace

// ---- Registration
// ------------------------------------------------------------

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def("mm(Tensor self, Tensor mat2) -> Tensor");
  m.def("mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("bmm(Tensor self, Tensor mat2) -> Tensor");
  m.def("bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("matmul(Tensor self, Tensor other) -> Tensor");
  m.def(
      "matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar "
      "alpha=1) -> Tensor");
  m.def(
      "addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
      "Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  m.def("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor");
  m.def(
      "linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, "
      "Tensor(a!) out) -> Tensor(a!)");
}

// The kernels check shapes before touching data and skip the arithmetic for
// Meta outputs, so one function serves both keys.
#define TURNOUT_LINALG_KERNELS(m)                      \
  m.impl("mm", TURNOUT_FN(mm_kernel));                 \
  m.impl("mm.out", TURNOUT_FN(mm_out_kernel));         \
  m.impl("bmm", TURNOUT_FN(bmm_kernel));               \
  m.impl("bmm.out", TURNOUT_FN(bmm_out_kernel));       \
  m.impl("addmm", TURNOUT_FN(addmm_kernel));           \
  m.impl("addmm.out", TURNOUT_FN(addmm_out_kernel));   \
  m.impl("linear.out", TURNOUT_FN(linear_out_kernel))

TURNOUT_LIBRARY_IMPL(aten, CPU, m) { TURNOUT_LINALG_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_LINALG_KERNELS(m); }
TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("matmul", TURNOUT_FN(matmul_composite));
  m.impl("matmul.out", TURNOUT_FN(matmul_out_composite));
  m.impl("linear", TURNOUT_FN(linear_composite));
}
#undef TURNOUT_LINALG_KERNELS

// ---- Front end
// ---------------------------------------------------------------

Tensor mm(const Tensor& self, const Tensor& mat2) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::mm", "")
                       .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(self, mat2);
}

Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::mm", "out")
                       .typed<Tensor&(const Tensor&, const Tensor&, Tensor&)>();
  return op.call(self, mat2, out);
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::bmm", "")
                       .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(self, mat2);
}

Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::bmm", "out")
                       .typed<Tensor&(const Tensor&, const Tensor&, Tensor&)>();
  return op.call(self, mat2, out);
}

Tensor matmul(const Tensor& self, const Tensor& other) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::matmul", "")
                       .typed<Tensor(const Tensor&, const Tensor&)>();
  return op.call(self, other);
}

Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::matmul", "out")
                       .typed<Tensor&(const Tensor&, const Tensor&, Tensor&)>();
  return op.call(self, other, out);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
             const Scalar& beta, const Scalar& alpha) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::addmm", "")
          .typed<Tensor(const Tensor&, const Tensor&, const Tensor&,
                        const Scalar&, const Scalar&)>();
  return op.call(self, mat1, mat2, beta, alpha);
}

Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1,
                  const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  static auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::addmm", "out")
          .typed<Tensor&(const Tensor&, const Tensor&, const Tensor&,
                         const Scalar&, const Scalar&, Tensor&)>();
  return op.call(self, mat1, mat2, beta, alpha, out);
}

Tensor linear(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::linear", "")
                       .typed<Tensor(const Tensor&, const Tensor&,
                                     const std::optional<Tensor>&)>();
  return op.call(input, weight, bias);
}

Tensor& linear_out(Tensor& out, const Tensor& input, const Tensor& weight,
                   const std::optional<Tensor>& bias) {
  static auto op = Dispatcher::singleton()
                       .findSchemaOrThrow("aten::linear", "out")
                       .typed<Tensor&(const Tensor&, const Tensor&,
                                      const std::optional<Tensor>&, Tensor&)>();
  return op.call(input, weight, bias, out);
}

}  // namespace turnout

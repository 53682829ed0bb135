// CUDA kernels of aten::mm, bmm, addmm (and their out= overloads),
// linear.out and matmul.out through cuBLAS (cublasGemmStridedBatchedEx), for
// Float, Double, Half and BFloat16; Half and BFloat16 accumulate in float,
// Float in full float (no TF32), Double in double. The Meta kernel gives the
// result's sizes and dtype and runs every check; operands are made
// contiguous first.
//
// cuBLAS handles: one per thread and device, set to the current stream and
// to a workspace of that stream's before each call, created on first use and
// deliberately never destroyed (destroying them during static destruction
// can outlive the CUDA context).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/stream.h"
#include "kernels/elementwise.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace cuda {
namespace {

void checkCublas(cublasStatus_t status, const char* op) {
  TURNOUT_CHECK(status == CUBLAS_STATUS_SUCCESS, ErrorKind::Internal, op,
                ": cuBLAS error ", cublasGetStatusName(status), ": ",
                cublasGetStatusString(status));
}

// cuBLAS's workspace per stream (torch's size for Hopper: 4 MiB x 8).
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

// The calling thread's workspace for `stream` of `device`, from the caching
// allocator, allocated on that stream (the current one) on first use and
// kept until the thread exits. Precondition: `device` is current.
void* cublasWorkspace(int device, cudaStream_t stream) {
  thread_local absl::flat_hash_map<std::pair<int, cudaStream_t>, DataPtr>
      workspaces;
  DataPtr& workspace = workspaces[{device, stream}];
  if (!workspace) {
    workspace = cachingAllocator()->allocate(kCublasWorkspaceBytes);
  }
  return workspace.get();
}

cublasHandle_t cublasHandle(const char* op) {
  // On the heap, not in the small static TLS block (see stream.cc).
  thread_local std::vector<cublasHandle_t> handles;
  const int device = currentDevice();
  TURNOUT_CHECK(device < kMaxDevices, ErrorKind::NotImplemented, op,
                ": device index ", device, " is above turnout's limit of ",
                kMaxDevices);
  if (handles.empty()) handles.resize(kMaxDevices, nullptr);
  if (handles[device] == nullptr) {
    checkCublas(cublasCreate(&handles[device]), op);
  }
  // Queued on the calling thread's current stream, like every kernel, with
  // a workspace of that stream's own: one workspace shared by two streams
  // would let a product on one overwrite it while the other still reads.
  cudaStream_t stream = currentStreamHandle(device);
  checkCublas(cublasSetStream(handles[device], stream), op);
  checkCublas(cublasSetWorkspace(handles[device],
                                 cublasWorkspace(device, stream),
                                 kCublasWorkspaceBytes),
              op);
  return handles[device];
}

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemmTypes(const char* op, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case ScalarType::Double:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case ScalarType::Half:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case ScalarType::BFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    default:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, op, ": \"", op,
                "_cuda\" not implemented for '", dtype,
                "'; cuBLAS multiplies Float, Double, Half and BFloat16");
  __builtin_unreachable();
}

// out[b] = alpha * a[b] @ b[b] + beta * out[b] for `batch` row-major
// matrices a [m, k], b [k, n], out [m, n] (contiguous). cuBLAS is
// column-major, so it computes out^T = b^T a^T.
void gemm(const char* op, const Tensor& a, const Tensor& b, const Tensor& out,
          int64_t batch, int64_t m, int64_t n, int64_t k, double alpha,
          double beta) {
  const GemmTypes t = gemmTypes(op, out.scalar_type());
  const float alpha_f = static_cast<float>(alpha);
  const float beta_f = static_cast<float>(beta);
  const bool dbl = t.compute == CUBLAS_COMPUTE_64F;
  const void* alpha_p = dbl ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = dbl ? static_cast<const void*>(&beta) : &beta_f;
  CUDADeviceGuard guard(out.device());
  checkCublas(cublasGemmStridedBatchedEx(
                  cublasHandle(op), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, alpha_p,
                  b.data_ptr(), t.data, n, k * n, a.data_ptr(), t.data, k,
                  m * k, beta_p, out.data_ptr(), t.data, n, m * n, batch,
                  t.compute, CUBLAS_GEMM_DEFAULT),
              op);
}

// The product into `out` (already sized), batched when a and b are 3-d.
void product(const char* op, const Tensor& self, const Tensor& mat2,
             const Tensor& out, double alpha, double beta) {
  if (out.numel() == 0) return;
  const ScalarType dtype = out.scalar_type();
  gemmTypes(op, dtype);  // the dtype check, before any work
  const Device device = out.device();
  const bool batched = self.dim() == 3;
  const int64_t batch = batched ? self.size(0) : 1;
  const int64_t m = self.size(batched ? 1 : 0);
  const int64_t k = self.size(batched ? 2 : 1);
  const int64_t n = mat2.size(batched ? 2 : 1);
  if (k == 0) {  // no terms: beta * out (cuBLAS wants lda >= 1)
    if (beta == 0) {
      runElementwise(op, ElementwiseOp::Fill, dtype, out, {}, {ScalarArg{}});
    } else if (beta != 1) {
      mul_(out, beta);
    }
    return;
  }
  for (int64_t extent : {batch, m, n, k}) {
    TURNOUT_CHECK(extent <= INT32_MAX, ErrorKind::NotImplemented, op,
                  ": cuBLAS takes 32-bit sizes; got a dimension of ", extent);
  }
  const Tensor a = contiguousAs(self, dtype, device);
  const Tensor b = contiguousAs(mat2, dtype, device);
  gemm(op, a, b, out, batch, m, n, k, alpha, beta);
}

Tensor mmKernel(const Tensor& self, const Tensor& mat2) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&)>("aten::mm", "");
  const Device device = checkCudaDevices("mm", {&self, &mat2});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(mat2));
  Tensor out = emptyTensor(m.sizes(), m.scalar_type(), device);
  product("mm", self, mat2, out, 1.0, 0.0);
  return out;
}

Tensor bmmKernel(const Tensor& self, const Tensor& mat2) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&)>("aten::bmm", "");
  const Device device = checkCudaDevices("bmm", {&self, &mat2});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(mat2));
  Tensor out = emptyTensor(m.sizes(), m.scalar_type(), device);
  product("bmm", self, mat2, out, 1.0, 0.0);
  return out;
}

bool isZero(const Scalar& s) {
  return s.isIntegral(true) ? s.toLong() == 0 : s.toDouble() == 0.0;
}

Tensor addmmKernel(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                   const Scalar& beta, const Scalar& alpha) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&, const Tensor&,
                     const Scalar&, const Scalar&)>("aten::addmm", "");
  const Device device = checkCudaDevices("addmm", {&self, &mat1, &mat2});
  const Tensor m = op.redispatch(metaKeys(), metaLike(self), metaLike(mat1),
                                 metaLike(mat2), beta, alpha);
  Tensor out = emptyTensor(m.sizes(), m.scalar_type(), device);
  if (out.numel() == 0) return out;
  // beta == 0 ignores self entirely (NaN in self does not propagate).
  const bool use_self = !isZero(beta);
  if (use_self) {
    runElementwise("addmm", ElementwiseOp::Copy, out.scalar_type(), out,
                   {self});
  }
  product("addmm", mat1, mat2, out, alpha.toDouble(),
          use_self ? beta.toDouble() : 0.0);
  return out;
}

// input [..., in] @ weight^T (+ bias): the leading dimensions of input
// flattened into the rows of one gemm; a 1-D weight is one output column.
// The kernel behind linear.out only: linear itself is
// CompositeImplicitAutograd (mm/addmm/matmul), which keeps its autograd; a
// CUDA kernel for it would take AutogradCUDA's math kernel away.
Tensor linearKernel(const Tensor& input, const Tensor& weight,
                    const std::optional<Tensor>& bias) {
  static const auto op =
      typedOp<Tensor(const Tensor&, const Tensor&,
                     const std::optional<Tensor>&)>("aten::linear", "");
  const bool has_bias = bias.has_value() && bias->defined();
  const Device device = checkCudaDevices(
      "linear", {&input, &weight, has_bias ? &*bias : &input});
  std::optional<Tensor> meta_bias;
  if (has_bias) meta_bias = metaLike(*bias);
  const Tensor m =
      op.redispatch(metaKeys(), metaLike(input), metaLike(weight), meta_bias);
  const ScalarType dtype = m.scalar_type();
  Tensor out = emptyTensor(m.sizes(), dtype, device);
  if (out.numel() == 0) return out;
  TURNOUT_CHECK(input.dim() >= 1, ErrorKind::NotImplemented,
                "linear: the CUDA kernel needs an input of at least 1 "
                "dimension, got a 0-dim tensor");
  const int64_t in_f = input.size(input.dim() - 1);
  const int64_t out_f = weight.dim() == 2 ? weight.size(0) : 1;
  const int64_t rows = out.numel() / out_f;
  const Tensor x = contiguousAs(input, dtype, device);
  const Tensor a = makeView(x, {rows, in_f}, {in_f, 1}, x.storage_offset());
  const Tensor wt =
      weight.dim() == 2
          ? makeView(weight, {in_f, out_f}, {weight.stride(1), weight.stride(0)},
                     weight.storage_offset())
          : makeView(weight, {in_f, 1}, {weight.stride(0), 1},
                     weight.storage_offset());
  if (has_bias) {  // out = bias (broadcast), then out += a @ wt
    runElementwise("linear", ElementwiseOp::Copy, dtype, out, {*bias});
  }
  product("linear", a, wt, makeView(out, {rows, out_f}, {out_f, 1}, 0), 1.0,
          has_bias ? 1.0 : 0.0);
  return out;
}

// torch.matmul's cases (those of the CPU kernel's planMatmul) as one gemm
// into a new contiguous tensor of `sizes` (the Meta kernel's result):
//   1-D @ 1-D    [1, k] @ [k, 1]
//   1-D @ 2-D    [1, k] @ [k, n]
//   N-D @ 1/2-D  self's leading dimensions folded into rows: [rows, k] @
//                [k, n] (a 1-D other is [k, 1])
//   batched      a 1-D self is [1, k], a 1-D other [k, 1]; both expanded to
//                the broadcast batch and flattened into one bmm.
// The kernel behind matmul.out only: matmul itself is
// CompositeImplicitAutograd (mm/bmm and views), which keeps its autograd.
Tensor matmulCuda(const char* op, const Tensor& self, const Tensor& other,
                  IntArrayRef sizes, Device device) {
  const ScalarType dtype = self.scalar_type();
  Tensor out = emptyTensor(sizes, dtype, device);
  if (out.numel() == 0) return out;
  gemmTypes(op, dtype);  // the dtype check, before any copy
  const int64_t d1 = self.dim();
  const int64_t d2 = other.dim();
  const int64_t k = self.size(d1 - 1);
  const int64_t n = d2 == 1 ? 1 : other.size(d2 - 1);
  // A 1-D operand as a matrix: a row [1, k] (self) or a column [k, 1].
  auto asRow = [&](const Tensor& v) {
    return makeView(v, {1, k}, {k * v.stride(0), v.stride(0)},
                    v.storage_offset());
  };
  auto asColumn = [&](const Tensor& v) {
    return makeView(v, {k, 1}, {v.stride(0), 1}, v.storage_offset());
  };
  if (d1 == 1 && d2 <= 2) {  // 1-D @ 1-D or 1-D @ 2-D: one row
    const Tensor b = d2 == 1 ? asColumn(other) : other;
    product(op, asRow(self), b, makeView(out, {1, n}, {n, 1}, 0), 1.0, 0.0);
    return out;
  }
  if (d1 >= 2 && d2 <= 2) {
    const int64_t rows = out.numel() / n;
    const Tensor a = contiguousAs(self, dtype, device);
    const Tensor b = d2 == 1 ? asColumn(other) : other;
    product(op, makeView(a, {rows, k}, {k, 1}, a.storage_offset()), b,
            makeView(out, {rows, n}, {n, 1}, 0), 1.0, 0.0);
    return out;
  }
  // Batched (other has 3 or more dimensions). out, [batch..., m?, n?], is
  // [B, m, n] in memory.
  const int64_t m = d1 == 1 ? 1 : self.size(d1 - 2);
  const IntArrayRef a_batch =
      d1 == 1 ? IntArrayRef() : self.sizes().subspan(0, d1 - 2);
  const IntArrayRef b_batch =
      d2 == 1 ? IntArrayRef() : other.sizes().subspan(0, d2 - 2);
  const DimVector batch = inferBroadcastSize(a_batch, b_batch);
  const int64_t nb = static_cast<int64_t>(batch.size());
  const int64_t batch_numel = numelOf(batch);
  // t ([..., r, c], or [c] / [r] when 1-D) expanded to [batch..., r, c] and
  // made contiguous as [B, r, c].
  auto batched = [&](const Tensor& t, int64_t r, int64_t c, bool row) {
    DimVector view_sizes = batch;
    DimVector view_strides(nb, 0);
    view_sizes.push_back(r);
    view_sizes.push_back(c);
    if (t.dim() == 1) {
      view_strides.push_back(row ? 0 : t.stride(0));
      view_strides.push_back(row ? t.stride(0) : 0);
    } else {
      const int64_t lead = nb - (t.dim() - 2);
      for (int64_t i = 0; i < t.dim() - 2; ++i) {
        if (t.size(i) != 1) view_strides[lead + i] = t.stride(i);
      }
      view_strides.push_back(t.stride(t.dim() - 2));
      view_strides.push_back(t.stride(t.dim() - 1));
    }
    const Tensor full =
        contiguousAs(makeView(t, view_sizes, view_strides, t.storage_offset()),
                     dtype, device);
    return makeView(full, {batch_numel, r, c}, {r * c, c, 1},
                    full.storage_offset());
  };
  product(op, batched(self, m, k, /*row=*/true),
          batched(other, k, n, /*row=*/false),
          makeView(out, {batch_numel, m, n}, {m * n, n, 1}, 0), 1.0, 0.0);
  return out;
}

// ---- out= overloads: the Meta kernel checks (and sizes) out, the
// functional CUDA kernel computes, finishOut copies.

Tensor& mmOut(const Tensor& self, const Tensor& mat2, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, Tensor&)>("aten::mm", "out");
  checkCudaDevices("mm.out()", {&self, &mat2}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(mat2), mo);
  return finishOut("mm.out()", mo, mmKernel(self, mat2), out);
}

Tensor& bmmOut(const Tensor& self, const Tensor& mat2, Tensor& out) {
  static const auto op = typedOp<Tensor&(const Tensor&, const Tensor&, Tensor&)>(
      "aten::bmm", "out");
  checkCudaDevices("bmm.out()", {&self, &mat2}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(mat2), mo);
  return finishOut("bmm.out()", mo, bmmKernel(self, mat2), out);
}

Tensor& addmmOut(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                 const Scalar& beta, const Scalar& alpha, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, const Tensor&,
                      const Scalar&, const Scalar&, Tensor&)>("aten::addmm",
                                                              "out");
  checkCudaDevices("addmm.out()", {&self, &mat1, &mat2}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(mat1), metaLike(mat2),
                beta, alpha, mo);
  return finishOut("addmm.out()", mo, addmmKernel(self, mat1, mat2, beta, alpha),
                   out);
}

Tensor& linearOut(const Tensor& input, const Tensor& weight,
                  const std::optional<Tensor>& bias, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&,
                      const std::optional<Tensor>&, Tensor&)>("aten::linear",
                                                              "out");
  const bool has_bias = bias.has_value() && bias->defined();
  checkCudaDevices("linear.out()",
                   {&input, &weight, has_bias ? &*bias : &input}, &out);
  std::optional<Tensor> meta_bias;
  if (has_bias) meta_bias = metaLike(*bias);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(input), metaLike(weight), meta_bias, mo);
  return finishOut("linear.out()", mo, linearKernel(input, weight, bias), out);
}

Tensor& matmulOut(const Tensor& self, const Tensor& other, Tensor& out) {
  static const auto op =
      typedOp<Tensor&(const Tensor&, const Tensor&, Tensor&)>("aten::matmul",
                                                              "out");
  const Device device = checkCudaDevices("matmul.out()", {&self, &other}, &out);
  Tensor mo = metaLike(out);
  op.redispatch(metaKeys(), metaLike(self), metaLike(other), mo);
  return finishOut("matmul.out()", mo,
                   matmulCuda("matmul", self, other, mo.sizes(), device), out);
}

}  // namespace
}  // namespace cuda
}  // namespace turnout

TURNOUT_LIBRARY_IMPL(aten, CUDA, m) {
  using namespace ::turnout::cuda;
  m.impl("mm", TURNOUT_FN(mmKernel));
  m.impl("bmm", TURNOUT_FN(bmmKernel));
  m.impl("addmm", TURNOUT_FN(addmmKernel));
  m.impl("mm.out", TURNOUT_FN(mmOut));
  m.impl("bmm.out", TURNOUT_FN(bmmOut));
  m.impl("addmm.out", TURNOUT_FN(addmmOut));
  m.impl("linear.out", TURNOUT_FN(linearOut));
  m.impl("matmul.out", TURNOUT_FN(matmulOut));
}

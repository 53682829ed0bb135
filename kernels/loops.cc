#include "kernels/loops.h"

#include <cstring>
#include <utility>

#include "dispatcher/dispatcher.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace detail {

void checkLoopDtypes(const Tensor& out, ScalarType out_type,
                     absl::Span<const Tensor* const> inputs,
                     absl::Span<const ScalarType> input_types) {
  TURNOUT_INTERNAL_ASSERT(out.scalar_type() == out_type,
                          "cpuKernel: the output has dtype ", out.scalar_type(),
                          " but the function returns ", out_type);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TURNOUT_INTERNAL_ASSERT(inputs[i]->scalar_type() == input_types[i],
                            "cpuKernel: input ", i, " has dtype ",
                            inputs[i]->scalar_type(),
                            " but the function takes ", input_types[i]);
  }
}

LoopGeometry makeLoopGeometry(const Tensor& out,
                              absl::Span<const Tensor* const> inputs) {
  TURNOUT_INTERNAL_ASSERT(inputs.size() + 1 <= kMaxLoopOperands,
                          "cpuKernel: too many inputs");
  LoopGeometry g;
  g.num_operands = static_cast<int>(inputs.size()) + 1;
  // The stored metadata (*_default), as allContiguousLike (loops.h).
  g.numel = out.unsafeGetTensorImpl()->numel_default();
  if (g.numel == 0) return g;

  const IntArrayRef out_sizes = out.unsafeGetTensorImpl()->sizes_default();
  const int64_t ndim = static_cast<int64_t>(out_sizes.size());
  // Byte strides of every operand over out's dimensions (outermost first).
  absl::InlinedVector<DimVector, kMaxLoopOperands> full(g.num_operands,
                                                        DimVector(ndim, 0));
  for (int k = 0; k < g.num_operands; ++k) {
    const Tensor& t = k == 0 ? out : *inputs[k - 1];
    // A CPU loop reads and writes host memory: a tensor of another device
    // here (a composite kernel's CPU helper given CUDA tensors) would crash.
    TURNOUT_CHECK(t.is_cpu(), ErrorKind::NotImplemented,
                  "a CPU loop was given a tensor on ", t.device(),
                  ": this operation has no kernel for that device yet; "
                  "move the tensors to the CPU (.cpu()) to run it");
    const TensorImpl* impl = t.unsafeGetTensorImpl();
    impl->checkStrided("strides");
    const IntArrayRef sizes = impl->sizes_default();
    const IntArrayRef strides = impl->strides_default();
    const int64_t item = static_cast<int64_t>(t.itemsize());
    const int64_t offset = ndim - static_cast<int64_t>(sizes.size());
    TURNOUT_INTERNAL_ASSERT(offset >= 0, "cpuKernel: input ", k - 1,
                            " has more dimensions than the output");
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
      const int64_t od = d + offset;
      if (sizes[d] == out_sizes[od]) {
        full[k][od] = out_sizes[od] == 1 ? 0 : strides[d] * item;
      } else {
        TURNOUT_INTERNAL_ASSERT(sizes[d] == 1, "cpuKernel: input ", k - 1,
                                " does not broadcast to the output");
      }
    }
    g.data[k] = static_cast<char*>(t.data_ptr());
  }
  for (int64_t d = 0; d < ndim; ++d) {
    TURNOUT_CHECK(out_sizes[d] == 1 || full[0][d] != 0,
                  ErrorKind::InvalidArgument,
                  "unsupported operation: more than one element of the "
                  "written-to tensor refers to a single memory location. "
                  "Please clone() the tensor before performing the "
                  "operation.");
  }

  // The order of the walk, innermost first: out's dimensions from the last,
  // or, when out is not contiguous (an elementwise result laid out after
  // permuted inputs, kernels/output_layout.h), from its smallest stride up
  // (ties: the later dimension first), so that out, and inputs laid out as
  // it is, are walked in memory order and merge into long contiguous runs.
  // (A contiguous out, the common case, builds no order.)
  const bool reorder = !out.unsafeGetTensorImpl()->is_contiguous_default();
  DimVector order;
  if (reorder) {
    order.resize(ndim);
    for (int64_t i = 0; i < ndim; ++i) order[i] = ndim - 1 - i;
    for (int64_t i = 1; i < ndim; ++i) {
      for (int64_t j = i; j > 0 && full[0][order[j]] < full[0][order[j - 1]];
           --j) {
        std::swap(order[j], order[j - 1]);
      }
    }
  }

  // Innermost first, size-1 dimensions dropped, a dimension merged into the
  // one inside it when every operand steps through both as through one.
  g.strides.assign(g.num_operands, DimVector());
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t d = reorder ? order[i] : ndim - 1 - i;
    if (out_sizes[d] == 1) continue;
    if (!g.sizes.empty()) {
      const size_t inner = g.sizes.size() - 1;
      bool mergeable = true;
      for (int k = 0; k < g.num_operands && mergeable; ++k) {
        mergeable = full[k][d] == g.strides[k][inner] * g.sizes[inner];
      }
      if (mergeable) {
        g.sizes[inner] *= out_sizes[d];
        continue;
      }
    }
    g.sizes.push_back(out_sizes[d]);
    for (int k = 0; k < g.num_operands; ++k) g.strides[k].push_back(full[k][d]);
  }
  if (g.sizes.empty()) {  // one element
    g.sizes.push_back(1);
    for (int k = 0; k < g.num_operands; ++k) g.strides[k].push_back(0);
  }
  return g;
}

}  // namespace detail

void copyCast(const Tensor& dst, const Tensor& src) {
  if (dst.is_meta() || src.is_meta() || dst.numel() == 0) return;
  // Another device's memory (a CUDA out= tensor of a composite kernel): the
  // device's own copy_ kernel, through the dispatcher.
  if (!dst.is_cpu() || !src.is_cpu()) {
    static const auto copy =
        Dispatcher::singleton()
            .findSchemaOrThrow("aten::copy_", "")
            .typed<Tensor&(Tensor&, const Tensor&, bool)>();
    Tensor out = dst;
    copy.call(out, src, /*non_blocking=*/false);
    return;
  }
  // Same dtype, both contiguous and as many elements (src then differs from
  // dst's shape at most by size-1 dimensions): one block of bytes.
  if (dst.scalar_type() == src.scalar_type() && dst.is_contiguous() &&
      src.is_contiguous() && dst.numel() == src.numel()) {
    std::memmove(dst.data_ptr(), src.data_ptr(), dst.numel() * dst.itemsize());
    return;
  }
  visitDtype(dst.scalar_type(), "copy_", [&](auto dst_tag) {
    using D = typename decltype(dst_tag)::type;
    visitDtype(src.scalar_type(), "copy_", [&](auto src_tag) {
      using S = typename decltype(src_tag)::type;
      cpuKernel(dst, src, [](S s) -> D { return convertElement<D>(s); });
    });
  });
}

Tensor castTo(const Tensor& t, ScalarType dtype) {
  if (t.scalar_type() == dtype) return t;
  Tensor out = emptyTensor(t.sizes(), dtype, t.device());
  copyCast(out, t);
  return out;
}

Tensor contiguousCastTo(const Tensor& t, ScalarType dtype) {
  if (t.scalar_type() == dtype && t.is_contiguous()) return t;
  Tensor out = emptyTensor(t.sizes(), dtype, t.device());
  copyCast(out, t);
  return out;
}

}  // namespace turnout

#include "kernels/shape.h"

#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/factory_utils.h"
#include "kernels/shape_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

void checkDefined(const Tensor& t, const char* op) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op,
                "(): expected a defined tensor, got an undefined one");
}

DimVector toDims(IntArrayRef a) { return DimVector(a.begin(), a.end()); }

// ---- Views
// ---------------------------------------------------------------------

Tensor view_kernel(const Tensor& self, IntArrayRef size) {
  checkDefined(self, "view");
  DimVector shape = inferSize(size, self.numel());
  std::optional<DimVector> strides =
      computeViewStrides(self.sizes(), self.strides(), shape);
  TURNOUT_CHECK(strides.has_value(), ErrorKind::InvalidArgument,
                "view size is not compatible with input tensor's size and "
                "stride (at least one dimension spans across two contiguous "
                "subspaces). Use .reshape(...) instead.");
  return makeView(self, shape, *strides, self.storage_offset());
}

// _unsafe_view: view's result, which autograd does not treat as a view
// (its node is UnsafeViewBackward0, not a view's; _is_view() is False):
// for a tensor that nothing else sees, as reshape's fresh copy.
Tensor unsafe_view_composite(const Tensor& self, IntArrayRef size) {
  checkDefined(self, "_unsafe_view");
  return view_kernel(self, size);
}

Tensor reshape_composite(const Tensor& self, IntArrayRef shape) {
  checkDefined(self, "reshape");
  DimVector sizes = inferSize(shape, self.numel());
  if (computeViewStrides(self.sizes(), self.strides(), sizes).has_value()) {
    return view(self, sizes);
  }
  // As torch 1.13's: a copy, which is not a view of self.
  static const auto unsafe_view =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::_unsafe_view", "")
          .typed<Tensor(const Tensor&, IntArrayRef)>();
  return unsafe_view.call(clone(self, MemoryFormat::Contiguous), sizes);
}

Tensor transpose_composite(const Tensor& self, int64_t dim0, int64_t dim1) {
  checkDefined(self, "transpose");
  const int64_t n = self.dim();
  dim0 = maybeWrapDim(dim0, n);
  dim1 = maybeWrapDim(dim1, n);
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  if (n > 0) {
    std::swap(sizes[dim0], sizes[dim1]);
    std::swap(strides[dim0], strides[dim1]);
  }
  return makeView(self, sizes, strides, self.storage_offset());
}

Tensor t_composite(const Tensor& self) {
  checkDefined(self, "t");
  TURNOUT_CHECK(self.dim() <= 2, ErrorKind::InvalidArgument,
                "t() expects a tensor with <= 2 dimensions, but self is ",
                self.dim(), "D");
  if (self.dim() < 2) {
    return makeView(self, self.sizes(), self.strides(), self.storage_offset());
  }
  return transpose_composite(self, 0, 1);
}

Tensor permute_composite(const Tensor& self, IntArrayRef dims) {
  checkDefined(self, "permute");
  const int64_t n = self.dim();
  TURNOUT_CHECK(static_cast<int64_t>(dims.size()) == n,
                ErrorKind::InvalidArgument,
                "permute(): number of dimensions in the tensor input does not "
                "match the length of the desired ordering of dimensions i.e. "
                "input.dim() = ",
                n, " is not equal to len(dims) = ", dims.size());
  DimVector sizes(n);
  DimVector strides(n);
  std::vector<bool> seen(n, false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = maybeWrapDim(dims[i], n);
    TURNOUT_CHECK(!seen[d], ErrorKind::InvalidArgument,
                  "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.size(d);
    strides[i] = self.stride(d);
  }
  return makeView(self, sizes, strides, self.storage_offset());
}

Tensor expand_composite(const Tensor& self, IntArrayRef size, bool implicit) {
  checkDefined(self, "expand");
  ExpandedGeometry g = expandGeometry(self, size);
  return makeView(self, g.sizes, g.strides, self.storage_offset());
}

Tensor squeeze_composite(const Tensor& self, int64_t dim) {
  checkDefined(self, "squeeze");
  const int64_t n = self.dim();
  dim = maybeWrapDim(dim, n);
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  if (n > 0 && sizes[dim] == 1) {
    sizes.erase(sizes.begin() + dim);
    strides.erase(strides.begin() + dim);
  }
  return makeView(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze_composite(const Tensor& self, int64_t dim) {
  checkDefined(self, "unsqueeze");
  const int64_t n = self.dim();
  dim = maybeWrapDim(dim, n + 1);
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  // The stride the new dimension would have in a dense layout around it.
  const int64_t stride = dim >= n ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return makeView(self, sizes, strides, self.storage_offset());
}

Tensor slice_composite(const Tensor& self, int64_t dim,
                       std::optional<int64_t> start, std::optional<int64_t> end,
                       int64_t step) {
  checkDefined(self, "slice");
  TURNOUT_CHECK(self.dim() > 0, ErrorKind::InvalidArgument,
                "slice() cannot be applied to a 0-dim tensor.");
  TURNOUT_CHECK(step > 0, ErrorKind::InvalidArgument,
                "slice step must be positive");
  dim = maybeWrapDim(dim, self.dim());
  const int64_t size = self.size(dim);
  // Python's rules: negative bounds count from the end; then clamp.
  auto clampBound = [size](std::optional<int64_t> b, int64_t dflt) {
    int64_t v = b.value_or(dflt);
    if (v < 0) v += size;
    return std::min(std::max<int64_t>(v, 0), size);
  };
  const int64_t lo = clampBound(start, 0);
  const int64_t hi = std::max(lo, clampBound(end, size));
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  sizes[dim] = hi == lo ? 0 : (hi - lo - 1) / step + 1;  // no overflow
  const int64_t offset = self.storage_offset() + lo * strides[dim];
  // Saturates only when the dimension has at most one element (its stride
  // then addresses nothing).
  strides[dim] = saturatingMul(strides[dim], step);
  return makeView(self, sizes, strides, offset);
}

Tensor select_composite(const Tensor& self, int64_t dim, int64_t index) {
  checkDefined(self, "select");
  TURNOUT_CHECK(self.dim() > 0, ErrorKind::Index,
                "select() cannot be applied to a 0-dim tensor.");
  dim = maybeWrapDim(dim, self.dim());
  const int64_t size = self.size(dim);
  TURNOUT_CHECK(index >= -size && index < size, ErrorKind::Index,
                "select(): index ", index, " out of range for tensor of size [",
                absl::StrJoin(self.sizes(), ", "), "] at dimension ", dim);
  if (index < 0) index += size;
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  const int64_t offset = self.storage_offset() + index * strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return makeView(self, sizes, strides, offset);
}

// alias: a view of all of `self` (its autograd kernel records
// AliasBackward0, as torch's; detach's cuts the history).
Tensor alias_composite(const Tensor& self) {
  checkDefined(self, "alias");
  return makeView(self, self.sizes(), self.strides(), self.storage_offset());
}

Tensor detach_composite(const Tensor& self) {
  checkDefined(self, "detach");
  return makeView(self, self.sizes(), self.strides(), self.storage_offset());
}

// ---- Copies
// ---------------------------------------------------------------------

// CPU and Meta: allocate on the inputs' device, then copy_ each input into
// its slice of the result (copy_'s Meta kernel copies nothing).
Tensor cat_kernel(absl::Span<const Tensor> tensors, int64_t dim) {
  TURNOUT_CHECK(!tensors.empty(), ErrorKind::InvalidArgument,
                "torch.cat(): expected a non-empty list of Tensors");
  // PyTorch 1.13 still skips 1-d tensors of size [0] whatever `dim` is.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; };
  const Tensor* ref = nullptr;
  ScalarType dtype = tensors[0].scalar_type();
  const Device device = tensors[0].device();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    checkDefined(t, "cat");
    TURNOUT_CHECK(t.dim() > 0, ErrorKind::InvalidArgument,
                  "zero-dimensional tensor (at position ", i,
                  ") cannot be concatenated");
    TURNOUT_CHECK(t.device() == device, ErrorKind::InvalidArgument,
                  "Expected all tensors to be on the same device, but found at "
                  "least two devices, ",
                  device, " and ", t.device(), "!");
    dtype = promoteTypes(dtype, t.scalar_type());
    if (ref == nullptr && !skipped(t)) ref = &t;
  }
  if (ref == nullptr) return emptyTensor({0}, dtype, device);
  dim = maybeWrapDim(dim, ref->dim());
  DimVector out_sizes = toDims(ref->sizes());
  out_sizes[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    TURNOUT_CHECK(t.dim() == ref->dim(), ErrorKind::InvalidArgument,
                  "Tensors must have same number of dimensions: got ",
                  ref->dim(), " and ", t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d == dim) continue;
      TURNOUT_CHECK(t.size(d) == ref->size(d), ErrorKind::InvalidArgument,
                    "Sizes of tensors must match except in dimension ", dim,
                    ". Expected size ", ref->size(d), " but got size ",
                    t.size(d), " for tensor number ", i, " in the list.");
    }
    TURNOUT_CHECK(
        !__builtin_add_overflow(out_sizes[dim], t.size(dim), &out_sizes[dim]),
        ErrorKind::InvalidArgument, "cat(): the size of the result in "
        "dimension ", dim, " (the sum of the inputs' sizes there) overflows "
        "int64 at tensor number ", i, " in the list");
  }
  Tensor out = emptyTensor(out_sizes, dtype, device);
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    Tensor part = makeView(out, t.sizes(), out.strides(), at * out.stride(dim));
    copy_(part, t);
    at += t.size(dim);
  }
  return out;
}

Tensor stack_composite(absl::Span<const Tensor> tensors, int64_t dim) {
  TURNOUT_CHECK(!tensors.empty(), ErrorKind::InvalidArgument,
                "stack expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i) {
    checkDefined(tensors[i], "stack");
    TURNOUT_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                  ErrorKind::InvalidArgument,
                  "stack expects each tensor to be equal size, but got [",
                  absl::StrJoin(tensors[0].sizes(), ", "), "] at entry 0 and [",
                  absl::StrJoin(tensors[i].sizes(), ", "), "] at entry ", i);
  }
  dim = maybeWrapDim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, dim));
  return cat(parts, dim);
}

Tensor contiguous_composite(const Tensor& self, MemoryFormat memory_format) {
  checkDefined(self, "contiguous");
  TURNOUT_CHECK(memory_format != MemoryFormat::Preserve,
                ErrorKind::InvalidArgument,
                "preserve memory format is unsupported by the contiguous "
                "operator");
  if (isContiguousAs(self, memory_format)) return self;
  return clone(self, memory_format);
}

}  // namespace

// ---- Front end
// ------------------------------------------------------------------

Tensor view(const Tensor& self, IntArrayRef size) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::view", "")
                             .typed<Tensor(const Tensor&, IntArrayRef)>();
  return op.call(self, size);
}

Tensor reshape(const Tensor& self, IntArrayRef shape) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::reshape", "")
                             .typed<Tensor(const Tensor&, IntArrayRef)>();
  return op.call(self, shape);
}

Tensor t(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::t", "")
                             .typed<Tensor(const Tensor&)>();
  return op.call(self);
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::transpose", "int")
                             .typed<Tensor(const Tensor&, int64_t, int64_t)>();
  return op.call(self, dim0, dim1);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::permute", "")
                             .typed<Tensor(const Tensor&, IntArrayRef)>();
  return op.call(self, dims);
}

Tensor expand(const Tensor& self, IntArrayRef size, bool implicit) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::expand", "")
                             .typed<Tensor(const Tensor&, IntArrayRef, bool)>();
  return op.call(self, size, implicit);
}

Tensor squeeze(const Tensor& self, int64_t dim) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::squeeze", "dim")
                             .typed<Tensor(const Tensor&, int64_t)>();
  return op.call(self, dim);
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::unsqueeze", "")
                             .typed<Tensor(const Tensor&, int64_t)>();
  return op.call(self, dim);
}

Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::slice", "Tensor")
          .typed<Tensor(const Tensor&, int64_t, std::optional<int64_t>,
                        std::optional<int64_t>, int64_t)>();
  return op.call(self, dim, start, end, step);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::select", "int")
                             .typed<Tensor(const Tensor&, int64_t, int64_t)>();
  return op.call(self, dim, index);
}

Tensor cat(absl::Span<const Tensor> tensors, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::cat", "")
          .typed<Tensor(absl::Span<const Tensor>, int64_t)>();
  return op.call(tensors, dim);
}

Tensor stack(absl::Span<const Tensor> tensors, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::stack", "")
          .typed<Tensor(absl::Span<const Tensor>, int64_t)>();
  return op.call(tensors, dim);
}

Tensor contiguous(const Tensor& self, MemoryFormat memory_format) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::contiguous", "")
                             .typed<Tensor(const Tensor&, MemoryFormat)>();
  return op.call(self, memory_format);
}

Tensor detach(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::detach", "")
                             .typed<Tensor(const Tensor&)>();
  return op.call(self);
}

Tensor alias(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::alias", "")
                             .typed<Tensor(const Tensor&)>();
  return op.call(self);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def("view(Tensor(a) self, SymInt[] size) -> Tensor(a)");
  m.def("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)");
  m.def("_unsafe_view(Tensor self, SymInt[] size) -> Tensor");
  m.def("t(Tensor(a) self) -> Tensor(a)");
  m.def("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)");
  m.def("permute(Tensor(a) self, int[] dims) -> Tensor(a)");
  m.def(
      "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> "
      "Tensor(a)");
  m.def("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)");
  m.def("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)");
  m.def(
      "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
      "end=None, SymInt step=1) -> Tensor(a)");
  m.def("select.int(Tensor(a) self, int dim, int index) -> Tensor(a)");
  m.def("cat(Tensor[] tensors, int dim=0) -> Tensor");
  m.def("stack(Tensor[] tensors, int dim=0) -> Tensor");
  m.def(
      "contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> "
      "Tensor(a)");
  m.def("detach(Tensor(a) self) -> Tensor(a)");
  m.def("alias(Tensor(a) self) -> Tensor(a)");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("view", TURNOUT_FN(turnout::view_kernel));
  m.impl("cat", TURNOUT_FN(turnout::cat_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("view", TURNOUT_FN(turnout::view_kernel));
  m.impl("cat", TURNOUT_FN(turnout::cat_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("t", TURNOUT_FN(turnout::t_composite));
  m.impl("transpose.int", TURNOUT_FN(turnout::transpose_composite));
  m.impl("permute", TURNOUT_FN(turnout::permute_composite));
  m.impl("expand", TURNOUT_FN(turnout::expand_composite));
  m.impl("squeeze.dim", TURNOUT_FN(turnout::squeeze_composite));
  m.impl("unsqueeze", TURNOUT_FN(turnout::unsqueeze_composite));
  m.impl("slice.Tensor", TURNOUT_FN(turnout::slice_composite));
  m.impl("select.int", TURNOUT_FN(turnout::select_composite));
  m.impl("detach", TURNOUT_FN(turnout::detach_composite));
  m.impl("alias", TURNOUT_FN(turnout::alias_composite));
  m.impl("_unsafe_view", TURNOUT_FN(turnout::unsafe_view_composite));
  m.impl("stack", TURNOUT_FN(turnout::stack_composite));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("reshape", TURNOUT_FN(turnout::reshape_composite));
  m.impl("contiguous", TURNOUT_FN(turnout::contiguous_composite));
}

#include "kernels/shape_ops.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/autograd_meta_interface.h"
#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/indexing.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/tensor_utils.h"
#include "kernels/type_promotion.h"

namespace turnout {
namespace {

void checkDefined(const Tensor& t, const char* op) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op,
                "(): expected a defined tensor, got an undefined one");
}

DimVector toDims(IntArrayRef a) { return DimVector(a.begin(), a.end()); }

// self narrowed to [start, start + length) along dim, as a view.
Tensor narrowView(const Tensor& self, int64_t dim, int64_t start,
                  int64_t length) {
  DimVector sizes = toDims(self.sizes());
  sizes[dim] = length;
  const int64_t offset =
      self.storage_offset() + (length == 0 ? 0 : start * self.stride(dim));
  return makeView(self, sizes, self.strides(), offset);
}

// ---- Splitting ------------------------------------------------------------------

std::vector<Tensor> split_kernel(const Tensor& self, int64_t split_size,
                                 int64_t dim) {
  checkDefined(self, "split");
  TURNOUT_CHECK(self.dim() != 0, ErrorKind::InvalidArgument,
                "split expects at least a 1-dimensional tensor");
  TURNOUT_CHECK(split_size >= 0, ErrorKind::InvalidArgument,
                "split expects split_size be non-negative, but got split_size=",
                split_size);
  dim = maybeWrapDim(dim, self.dim());
  const int64_t size = self.size(dim);
  TURNOUT_CHECK(split_size > 0 || size == 0, ErrorKind::InvalidArgument,
                "split_size can only be 0 if dimension size is 0, but got "
                "dimension size of ",
                size);
  // One piece (empty) for an empty dimension, as torch.
  const int64_t pieces =
      split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(pieces));
  for (int64_t i = 0; i < pieces; ++i) {
    const int64_t start = i * split_size;
    out.push_back(narrowView(self, dim, start,
                             std::min(split_size, size - start)));
  }
  return out;
}

std::vector<Tensor> split_with_sizes_kernel(const Tensor& self,
                                            IntArrayRef split_sizes,
                                            int64_t dim) {
  checkDefined(self, "split_with_sizes");
  TURNOUT_CHECK(self.dim() != 0, ErrorKind::InvalidArgument,
                "split expects at least a 1-dimensional tensor");
  dim = maybeWrapDim(dim, self.dim());
  const int64_t size = self.size(dim);
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "split_with_sizes expects split_sizes have only non-negative "
                  "entries, but got split_sizes=[",
                  absl::StrJoin(split_sizes, ", "), "]");
    TURNOUT_CHECK(!__builtin_add_overflow(total, s, &total),
                  ErrorKind::InvalidArgument,
                  "split_with_sizes: the sum of split_sizes=[",
                  absl::StrJoin(split_sizes, ", "), "] overflows int64");
  }
  TURNOUT_CHECK(total == size, ErrorKind::InvalidArgument,
                "split_with_sizes expects split_sizes to sum exactly to ", size,
                " (input tensor's size at dimension ", dim,
                "), but got split_sizes=[", absl::StrJoin(split_sizes, ", "),
                "]");
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrowView(self, dim, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split_sizes_composite(const Tensor& self,
                                          IntArrayRef split_size, int64_t dim) {
  return split_with_sizes(self, split_size, dim);
}

using SplitFn = std::vector<Tensor> (*)(const Tensor&, int64_t, int64_t);
using SplitSizesFn = std::vector<Tensor> (*)(const Tensor&, IntArrayRef,
                                             int64_t);

// chunk through the given split operators (split's or unsafe_split's).
std::vector<Tensor> chunkWith(const Tensor& self, int64_t chunks, int64_t dim,
                              const char* op, SplitFn split_fn,
                              SplitSizesFn split_sizes_fn) {
  checkDefined(self, op);
  TURNOUT_CHECK(self.dim() > 0, ErrorKind::InvalidArgument,
                "chunk expects at least a 1-dimensional tensor");
  TURNOUT_CHECK(chunks > 0, ErrorKind::InvalidArgument,
                "chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t size = self.size(maybeWrapDim(dim, self.dim()));
  const int64_t split_size = size / chunks + (size % chunks != 0);
  if (size == 0) {
    // `chunks` empty pieces: split would give one.
    return split_sizes_fn(self, DimVector(static_cast<size_t>(chunks), 0),
                          dim);
  }
  return split_fn(self, split_size, dim);
}

std::vector<Tensor> chunk_composite(const Tensor& self, int64_t chunks,
                                    int64_t dim) {
  return chunkWith(self, chunks, dim, "chunk", &split, &split_with_sizes);
}

std::vector<Tensor> unbind_kernel(const Tensor& self, int64_t dim) {
  checkDefined(self, "unbind");
  TURNOUT_CHECK(self.dim() > 0, ErrorKind::Index, "Dimension specified as ",
                dim, " but tensor has no dimensions");
  dim = maybeWrapDim(dim, self.dim());
  DimVector sizes = toDims(self.sizes());
  DimVector strides = toDims(self.strides());
  const int64_t stride = strides[dim];
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.size(dim); ++i) {
    out.push_back(
        makeView(self, sizes, strides, self.storage_offset() + i * stride));
  }
  return out;
}

// ---- Views -------------------------------------------------------------------

Tensor flatten_composite(const Tensor& self, int64_t start_dim,
                         int64_t end_dim) {
  checkDefined(self, "flatten");
  const int64_t nd = self.dim();
  start_dim = maybeWrapDim(start_dim, nd);
  end_dim = maybeWrapDim(end_dim, nd);
  TURNOUT_CHECK(start_dim <= end_dim, ErrorKind::InvalidArgument,
                "flatten() has invalid args: start_dim cannot come after "
                "end_dim");
  if (nd == 0) return reshape(self, {1});
  if (start_dim == end_dim) return self;
  DimVector shape;
  int64_t merged = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (d < start_dim || d > end_dim) {
      shape.push_back(self.size(d));
    } else {
      merged *= self.size(d);
      if (d == end_dim) shape.push_back(merged);
    }
  }
  return reshape(self, shape);
}

Tensor as_strided_kernel(const Tensor& self, IntArrayRef size,
                         IntArrayRef stride,
                         std::optional<int64_t> storage_offset) {
  checkDefined(self, "as_strided");
  TURNOUT_CHECK(size.size() == stride.size(), ErrorKind::InvalidArgument,
                "mismatch in length of strides and shape");
  for (int64_t s : stride) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "as_strided: Negative strides are not supported at the "
                  "moment, got strides: [",
                  absl::StrJoin(stride, ", "), "]");
  }
  for (int64_t s : size) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument,
                  "as_strided: Trying to create tensor with negative "
                  "dimension ", s, ": [", absl::StrJoin(size, ", "), "]");
  }
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  TURNOUT_CHECK(offset >= 0, ErrorKind::InvalidArgument,
                "Tensor: invalid storage offset ", offset);
  return makeView(self, size, stride, offset);
}

Tensor diagonal_kernel(const Tensor& self, int64_t offset, int64_t dim1,
                       int64_t dim2) {
  checkDefined(self, "diagonal");
  const int64_t nd = self.dim();
  const int64_t d1 = maybeWrapDim(dim1, nd);
  const int64_t d2 = maybeWrapDim(dim2, nd);
  TURNOUT_CHECK(d1 != d2, ErrorKind::InvalidArgument,
                "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n1 = self.size(d1);
  const int64_t n2 = self.size(d2);
  int64_t len;
  int64_t at = self.storage_offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(n1, n2 - offset), 0);
    if (len > 0) at += offset * self.stride(d2);
  } else {
    len = std::max<int64_t>(std::min(n1 + offset, n2), 0);
    if (len > 0) at -= offset * self.stride(d1);
  }
  DimVector sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(len);
  strides.push_back(self.stride(d1) + self.stride(d2));
  return makeView(self, sizes, strides, at);
}

// ---- Joining (out=) ------------------------------------------------------------

Tensor& cat_out_kernel(absl::Span<const Tensor> tensors, int64_t dim,
                       Tensor& out) {
  Tensor result = cat(tensors, dim);
  return reduce_internal::copyToOut("cat.out", result, out);
}

Tensor& stack_out_composite(absl::Span<const Tensor> tensors, int64_t dim,
                            Tensor& out) {
  Tensor result = stack(tensors, dim);
  return reduce_internal::copyToOut("stack.out", result, out);
}

// ---- where -------------------------------------------------------------------

Tensor scalar_tensor_composite(const Scalar& s, std::optional<ScalarType> dtype,
                               std::optional<Layout> layout,
                               std::optional<Device> device,
                               std::optional<bool> pin_memory) {
  TensorOptions options(dtype.value_or(ScalarType::Float));
  return full({}, s, options.device(device.value_or(Device(DeviceType::CPU))));
}

// A tensor made from Python values outside the dispatcher, announced to
// modes (torch's indexing calls it on the index and value tensors it makes).
Tensor lift_fresh_composite(const Tensor& self) { return self; }

Tensor where_scalar_other(const Tensor& condition, const Tensor& self,
                          const Scalar& other) {
  checkDefined(self, "where");
  const ScalarType dtype = resultType(self, other);
  return where(condition, self, scalar_tensor(other, dtype, self.device()));
}

Tensor where_scalar_self(const Tensor& condition, const Scalar& self,
                         const Tensor& other) {
  checkDefined(other, "where");
  const ScalarType dtype = resultType(other, self);
  return where(condition, scalar_tensor(self, dtype, other.device()), other);
}

// Two numbers: Float when one is floating, else Long, else Bool.
ScalarType scalarPairType(const Scalar& a, const Scalar& b) {
  auto kind = [](const Scalar& s) {
    return s.isFloatingPoint() ? 2 : s.isBoolean() ? 0 : 1;
  };
  const int k = std::max(kind(a), kind(b));
  return k == 2 ? ScalarType::Float : k == 1 ? ScalarType::Long
                                              : ScalarType::Bool;
}

Tensor where_scalar(const Tensor& condition, const Scalar& self,
                    const Scalar& other) {
  checkDefined(condition, "where");
  const ScalarType dtype = scalarPairType(self, other);
  return where(condition, scalar_tensor(self, dtype, condition.device()),
               scalar_tensor(other, dtype, condition.device()));
}

std::vector<Tensor> where_condition(const Tensor& condition) {
  checkDefined(condition, "where");
  const Tensor c = condition.dim() == 0 ? unsqueeze(condition, 0) : condition;
  return unbind(nonzero(c), 1);
}

Tensor& where_self_out_kernel(const Tensor& condition, const Tensor& self,
                              const Tensor& other, Tensor& out) {
  Tensor result = where(condition, self, other);
  // A resized out gets the layout of a new result, as torch 1.13's
  // (kernels/output_layout.h); copyToOut alone would make it contiguous.
  // Only where copyToOut's checks pass, so that a refused call leaves out
  // as it was.
  if (result.strides() != IntArrayRef(contiguousStrides(result.sizes())) &&
      out.defined() &&
      out.scalar_type() == result.scalar_type() &&
      out.device() == result.device()) {
    reduce_internal::resizeOutput(out, result.sizes(), result.strides(),
                                  "where.self_out");
  }
  return reduce_internal::copyToOut("where.self_out", result, out);
}

}  // namespace

// ---- Front end --------------------------------------------------------------------

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::split", "Tensor")
          .typed<std::vector<Tensor>(const Tensor&, int64_t, int64_t)>();
  return op.call(self, split_size, dim);
}

std::vector<Tensor> split_with_sizes(const Tensor& self,
                                     IntArrayRef split_sizes, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::split_with_sizes", "")
          .typed<std::vector<Tensor>(const Tensor&, IntArrayRef, int64_t)>();
  return op.call(self, split_sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::chunk", "")
          .typed<std::vector<Tensor>(const Tensor&, int64_t, int64_t)>();
  return op.call(self, chunks, dim);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::unbind", "int")
          .typed<std::vector<Tensor>(const Tensor&, int64_t)>();
  return op.call(self, dim);
}

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::flatten", "using_ints")
          .typed<Tensor(const Tensor&, int64_t, int64_t)>();
  return op.call(self, start_dim, end_dim);
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::as_strided", "")
          .typed<Tensor(const Tensor&, IntArrayRef, IntArrayRef,
                        std::optional<int64_t>)>();
  return op.call(self, size, stride, storage_offset);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1,
                int64_t dim2) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::diagonal", "")
          .typed<Tensor(const Tensor&, int64_t, int64_t, int64_t)>();
  return op.call(self, offset, dim1, dim2);
}

Tensor& cat_out(absl::Span<const Tensor> tensors, int64_t dim, Tensor& out) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::cat", "out")
          .typed<Tensor&(absl::Span<const Tensor>, int64_t, Tensor&)>();
  return op.call(tensors, dim, out);
}

Tensor& stack_out(absl::Span<const Tensor> tensors, int64_t dim, Tensor& out) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::stack", "out")
          .typed<Tensor&(absl::Span<const Tensor>, int64_t, Tensor&)>();
  return op.call(tensors, dim, out);
}

Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::where", "ScalarSelf")
          .typed<Tensor(const Tensor&, const Scalar&, const Tensor&)>();
  return op.call(condition, self, other);
}

Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::where", "ScalarOther")
          .typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
  return op.call(condition, self, other);
}

Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::where", "Scalar")
          .typed<Tensor(const Tensor&, const Scalar&, const Scalar&)>();
  return op.call(condition, self, other);
}

std::vector<Tensor> where(const Tensor& condition) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::where", "")
                             .typed<std::vector<Tensor>(const Tensor&)>();
  return op.call(condition);
}

Tensor scalar_tensor(const Scalar& s, std::optional<ScalarType> dtype,
                     std::optional<Device> device) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::scalar_tensor", "")
          .typed<Tensor(const Scalar&, std::optional<ScalarType>,
                        std::optional<Layout>, std::optional<Device>,
                        std::optional<bool>)>();
  return op.call(s, dtype, std::nullopt, device, std::nullopt);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def(
      "split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> "
      "Tensor(a)[]");
  m.def(
      "split.sizes(Tensor(a -> *) self, int[] split_size, int dim=0) -> "
      "Tensor(a)[]");
  m.def(
      "split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> "
      "Tensor(a)[]");
  m.def("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]");
  m.def("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]");
  m.def(
      "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> "
      "Tensor(a)");
  m.def(
      "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
      "storage_offset=None) -> Tensor(a)");
  m.def(
      "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> "
      "Tensor(a)");
  m.def("cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)");
  m.def(
      "stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def(
      "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> "
      "Tensor");
  m.def(
      "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> "
      "Tensor");
  m.def("where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor");
  m.def("where(Tensor condition) -> Tensor[]");
  m.def(
      "where.self_out(Tensor condition, Tensor self, Tensor other, *, "
      "Tensor(a!) out) -> Tensor(a!)");
  m.def("lift_fresh(Tensor(a) self) -> Tensor(a)");
  m.def(
      "scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("cat.out", TURNOUT_FN(turnout::cat_out_kernel));
  m.impl("where.self_out", TURNOUT_FN(turnout::where_self_out_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, Meta, m) {
  m.impl("cat.out", TURNOUT_FN(turnout::cat_out_kernel));
  m.impl("where.self_out", TURNOUT_FN(turnout::where_self_out_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("split.Tensor", TURNOUT_FN(turnout::split_kernel));
  m.impl("split_with_sizes", TURNOUT_FN(turnout::split_with_sizes_kernel));
  m.impl("unbind.int", TURNOUT_FN(turnout::unbind_kernel));
  m.impl("as_strided", TURNOUT_FN(turnout::as_strided_kernel));
  m.impl("diagonal", TURNOUT_FN(turnout::diagonal_kernel));
  m.impl("stack.out", TURNOUT_FN(turnout::stack_out_composite));
  m.impl("scalar_tensor", TURNOUT_FN(turnout::scalar_tensor_composite));
  m.impl("lift_fresh", TURNOUT_FN(turnout::lift_fresh_composite));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("split.sizes", TURNOUT_FN(turnout::split_sizes_composite));
  m.impl("chunk", TURNOUT_FN(turnout::chunk_composite));
  m.impl("flatten.using_ints", TURNOUT_FN(turnout::flatten_composite));
  m.impl("where.ScalarSelf", TURNOUT_FN(turnout::where_scalar_self));
  m.impl("where.ScalarOther", TURNOUT_FN(turnout::where_scalar_other));
  m.impl("where.Scalar", TURNOUT_FN(turnout::where_scalar));
  m.impl("where", TURNOUT_FN(turnout::where_condition));
}

// ---- unsafe_split, unsafe_split_with_sizes, unsafe_chunk --------------------------
// What a traced nn.LSTMCell / nn.GRUCell records: torch's lstm_cell calls
// unsafe_chunk, then sigmoid_ on each piece. The pieces share self's memory
// as split's do, but each has a version counter of its own (writing to one
// does not invalidate what autograd saved of another), and autograd records
// them as results, not views (kernels/autograd/shape_autograd.cc), so they
// may be modified in place: torch 1.13's semantics.

namespace turnout {
namespace {

std::vector<Tensor> ownVersionCounters(std::vector<Tensor> pieces) {
  for (Tensor& t : pieces) {
    t.unsafeGetTensorImpl()->set_version_counter(
        make_intrusive<VersionCounter>());
  }
  return pieces;
}

std::vector<Tensor> unsafe_split_kernel(const Tensor& self, int64_t split_size,
                                        int64_t dim) {
  return ownVersionCounters(split(self, split_size, dim));
}

std::vector<Tensor> unsafe_split_with_sizes_kernel(const Tensor& self,
                                                   IntArrayRef split_sizes,
                                                   int64_t dim) {
  return ownVersionCounters(split_with_sizes(self, split_sizes, dim));
}

std::vector<Tensor> unsafe_chunk_composite(const Tensor& self, int64_t chunks,
                                           int64_t dim) {
  return chunkWith(self, chunks, dim, "unsafe_chunk", &unsafe_split,
                   &unsafe_split_with_sizes);
}

}  // namespace

std::vector<Tensor> unsafe_split(const Tensor& self, int64_t split_size,
                                 int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::unsafe_split", "Tensor")
          .typed<std::vector<Tensor>(const Tensor&, int64_t, int64_t)>();
  return op.call(self, split_size, dim);
}

std::vector<Tensor> unsafe_split_with_sizes(const Tensor& self,
                                            IntArrayRef split_sizes,
                                            int64_t dim) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::unsafe_split_with_sizes", "")
          .typed<std::vector<Tensor>(const Tensor&, IntArrayRef, int64_t)>();
  return op.call(self, split_sizes, dim);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);
  m.def("unsafe_split.Tensor(Tensor self, int split_size, int dim=0) -> Tensor[]");
  m.def(
      "unsafe_split_with_sizes(Tensor self, int[] split_sizes, int dim=0) -> "
      "Tensor[]");
  m.def("unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("unsafe_split.Tensor", TURNOUT_FN(turnout::unsafe_split_kernel));
  m.impl("unsafe_split_with_sizes",
         TURNOUT_FN(turnout::unsafe_split_with_sizes_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("unsafe_chunk", TURNOUT_FN(turnout::unsafe_chunk_composite));
}

#include "kernels/indexing.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/copy.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/factory.h"
#include "kernels/mem_overlap.h"
#include "kernels/reduce_utils.h"
#include "kernels/shape.h"
#include "kernels/shape_utils.h"
#include "kernels/strided_walk.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

std::string dims(IntArrayRef s) { return "[" + absl::StrJoin(s, ", ") + "]"; }

void checkDefined(const Tensor& t, const char* op, const char* what) {
  TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument, op, "(): expected ",
                what, " to be a defined tensor, got an undefined one");
}

// True when `a` and `b` broadcast; the broadcast shape in *out.
bool broadcastInto(IntArrayRef a, IntArrayRef b, DimVector* out) {
  const size_t n = std::max(a.size(), b.size());
  DimVector r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    r[i] = x == 1 ? y : x;
  }
  *out = std::move(r);
  return true;
}

// The row-major element offsets of a tensor of `sizes` and `strides`.
std::vector<int64_t> offsetsOf(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(numelOf(sizes)));
  forEachOffset(sizes, strides, strides,
                [&](int64_t a, int64_t) { out.push_back(a); });
  return out;
}

// An advanced index resolved against `self`: the result's shape and, on
// CPU, the element offset in self (from self.data_ptr()) of each element of
// the result in row-major order.
struct IndexPlan {
  DimVector out_sizes;
  // torch's layout for the result: dense, its dimensions ordered as the
  // operands' strides order them (see layoutStrides).
  DimVector out_strides;
  std::vector<int64_t> offsets;  // empty on Meta
};

// The strides of a dense tensor of `sizes` whose memory order follows the
// operands' strides, as torch's TensorIterator allocates an output: going
// from the innermost dimension outwards, a dimension moves inside another
// when the first operand whose strides for the two are both nonzero and
// differ gives it the smaller stride (equal strides: the smaller size goes
// inside); otherwise the row-major order stays. Contiguous operands give
// contiguous strides.
DimVector layoutStrides(IntArrayRef sizes,
                        const std::vector<DimVector>& operand_strides) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  // order[k]: the dimension at memory position k, innermost first.
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) order[k] = n - 1 - k;
  // > 0: dimension b belongs inside dimension a.
  auto inside = [&](int64_t a, int64_t b) {
    for (const DimVector& st : operand_strides) {
      const int64_t sa = st[a], sb = st[b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa > sb ? 1 : -1;
      if (sizes[a] > sizes[b]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < n; ++i) {
    int64_t at = i;
    for (int64_t j = i - 1; j >= 0; --j) {
      const int c = inside(order[j], order[at]);
      if (c > 0) {
        std::swap(order[j], order[at]);
        at = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  DimVector strides(static_cast<size_t>(n));
  int64_t stride = 1;
  for (int64_t d : order) {
    strides[d] = stride;
    stride = saturatingMul(stride, std::max<int64_t>(sizes[d], 1));
  }
  return strides;
}

// Masks become long index tensors (their nonzero() columns); checks the
// dtypes, the masks' shapes and the count. Entries stay nullopt for dims
// taken whole.
OptionalTensorList expandMasks(const Tensor& self,
                               const OptionalTensorList& indices,
                               const char* op) {
  OptionalTensorList out;
  int64_t dim = 0;
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<Tensor>& idx = indices[i];
    if (!idx.has_value()) {
      out.emplace_back(std::nullopt);
      ++dim;
      continue;
    }
    const Tensor& t = *idx;
    const ScalarType st = t.scalar_type();
    TURNOUT_CHECK(t.device() == self.device() || t.is_cpu(), ErrorKind::InvalidArgument,
                  op, "(): indices should be either on cpu or on the same "
                  "device as the indexed tensor (", self.device(), "), got an "
                  "index on ", t.device(), " at position ", i);
    if (st == ScalarType::Bool || st == ScalarType::Byte) {
      TURNOUT_CHECK(dim + t.dim() <= self.dim(), ErrorKind::Index,
                    "too many indices for tensor of dimension ", self.dim());
      for (int64_t j = 0; j < t.dim(); ++j) {
        TURNOUT_CHECK(t.size(j) == self.size(dim + j), ErrorKind::Index,
                      "The shape of the mask ", dims(t.sizes()), " at index ",
                      j, " does not match the shape of the indexed tensor ",
                      dims(self.sizes()), " at index ", dim + j);
      }
      TURNOUT_CHECK(!t.is_meta() && !self.is_meta(), ErrorKind::NotImplemented,
                    op, "(): a boolean mask index on the Meta device is not "
                    "supported: the size of the result depends on the mask's "
                    "values (index with long tensors instead)");
      Tensor nz = nonzero(st == ScalarType::Bool ? t : ne(t, Scalar(0)));
      for (int64_t j = 0; j < t.dim(); ++j) out.emplace_back(select(nz, 1, j));
      dim += t.dim();
      continue;
    }
    TURNOUT_CHECK(st == ScalarType::Long, ErrorKind::Index,
                  "tensors used as indices must be long, byte or bool tensors");
    out.emplace_back(t);
    ++dim;
  }
  TURNOUT_CHECK(dim <= self.dim(), ErrorKind::Index,
                "too many indices for tensor of dimension ", self.dim());
  return out;
}

// The plan of self[indices] once masks are expanded (every defined entry a
// long tensor). `check_bounds` throws for out-of-range entries with
// index.Tensor's message, or index_select's when `select_message`.
IndexPlan planIndex(const Tensor& self, const OptionalTensorList& idx,
                    bool select_message = false) {
  const int64_t nd = self.dim();
  // The broadcast shape of the index tensors, and where they are.
  DimVector bshape;
  std::vector<int64_t> positions;
  bool first = true;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d].has_value()) continue;
    positions.push_back(static_cast<int64_t>(d));
    if (first) {
      bshape = DimVector(idx[d]->sizes().begin(), idx[d]->sizes().end());
      first = false;
      continue;
    }
    DimVector next;
    if (!broadcastInto(bshape, idx[d]->sizes(), &next)) {
      std::vector<std::string> shapes;
      for (const auto& t : idx) {
        if (t.has_value()) shapes.push_back(dims(t->sizes()));
      }
      TURNOUT_CHECK(false, ErrorKind::Index,
                    "shape mismatch: indexing tensors could not be broadcast "
                    "together with shapes ",
                    absl::StrJoin(shapes, ", "));
    }
    bshape = std::move(next);
  }
  bool adjacent = true;
  for (size_t k = 1; k < positions.size(); ++k) {
    if (positions[k] != positions[k - 1] + 1) adjacent = false;
  }
  // The result: the kept dims, with the broadcast block at the first
  // indexed dim (adjacent) or in front.
  DimVector out_sizes;
  std::vector<int64_t> src_dim;  // per result dim: self's dim, or -1 (block)
  auto pushBlock = [&] {
    for (int64_t s : bshape) {
      out_sizes.push_back(s);
      src_dim.push_back(-1);
    }
  };
  if (!positions.empty() && !adjacent) pushBlock();
  for (int64_t d = 0; d < nd; ++d) {
    if (!positions.empty() && adjacent && d == positions[0]) pushBlock();
    if (d < static_cast<int64_t>(idx.size()) && idx[d].has_value()) continue;
    out_sizes.push_back(self.size(d));
    src_dim.push_back(d);
  }
  IndexPlan plan;
  plan.out_sizes = out_sizes;
  const int64_t out_numel = numelOf(out_sizes);
  {
    // The operands of torch's index loop, over the result's dims: self with
    // the indexed dims at stride 0, then each index tensor broadcast to the
    // block (stride 0 in the kept dims).
    std::vector<DimVector> operands;
    DimVector self_strides;
    for (int64_t d : src_dim) self_strides.push_back(d >= 0 ? self.stride(d) : 0);
    operands.push_back(self_strides);
    for (int64_t d : positions) {
      ExpandedGeometry g = expandGeometry(*idx[d], bshape);
      DimVector st;
      size_t b = 0;
      for (int64_t sd : src_dim) st.push_back(sd >= 0 ? 0 : g.strides[b++]);
      operands.push_back(st);
    }
    plan.out_strides = layoutStrides(out_sizes, operands);
  }
  if (self.is_meta() || !self.is_cpu()) return plan;

  // Per element of the broadcast block: the offset the indexed dims add.
  const int64_t bnumel = numelOf(bshape);
  std::vector<int64_t> block(static_cast<size_t>(bnumel), 0);
  for (int64_t d : positions) {
    const Tensor& t = *idx[d];
    const int64_t size = self.size(d);
    const int64_t stride = self.stride(d);
    Tensor it = t.is_cpu() ? t : to(t, Device(DeviceType::CPU));
    ExpandedGeometry g = expandGeometry(it, bshape);
    const int64_t* p = it.data_ptr<int64_t>();
    int64_t b = 0;
    forEachOffset(g.sizes, g.strides, g.strides, [&](int64_t o, int64_t) {
      int64_t v = p[o];
      if (v < -size || v >= size) {
        if (select_message) {
          TURNOUT_CHECK(false, ErrorKind::Index, "index out of range in self");
        }
        TURNOUT_CHECK(false, ErrorKind::Index, "index ", v,
                      " is out of bounds for dimension ", d, " with size ",
                      size);
      }
      if (v < 0) v += size;
      block[static_cast<size_t>(b++)] += v * stride;
    });
  }
  if (out_numel == 0) return plan;
  // Walk the result: kept dims move in self's strides, block dims in the
  // block's row-major strides.
  const size_t on = out_sizes.size();
  DimVector self_step(on, 0), block_step(on, 0);
  {
    int64_t bstride = 1;
    for (size_t o = on; o-- > 0;) {
      if (src_dim[o] >= 0) {
        self_step[o] = self.stride(src_dim[o]);
      } else {
        block_step[o] = bstride;
        bstride *= out_sizes[o];
      }
    }
  }
  plan.offsets.reserve(static_cast<size_t>(out_numel));
  forEachOffset(out_sizes, self_step, block_step, [&](int64_t s, int64_t b) {
    plan.offsets.push_back(s + block[static_cast<size_t>(b)]);
  });
  return plan;
}

// Copies the elements at `offsets` of `src` (from its data_ptr) into the
// contiguous `out`, bytewise.
// Copies the elements at `offsets` of `src` (from its data_ptr) into `out`
// (dense, any layout) in row-major order, bytewise.
void gather(const Tensor& src, const std::vector<int64_t>& offsets,
            const Tensor& out) {
  const int64_t es = static_cast<int64_t>(src.itemsize());
  const char* in = static_cast<const char*>(src.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  size_t i = 0;
  forEachOffset(out.sizes(), out.strides(), out.strides(),
                [&](int64_t at, int64_t) {
                  std::memcpy(o + at * es, in + offsets[i++] * es,
                              static_cast<size_t>(es));
                });
}

// A new dense tensor with the plan's sizes and layout.
Tensor emptyForPlan(const IndexPlan& plan, const Tensor& self) {
  Tensor storage = emptyTensor({numelOf(plan.out_sizes)}, self.scalar_type(),
                               self.device());
  return makeView(storage, plan.out_sizes, plan.out_strides, 0);
}

// ---- index.Tensor ------------------------------------------------------------

Tensor index_kernel(const Tensor& self, const OptionalTensorList& indices) {
  checkDefined(self, "index", "self");
  IndexPlan plan = planIndex(self, expandMasks(self, indices, "index"));
  Tensor out = emptyForPlan(plan, self);
  if (self.is_cpu()) gather(self, plan.offsets, out);
  return out;
}

Tensor& index_out_kernel(const Tensor& self, const OptionalTensorList& indices,
                         Tensor& out) {
  Tensor result = index_kernel(self, indices);
  return reduce_internal::copyToOut("index.Tensor_out", result, out);
}

// ---- index_put_ ----------------------------------------------------------------

Tensor& index_put__kernel(Tensor& self, const OptionalTensorList& indices,
                          const Tensor& values, bool accumulate) {
  checkDefined(self, "index_put_", "self");
  checkDefined(values, "index_put_", "values");
  TURNOUT_CHECK(values.scalar_type() == self.scalar_type(),
                ErrorKind::InvalidArgument,
                "Index put requires the source and destination dtypes match, "
                "got ", toString(self.scalar_type()), " for the destination and ",
                toString(values.scalar_type()), " for the source.");
  TURNOUT_CHECK(values.device() == self.device() ||
                    (values.is_cpu() && values.dim() == 0),
                ErrorKind::InvalidArgument,
                "index_put_(): expected values on ", self.device(),
                " (the indexed tensor's device), got values on ",
                values.device());
  checkNoInternalOverlap(self, "index_put_");
  IndexPlan plan = planIndex(self, expandMasks(self, indices, "index_put_"));
  DimVector bcast;
  TURNOUT_CHECK(broadcastInto(values.sizes(), plan.out_sizes, &bcast) &&
                    bcast == plan.out_sizes,
                ErrorKind::InvalidArgument,
                "shape mismatch: value tensor of shape ", dims(values.sizes()),
                " cannot be broadcast to indexing result of shape ",
                dims(plan.out_sizes));
  if (!self.is_cpu() || plan.offsets.empty()) return self;
  // Read the values first: they may share memory with self.
  Tensor v = values.is_cpu() ? values : to(values, Device(DeviceType::CPU));
  ExpandedGeometry g = expandGeometry(v, plan.out_sizes);
  std::vector<int64_t> voff = offsetsOf(g.sizes, g.strides);
  const size_t es = self.itemsize();
  std::vector<char> buffer(voff.size() * es);
  const char* vin = static_cast<const char*>(v.data_ptr());
  for (size_t i = 0; i < voff.size(); ++i) {
    std::memcpy(buffer.data() + i * es, vin + voff[i] * static_cast<int64_t>(es),
                es);
  }
  char* dst = static_cast<char*>(self.data_ptr());
  if (!accumulate) {
    for (size_t i = 0; i < plan.offsets.size(); ++i) {
      std::memcpy(dst + plan.offsets[i] * static_cast<int64_t>(es),
                  buffer.data() + i * es, es);
    }
    return self;
  }
  visitDtype(self.scalar_type(), "index_put_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(buffer.data());
    for (size_t i = 0; i < plan.offsets.size(); ++i) {
      T& slot = d[plan.offsets[i]];
      if constexpr (std::is_same_v<T, bool>) {
        slot = slot || s[i];
      } else {
        using M = OpMathType<T>;
        slot = convertElement<T>(static_cast<M>(convertElement<M>(slot) +
                                                convertElement<M>(s[i])));
      }
    }
  });
  return self;
}

Tensor index_put_composite(const Tensor& self, const OptionalTensorList& indices,
                           const Tensor& values, bool accumulate) {
  checkDefined(self, "index_put", "self");
  Tensor out = clone(self, MemoryFormat::Preserve);
  index_put_(out, indices, values, accumulate);
  return out;
}

// ---- index_select -----------------------------------------------------------------

void checkSelectIndex(const Tensor& self, int64_t dim, const Tensor& index) {
  checkDefined(self, "index_select", "self");
  checkDefined(index, "index_select", "index");
  TURNOUT_CHECK(index.dim() <= 1, ErrorKind::Index,
                "index_select(): Index is supposed to be a vector");
  TURNOUT_CHECK(index.scalar_type() == ScalarType::Long ||
                    index.scalar_type() == ScalarType::Int,
                ErrorKind::InvalidArgument,
                "index_select(): Expected dtype int32 or int64 for index");
  TURNOUT_CHECK(index.device() == self.device() || index.is_cpu(),
                ErrorKind::InvalidArgument,
                "index_select(): expected index on ", self.device(),
                " or cpu, got ", index.device());
  maybeWrapDim(dim, self.dim());
}

Tensor index_select_kernel(const Tensor& self, int64_t dim,
                           const Tensor& index) {
  checkSelectIndex(self, dim, index);
  // A 0-dim self is indexed as if it had one dimension of size 1.
  const bool scalar = self.dim() == 0;
  Tensor s = scalar ? view(self, {1}) : self;
  dim = maybeWrapDim(dim, s.dim());
  Tensor idx = index.dim() == 0 ? view(index, {1}) : index;
  if (idx.scalar_type() != ScalarType::Long) idx = to(idx, ScalarType::Long);
  OptionalTensorList list(static_cast<size_t>(dim), std::nullopt);
  list.emplace_back(idx);
  IndexPlan plan = planIndex(s, list, /*select_message=*/true);
  if (scalar) plan.out_sizes.clear();
  Tensor out = emptyTensor(plan.out_sizes, self.scalar_type(), self.device());
  if (self.is_cpu()) gather(s, plan.offsets, out);
  return out;
}

Tensor& index_select_out_kernel(const Tensor& self, int64_t dim,
                                const Tensor& index, Tensor& out) {
  Tensor result = index_select_kernel(self, dim, index);
  return reduce_internal::copyToOut("index_select.out", result, out);
}

// ---- nonzero ---------------------------------------------------------------------

Tensor nonzero_kernel(const Tensor& self) {
  checkDefined(self, "nonzero", "self");
  const int64_t nd = self.dim();
  std::vector<int64_t> coords;
  int64_t count = 0;
  visitDtype(self.scalar_type(), "nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(self.data_ptr());
    DimVector at(static_cast<size_t>(nd), 0);
    forEachOffset(self.sizes(), self.strides(), self.strides(),
                  [&](int64_t o, int64_t) {
                    if (convertElement<bool>(p[o])) {
                      ++count;
                      coords.insert(coords.end(), at.begin(), at.end());
                    }
                    for (int64_t d = nd - 1; d >= 0; --d) {
                      if (++at[d] < self.size(d)) break;
                      at[d] = 0;
                    }
                  });
  });
  // torch's layout: column-major, so that each column (what where(c) and
  // the mask indices take) is contiguous.
  Tensor base = emptyTensor({nd, count}, ScalarType::Long, self.device());
  int64_t* b = static_cast<int64_t*>(base.data_ptr());
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t j = 0; j < nd; ++j) b[j * count + i] = coords[i * nd + j];
  }
  return makeView(base, {count, nd}, {1, std::max<int64_t>(count, 1)}, 0);
}

Tensor& nonzero_out_kernel(const Tensor& self, Tensor& out) {
  Tensor result = nonzero_kernel(self);
  // Written as [nd, n] and then given torch's column-major strides.
  const int64_t n = result.size(0);
  const int64_t nd = result.size(1);
  Tensor transposed = makeView(result, {nd, n}, {result.stride(1), 1}, 0);
  reduce_internal::copyToOut("nonzero.out", transposed, out);
  out.unsafeGetTensorImpl()->set_sizes_and_strides(
      {n, nd}, {1, std::max<int64_t>(n, 1)});
  return out;
}

// ---- masked_fill ---------------------------------------------------------------------

void checkMask(const Tensor& self, const Tensor& mask, const char* op) {
  checkDefined(self, op, "self");
  checkDefined(mask, op, "mask");
  TURNOUT_CHECK(mask.scalar_type() == ScalarType::Bool,
                ErrorKind::InvalidArgument, op,
                " only supports boolean masks, but got mask with dtype ",
                toString(mask.scalar_type()));
  TURNOUT_CHECK(mask.device() == self.device() || (mask.is_cpu() && mask.dim() == 0),
                ErrorKind::InvalidArgument, op, "(): expected mask on ",
                self.device(), ", got mask on ", mask.device());
}

// Writes the single element of the 0-dim `value` (self's dtype, CPU) into
// self where mask (broadcast to self) is true.
void fillMasked(const Tensor& self, const Tensor& mask, const Tensor& value) {
  ExpandedGeometry g = expandGeometry(mask, self.sizes());
  if (!self.is_cpu()) return;
  const size_t es = self.itemsize();
  char* dst = static_cast<char*>(self.data_ptr());
  const bool* m = static_cast<const bool*>(mask.data_ptr());
  const char* v = static_cast<const char*>(value.data_ptr());
  forEachOffset(self.sizes(), self.strides(), g.strides,
                [&](int64_t o, int64_t mo) {
                  if (m[mo]) std::memcpy(dst + o * static_cast<int64_t>(es), v, es);
                });
}

void checkMaskBroadcastsToSelf(const Tensor& self, const Tensor& mask) {
  DimVector b;
  TURNOUT_CHECK(broadcastInto(self.sizes(), mask.sizes(), &b),
                ErrorKind::InvalidArgument,
                "masked_fill_: the size of the mask ", dims(mask.sizes()),
                " does not broadcast with the size of self ",
                dims(self.sizes()));
  TURNOUT_CHECK(b == DimVector(self.sizes().begin(), self.sizes().end()),
                ErrorKind::InvalidArgument, "output with shape ",
                dims(self.sizes()), " doesn't match the broadcast shape ",
                dims(b));
}

Tensor& masked_fill__scalar(Tensor& self, const Tensor& mask,
                            const Scalar& value) {
  checkMask(self, mask, "masked_fill_");
  checkMaskBroadcastsToSelf(self, mask);
  checkNoInternalOverlap(self, "masked_fill_");
  if (!self.is_cpu()) return self;
  Tensor v = full({}, value, TensorOptions(self.scalar_type()));
  fillMasked(self, mask, v);
  return self;
}

Tensor& masked_fill__tensor(Tensor& self, const Tensor& mask,
                            const Tensor& value) {
  checkMask(self, mask, "masked_fill_");
  checkDefined(value, "masked_fill_", "value");
  TURNOUT_CHECK(value.dim() == 0, ErrorKind::InvalidArgument,
                "masked_fill_ only supports a 0-dimensional value tensor, but "
                "got tensor with ",
                value.dim(), " dimension(s).");
  checkMaskBroadcastsToSelf(self, mask);
  checkNoInternalOverlap(self, "masked_fill_");
  if (!self.is_cpu()) return self;
  Tensor v = to(value.is_cpu() ? value : to(value, Device(DeviceType::CPU)), self.scalar_type());
  fillMasked(self, mask, v);
  return self;
}

// Out of place: self and mask broadcast together.
Tensor maskedFillBase(const Tensor& self, const Tensor& mask, const char* op) {
  checkMask(self, mask, op);
  DimVector b;
  TURNOUT_CHECK(broadcastInto(self.sizes(), mask.sizes(), &b),
                ErrorKind::InvalidArgument, "The size of tensor a (",
                self.dim() ? self.sizes().back() : 1,
                ") must match the size of tensor b (",
                mask.dim() ? mask.sizes().back() : 1,
                ") at non-singleton dimension ", b.size() - 1);
  return clone(expand(self, b), MemoryFormat::Contiguous);
}

Tensor masked_fill_scalar(const Tensor& self, const Tensor& mask,
                          const Scalar& value) {
  Tensor out = maskedFillBase(self, mask, "masked_fill");
  return masked_fill_(out, mask, value);
}

Tensor masked_fill_tensor(const Tensor& self, const Tensor& mask,
                          const Tensor& value) {
  Tensor out = maskedFillBase(self, mask, "masked_fill");
  return masked_fill_(out, mask, value);
}

}  // namespace

// ---- Front end ------------------------------------------------------------------------

Tensor index(const Tensor& self, const OptionalTensorList& indices) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::index", "Tensor")
          .typed<Tensor(const Tensor&, const OptionalTensorList&)>();
  return op.call(self, indices);
}

Tensor& index_put_(Tensor& self, const OptionalTensorList& indices,
                   const Tensor& values, bool accumulate) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::index_put_", "")
          .typed<Tensor&(Tensor&, const OptionalTensorList&, const Tensor&,
                         bool)>();
  return op.call(self, indices, values, accumulate);
}

Tensor index_put(const Tensor& self, const OptionalTensorList& indices,
                 const Tensor& values, bool accumulate) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::index_put", "")
          .typed<Tensor(const Tensor&, const OptionalTensorList&,
                        const Tensor&, bool)>();
  return op.call(self, indices, values, accumulate);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::index_select", "")
          .typed<Tensor(const Tensor&, int64_t, const Tensor&)>();
  return op.call(self, dim, index);
}

Tensor nonzero(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::nonzero", "")
                             .typed<Tensor(const Tensor&)>();
  return op.call(self);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask,
                   const Scalar& value) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::masked_fill", "Scalar")
          .typed<Tensor(const Tensor&, const Tensor&, const Scalar&)>();
  return op.call(self, mask, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask,
                   const Tensor& value) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::masked_fill", "Tensor")
          .typed<Tensor(const Tensor&, const Tensor&, const Tensor&)>();
  return op.call(self, mask, value);
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::masked_fill_", "Scalar")
          .typed<Tensor&(Tensor&, const Tensor&, const Scalar&)>();
  return op.call(self, mask, value);
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  static const auto op =
      Dispatcher::singleton()
          .findSchemaOrThrow("aten::masked_fill_", "Tensor")
          .typed<Tensor&(Tensor&, const Tensor&, const Tensor&)>();
  return op.call(self, mask, value);
}

}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  m.def("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  m.def(
      "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
      "accumulate=False) -> Tensor(a!)");
  m.def(
      "index_put(Tensor self, Tensor?[] indices, Tensor values, bool "
      "accumulate=False) -> Tensor");
  m.def("index_select(Tensor self, int dim, Tensor index) -> Tensor");
  m.def(
      "index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) "
      "out) -> Tensor(a!)");
  m.def(
      "index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> "
      "Tensor(a!)");
  m.def("nonzero(Tensor self) -> Tensor");
  m.def("nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor");
  m.def("masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor");
  m.def(
      "masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> "
      "Tensor(a!)");
  m.def(
      "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> "
      "Tensor(a!)");
}

#define TURNOUT_INDEXING_IMPLS(m)                                            \
  m.impl("index.Tensor", TURNOUT_FN(turnout::index_kernel));                 \
  m.impl("index.Tensor_out", TURNOUT_FN(turnout::index_out_kernel));         \
  m.impl("index_put_", TURNOUT_FN(turnout::index_put__kernel));              \
  m.impl("index_select", TURNOUT_FN(turnout::index_select_kernel));          \
  m.impl("index_select.out", TURNOUT_FN(turnout::index_select_out_kernel));  \
  m.impl("masked_fill_.Scalar", TURNOUT_FN(turnout::masked_fill__scalar));   \
  m.impl("masked_fill_.Tensor", TURNOUT_FN(turnout::masked_fill__tensor));

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  TURNOUT_INDEXING_IMPLS(m)
  m.impl("nonzero", TURNOUT_FN(turnout::nonzero_kernel));
  m.impl("nonzero.out", TURNOUT_FN(turnout::nonzero_out_kernel));
}

TURNOUT_LIBRARY_IMPL(aten, Meta, m) { TURNOUT_INDEXING_IMPLS(m) }

#undef TURNOUT_INDEXING_IMPLS

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  m.impl("index_put", TURNOUT_FN(turnout::index_put_composite));
  m.impl("masked_fill.Scalar", TURNOUT_FN(turnout::masked_fill_scalar));
  m.impl("masked_fill.Tensor", TURNOUT_FN(turnout::masked_fill_tensor));
}

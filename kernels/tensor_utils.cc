#include "kernels/tensor_utils.h"

#include <algorithm>

#include "dispatcher/error.h"

namespace turnout {

DimVector inferBroadcastSize(IntArrayRef a, IntArrayRef b) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    // Aligned from the last dimension.
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TURNOUT_CHECK(da == db || da == 1 || db == 1, ErrorKind::InvalidArgument,
                  "The size of tensor a (", da,
                  ") must match the size of tensor b (", db,
                  ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector contiguousStrides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t stride = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

int64_t numelOf(IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t maybeWrapDim(int64_t dim, int64_t ndim) {
  const int64_t effective = std::max<int64_t>(ndim, 1);
  const int64_t min = -effective;
  const int64_t max = effective - 1;
  TURNOUT_CHECK(dim >= min && dim <= max, ErrorKind::Index,
                "Dimension out of range (expected to be in range of [", min,
                ", ", max, "], but got ", dim, ")");
  return dim < 0 ? dim + effective : dim;
}

Tensor emptyTensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  return detail::makeEmptyTensor(sizes, dtype, device);
}

Tensor makeView(const Tensor& base, IntArrayRef sizes, IntArrayRef strides,
                int64_t storage_offset) {
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      base.storage(), base.scalar_type(), base.device(), base.layout(),
      base.key_set());
  impl->set_sizes_and_strides(sizes, strides);
  impl->set_storage_offset(storage_offset);
  // In-place writes through the view are writes to the base, and the
  // reverse: autograd must see one version for both.
  impl->set_version_counter(base.unsafeGetTensorImpl()->version_counter());
  return Tensor(std::move(impl));
}

}  // namespace turnout

#include "kernels/factory_utils.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "dispatcher/local_dispatch_key_set.h"
#include "kernels/output_layout.h"
#include "kernels/tensor_utils.h"

namespace turnout {

DispatchKeySet backendSelectKeySet(ScalarType dtype, Layout layout,
                                   Device device) {
  const DispatchKey k = computeDispatchKey(dtype, layout, device);
  const LocalDispatchKeySet tls = tls_local_dispatch_key_set();
  return ((DispatchKeySet(k) | tls.included_) - tls.excluded_) &
         DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::BackendSelect);
}

Tensor emptyStridedTensor(IntArrayRef sizes, IntArrayRef strides,
                          ScalarType dtype, Device device, const char* op) {
  TURNOUT_CHECK(sizes.size() == strides.size(), ErrorKind::InvalidArgument, op,
                "(): mismatch in length of strides and shape: sizes [",
                absl::StrJoin(sizes, ", "), "] and strides [",
                absl::StrJoin(strides, ", "), "]");
  for (size_t i = 0; i < sizes.size(); ++i) {
    TURNOUT_CHECK(sizes[i] >= 0, ErrorKind::InvalidArgument, op,
                  "(): Trying to create tensor with negative dimension ",
                  sizes[i], ": [", absl::StrJoin(sizes, ", "), "]");
    TURNOUT_CHECK(strides[i] >= 0, ErrorKind::InvalidArgument, op,
                  "(): negative strides are not supported: [",
                  absl::StrJoin(strides, ", "), "]");
  }
  checkedNumel(sizes, op);
  // Elements from the start to one past the furthest (0 without elements).
  const int64_t storage_numel =
      checkedStorageBytes(sizes, strides, 0, elementSize(dtype), op) /
      static_cast<int64_t>(elementSize(dtype));
  Tensor t = detail::makeEmptyTensor({storage_numel}, dtype, device);
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
  return t;
}

DimVector stridesForMemoryFormat(IntArrayRef sizes, MemoryFormat memory_format,
                                 const char* op) {
  switch (memory_format) {
    case MemoryFormat::Contiguous:
      return contiguousStrides(sizes);
    case MemoryFormat::ChannelsLast: {
      TURNOUT_CHECK(sizes.size() == 4, ErrorKind::InvalidArgument, op,
                    "(): required rank 4 tensor to use channels_last format, "
                    "but got a tensor of rank ",
                    sizes.size());
      // NHWC: C innermost, then W, H, N.
      DimVector strides(4);
      int64_t s = 1;
      for (int d : {1, 3, 2, 0}) {
        strides[d] = s;
        s = saturatingMul(s, std::max<int64_t>(sizes[d], 1));
      }
      return strides;
    }
    case MemoryFormat::Preserve:
      TURNOUT_CHECK(false, ErrorKind::InvalidArgument, op,
                    "(): memory format Preserve needs a tensor to preserve; "
                    "pass Contiguous or ChannelsLast");
      break;
    default:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::NotImplemented, op,
                "(): unsupported memory format ",
                static_cast<int>(memory_format));
  __builtin_unreachable();
}

bool isNonOverlappingAndDense(const Tensor& t) {
  if (t.is_contiguous()) return true;
  const int64_t n = t.dim();
  IntArrayRef sizes = t.sizes();
  IntArrayRef strides = t.strides();
  // Visit dimensions from the smallest stride up; each must start exactly
  // where the ones inside it end. Size-1 dimensions do not matter.
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

DimVector stridesLike(const Tensor& self,
                      std::optional<MemoryFormat> memory_format,
                      const char* op) {
  const MemoryFormat mf = memory_format.value_or(MemoryFormat::Preserve);
  if (mf == MemoryFormat::Preserve) {
    if (isNonOverlappingAndDense(self)) {
      IntArrayRef s = self.strides();
      return DimVector(s.begin(), s.end());
    }
    return denseStridesInOrder(self.sizes(), self.strides());
  }
  return stridesForMemoryFormat(self.sizes(), mf, op);
}

bool isContiguousAs(const Tensor& t, MemoryFormat memory_format) {
  if (memory_format == MemoryFormat::Contiguous) return t.is_contiguous();
  if (memory_format != MemoryFormat::ChannelsLast || t.dim() != 4) return false;
  DimVector want = stridesForMemoryFormat(t.sizes(), memory_format, "");
  for (int64_t d = 0; d < 4; ++d) {
    if (t.size(d) != 1 && t.stride(d) != want[d]) return false;
  }
  return true;
}

}  // namespace turnout

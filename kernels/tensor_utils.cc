#include "kernels/tensor_utils.h"

#include <algorithm>
#include <limits>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"

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
    // Saturates only for shapes with no elements (or whose number of
    // elements overflows, which making the tensor refuses).
    stride = saturatingMul(stride, std::max<int64_t>(sizes[i], 1));
  }
  return strides;
}

int64_t numelOf(IntArrayRef sizes) { return checkedNumel(sizes, "numel"); }

int64_t maybeWrapDim(int64_t dim, int64_t ndim) {
  const int64_t effective = std::max<int64_t>(ndim, 1);
  const int64_t min = -effective;
  const int64_t max = effective - 1;
  TURNOUT_CHECK(dim >= min && dim <= max, ErrorKind::Index,
                "Dimension out of range (expected to be in range of [", min,
                ", ", max, "], but got ", dim, ")");
  return dim < 0 ? dim + effective : dim;
}

namespace {

// The key set of a new strided CPU tensor of each dtype, computed once
// (computeKeySet walks the key tables; every new output would otherwise
// pay for it). Indexed by the ScalarType value; empty for non-dtypes.
struct CpuKeySets {
  DispatchKeySet sets[static_cast<int>(ScalarType::Undefined)];
  CpuKeySets() {
    for (ScalarType t : kAllScalarTypes) {
      try {
        sets[static_cast<int>(t)] = TensorImpl::computeKeySet(
            t, Layout::Strided, Device(DeviceType::CPU));
      } catch (const Error&) {
        // Left empty: makeEmptyTensor reports it.
      }
    }
  }
};

}  // namespace

Tensor emptyTensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  // Fast path for the common case, a CPU tensor with no device index:
  // the same tensor makeEmptyTensor makes, with the key set from a table
  // and the checks folded into one pass. Anything unusual (a bad size or
  // dtype, an overflow) goes the general way, which reports it.
  const int dtype_index = static_cast<int>(dtype);
  if (device.type() == DeviceType::CPU && !device.has_index() &&
      dtype_index >= 0 && dtype_index < static_cast<int>(ScalarType::Undefined)) {
    static const CpuKeySets key_sets;
    const DispatchKeySet key_set = key_sets.sets[dtype_index];
    if (!key_set.empty()) {
      // A multiplication with an overflow flag, not a division per size.
      constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
      uint64_t nbytes = elementSize(dtype);
      bool ok = true;
      for (int64_t s : sizes) {
        ok &= s >= 0 && !__builtin_mul_overflow(
                            nbytes, static_cast<uint64_t>(s), &nbytes) &&
              nbytes <= kMax;
      }
      if (ok) {
        return detail::makeContiguousTensor(sizes, nbytes,
                                            getAllocator(DeviceType::CPU),
                                            dtype, device, key_set);
      }
    }
  }
  return detail::makeEmptyTensor(sizes, dtype, device);
}

Tensor wrappedScalarTensor(const Scalar& s) {
  const ScalarType dtype = s.isBoolean()         ? ScalarType::Bool
                           : s.isIntegral(false) ? ScalarType::Long
                                                 : ScalarType::Double;
  Tensor t = emptyTensor({}, dtype, Device(DeviceType::CPU));
  if (dtype == ScalarType::Bool) {
    *t.data_ptr<bool>() = s.toBool();
  } else if (dtype == ScalarType::Long) {
    *t.data_ptr<int64_t>() = s.toLong();
  } else {
    *t.data_ptr<double>() = s.toDouble();
  }
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
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

const char* typeMetaName(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "unsigned char";
    case ScalarType::Char: return "signed char";
    case ScalarType::Short: return "short int";
    case ScalarType::Int: return "int";
    case ScalarType::Long: return "long int";
    case ScalarType::Half: return "c10::Half";
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Bool: return "bool";
    case ScalarType::BFloat16: return "c10::BFloat16";
    case ScalarType::Undefined: break;
  }
  return "undefined";
}

}  // namespace turnout

#include "dispatcher/core/tensor.h"

#include <limits>
#include <sstream>

#include "absl/strings/str_join.h"
#include "dispatcher/core/allocator.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/size_arithmetic.h"

namespace turnout {

void Tensor::throwUndefined(const char* caller) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, caller,
                "() called on an undefined Tensor");
  __builtin_unreachable();
}

void Tensor::throwDataPtrType(ScalarType requested) const {
  TURNOUT_CHECK(false, ErrorKind::Type, "data_ptr<T>(): T is the C++ type of ",
                turnout::toString(requested), " but the tensor's dtype is ",
                turnout::toString(dtype()),
                "; use data_ptr() or the dtype's C++ type");
  __builtin_unreachable();
}

std::string Tensor::toString() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream out;
  out << "Tensor(sizes=[" << absl::StrJoin(sizes(), ", ")
      << "], dtype=" << dtype() << ", device=" << device();
  if (layout() != Layout::Strided) out << ", layout=" << layout();
  out << ")";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  return out << t.toString();
}

namespace detail {
namespace {

void checkSizes(IntArrayRef sizes, const char* caller) {
  for (int64_t s : sizes) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument, caller,
                  "(): sizes must be non-negative, got [",
                  absl::StrJoin(sizes, ", "), "]");
  }
}

void checkDtype(ScalarType dtype, const char* caller) {
  TURNOUT_CHECK(isValidScalarType(static_cast<int64_t>(dtype)) &&
                    dtype != ScalarType::Undefined,
                ErrorKind::InvalidArgument, caller, "(): dtype ",
                turnout::toString(dtype), " (", static_cast<int>(dtype),
                ") is not a tensor dtype");
}

}  // namespace

Tensor makeEmptyTensor(IntArrayRef sizes, ScalarType dtype, Device device,
                       Layout layout) {
  checkSizes(sizes, "makeEmptyTensor");
  checkDtype(dtype, "makeEmptyTensor");
  // Fails early, naming the layout and device, before any allocation.
  computeDispatchKey(dtype, layout, device);

  Storage storage;
  Device tensor_device = device;
  if (layout == Layout::Strided) {
    // Named "empty": every new tensor of a kernel or factory comes here.
    const int64_t numel = checkedNumel(sizes, "empty");
    int64_t nbytes = 0;
    TURNOUT_CHECK(!__builtin_mul_overflow(
                      numel, static_cast<int64_t>(elementSize(dtype)), &nbytes),
                  ErrorKind::InvalidArgument, "empty(): ", numel,
                  " elements of sizes [", absl::StrJoin(sizes, ", "), "] of ",
                  turnout::toString(dtype), " need more than int64 bytes");
    Allocator* allocator = getAllocator(device.type());
    storage = Storage::allocate(static_cast<size_t>(nbytes), allocator,
                                /*resizable=*/true);
    const Device got = storage.device();
    // An allocator that records no index (Meta's) takes the requested one.
    TURNOUT_CHECK(
        got.type() == device.type() &&
            (!device.has_index() || !got.has_index() || got == device),
        ErrorKind::InvalidArgument, "makeEmptyTensor(): the ",
        toString(device.type()), " allocator returned memory on ", got,
        " for a tensor requested on ", device);
    tensor_device = got.has_index() ? got : device;
  }
  return Tensor(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), dtype, tensor_device, layout,
      TensorImpl::computeKeySet(dtype, layout, tensor_device), sizes));
}

Tensor makeTensorWithKeySet(DispatchKeySet key_set, IntArrayRef sizes,
                            ScalarType dtype, Device device) {
  checkSizes(sizes, "makeTensorWithKeySet");
  checkDtype(dtype, "makeTensorWithKeySet");
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      Storage(), dtype, device, Layout::Strided, key_set);
  impl->set_sizes_contiguous(sizes);
  return Tensor(std::move(impl));
}

}  // namespace detail
}  // namespace turnout

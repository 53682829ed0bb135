#include "kernels/mem_overlap.h"

#include "dispatcher/core/error.h"
#include "kernels/factory_utils.h"

namespace turnout {
namespace mem_overlap_internal {

void throwInternalOverlap(std::string_view op) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, op,
                "(): unsupported operation: more than one element of the "
                "written-to tensor refers to a single memory location. "
                "Please clone() the tensor before performing the operation.");
  __builtin_unreachable();
}

MemOverlap sharedStorageOverlap(const Tensor& written, const Tensor& read) {
  if (written.numel() == 0 || read.numel() == 0) return MemOverlap::None;
  if (!isNonOverlappingAndDense(written) || !isNonOverlappingAndDense(read)) {
    return MemOverlap::TooHard;
  }
  // Byte ranges from the storage's start (one storage: offsets compare as
  // addresses would, and Meta tensors, which have none, work too). Dense:
  // numel elements from the first.
  const int64_t w_begin =
      written.storage_offset() * static_cast<int64_t>(written.itemsize());
  const int64_t w_end =
      w_begin + written.numel() * static_cast<int64_t>(written.itemsize());
  const int64_t r_begin =
      read.storage_offset() * static_cast<int64_t>(read.itemsize());
  const int64_t r_end =
      r_begin + read.numel() * static_cast<int64_t>(read.itemsize());
  if (w_begin == r_begin && w_end == r_end) {
    return written.strides() == read.strides() ? MemOverlap::Full
                                               : MemOverlap::Partial;
  }
  if (w_begin < r_end && r_begin < w_end) return MemOverlap::Partial;
  return MemOverlap::None;
}

}  // namespace mem_overlap_internal

void checkNoPartialOverlap(const Tensor& written, const Tensor& read,
                           std::string_view op) {
  TURNOUT_CHECK(memOverlap(written, read) != MemOverlap::Partial,
                ErrorKind::InvalidArgument, op,
                "(): unsupported operation: some elements of the input tensor "
                "and the written-to tensor refer to a single memory location. "
                "Please clone() the tensor before performing the operation.");
}

}  // namespace turnout

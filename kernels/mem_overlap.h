// Memory overlap between the tensor a kernel writes and the tensors it
// reads, with PyTorch's rules and messages: the one check of the in-place
// and out= kernels (elementwise operators, copy_).
//
//   checkNoInternalOverlap(out, "add_");   // ones(1).expand(3).add_(1)
//   switch (memOverlap(out, input)) {      // z[1:].add_(z[:-1]): Partial
//     case MemOverlap::Partial: ...        // what checkNoPartialOverlap throws
//     case MemOverlap::TooHard: ...        // maybe: read a copy of input
//     default: ...                          // None or Full: run in place
//   }
//
// Thread safety: pure functions. Cost when the operands do not share memory
// (the common case): a few compares, no allocation.
#ifndef TURNOUT_KERNELS_MEM_OVERLAP_H_
#define TURNOUT_KERNELS_MEM_OVERLAP_H_

#include <string_view>

#include "dispatcher/core/tensor.h"

namespace turnout {

/// How the elements of a written tensor and of a read tensor share memory.
enum class MemOverlap {
  /// No element of one is an element of the other.
  None,
  /// The same elements in the same order: the same memory, sizes and
  /// strides (an in-place operator's self as input). Safe elementwise.
  Full,
  /// Both are dense and non-overlapping, and their memory ranges overlap
  /// without being the same: some element is read after it was written.
  Partial,
  /// They share a storage and one of them has gaps or self-overlap, so
  /// whether elements coincide is not computed (as PyTorch: not an error).
  TooHard,
};

/// PyTorch's overlap status of `written` and `read` (get_overlap_status):
/// Full for the same tensor or the same memory with the same strides, None
/// when either has no elements or their storages differ, TooHard when
/// either is not non-overlapping and dense, else Partial or None by their
/// byte ranges. Works for Meta tensors (by storage offsets).
MemOverlap memOverlap(const Tensor& written, const Tensor& read);

/// Throws Error(InvalidArgument) "op(): unsupported operation: more than one
/// element of the written-to tensor refers to a single memory location..."
/// when `written` has a dimension of size > 1 with stride 0 (an expanded
/// tensor), as PyTorch does; other self-overlap is not detected (TooHard).
void checkNoInternalOverlap(const Tensor& written, std::string_view op);

/// Throws Error(InvalidArgument) "op(): unsupported operation: some elements
/// of the input tensor and the written-to tensor refer to a single memory
/// location..." when memOverlap(written, read) is Partial.
void checkNoPartialOverlap(const Tensor& written, const Tensor& read,
                           std::string_view op);

// Implementation details.

namespace mem_overlap_internal {
[[noreturn]] void throwInternalOverlap(std::string_view op);
MemOverlap sharedStorageOverlap(const Tensor& written, const Tensor& read);
}  // namespace mem_overlap_internal

inline MemOverlap memOverlap(const Tensor& written, const Tensor& read) {
  if (written.is_same(read)) return MemOverlap::Full;
  // The common case ends here: one pointer compare.
  if (!written.has_storage() || !read.has_storage() ||
      !written.storage().is_alias_of(read.storage())) {
    return MemOverlap::None;
  }
  return mem_overlap_internal::sharedStorageOverlap(written, read);
}

inline void checkNoInternalOverlap(const Tensor& written, std::string_view op) {
  if (written.is_contiguous()) return;
  const IntArrayRef sizes = written.sizes();
  const IntArrayRef strides = written.strides();
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] == 0 && sizes[d] > 1) {
      mem_overlap_internal::throwInternalOverlap(op);
    }
  }
}

}  // namespace turnout

#endif  // TURNOUT_KERNELS_MEM_OVERLAP_H_

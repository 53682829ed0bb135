// Overflow-checked size arithmetic: the number of elements of a shape, the
// bytes of storage a strided tensor reaches, and contiguous strides, for
// every place that forms sizes (TensorImpl, the factories, views, expand).
//
//   int64_t n = checkedNumel({2, 3}, "empty");               // 6
//   checkedNumel({1LL << 31, 1LL << 31, 1LL << 31}, "empty");
//   // Error(InvalidArgument): "empty(): the number of elements of sizes
//   // [2147483648, 2147483648, 2147483648] overflows int64 ..."
//   int64_t b = checkedStorageBytes({2, 3}, {3, 1}, 0, 4, "view");  // 24
//
// The rules are PyTorch's (so the same calls fail): the product of sizes is
// formed left to right in 64-bit unsigned arithmetic, and an overflow of any
// partial product counts even when a later size is 0 ([2^62, 2^62, 0] fails,
// [0, 2^62, 2^62] does not); the result must fit int64. Storage: a shape
// with a size 0 needs no bytes; otherwise (offset + 1 + sum of (size - 1) *
// stride) * itemsize must fit int64.
//
// Thread safety: pure functions.
#ifndef TURNOUT_DISPATCHER_CORE_SIZE_ARITHMETIC_H_
#define TURNOUT_DISPATCHER_CORE_SIZE_ARITHMETIC_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "absl/types/span.h"

namespace turnout {

/// The product of non-negative `sizes` (1 for none); false when it
/// overflows (see the file comment), *numel then unspecified.
inline bool tryNumel(absl::Span<const int64_t> sizes, int64_t* numel);

/// The product of non-negative `sizes`. Throws Error(InvalidArgument)
/// "op(): the number of elements of sizes [...] overflows int64".
int64_t checkedNumel(absl::Span<const int64_t> sizes, std::string_view op);

/// Bytes from the storage's start to the end of the last element of a
/// tensor of non-negative `sizes` and `strides` (same length) at
/// `storage_offset` elements, `itemsize` bytes each: 0 when a size is 0.
/// False when it overflows int64.
bool tryStorageBytes(absl::Span<const int64_t> sizes,
                     absl::Span<const int64_t> strides, int64_t storage_offset,
                     size_t itemsize, int64_t* bytes);

/// As tryStorageBytes; throws Error(InvalidArgument) "op(): the storage
/// for sizes [...], strides [...] ... overflows int64 bytes".
int64_t checkedStorageBytes(absl::Span<const int64_t> sizes,
                            absl::Span<const int64_t> strides,
                            int64_t storage_offset, size_t itemsize,
                            std::string_view op);

/// a * b for non-negative a and b, saturated at INT64_MAX: for strides of
/// shapes that may hold no element (a stride past any element is never
/// used, but must stay a valid non-negative number).
inline int64_t saturatingMul(int64_t a, int64_t b);

// Implementation details.

inline bool tryNumel(absl::Span<const int64_t> sizes, int64_t* numel) {
  uint64_t product = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    overflow |= __builtin_mul_overflow(product, static_cast<uint64_t>(s),
                                       &product);
  }
  *numel = static_cast<int64_t>(product);
  return !overflow &&
         product <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max()
                                          : r;
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_SIZE_ARITHMETIC_H_

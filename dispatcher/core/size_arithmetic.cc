#include "dispatcher/core/size_arithmetic.h"

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"

namespace turnout {

int64_t checkedNumel(absl::Span<const int64_t> sizes, std::string_view op) {
  int64_t numel = 0;
  TURNOUT_CHECK(tryNumel(sizes, &numel), ErrorKind::InvalidArgument, op,
                "(): the number of elements of sizes [",
                absl::StrJoin(sizes, ", "),
                "] overflows int64 (the product of the sizes must be at most ",
                std::numeric_limits<int64_t>::max(), ")");
  return numel;
}

bool tryStorageBytes(absl::Span<const int64_t> sizes,
                     absl::Span<const int64_t> strides, int64_t storage_offset,
                     size_t itemsize, int64_t* bytes) {
  *bytes = 0;
  for (int64_t s : sizes) {
    if (s == 0) return true;
  }
  // One past the furthest element, in elements from the storage's start.
  int64_t end = 0;
  bool overflow = __builtin_add_overflow(storage_offset, int64_t{1}, &end);
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
    overflow |= __builtin_add_overflow(end, span, &end);
  }
  overflow |= __builtin_mul_overflow(end, static_cast<int64_t>(itemsize), bytes);
  return !overflow;
}

int64_t checkedStorageBytes(absl::Span<const int64_t> sizes,
                            absl::Span<const int64_t> strides,
                            int64_t storage_offset, size_t itemsize,
                            std::string_view op) {
  int64_t bytes = 0;
  TURNOUT_CHECK(
      tryStorageBytes(sizes, strides, storage_offset, itemsize, &bytes),
      ErrorKind::InvalidArgument, op, "(): the storage for sizes [",
      absl::StrJoin(sizes, ", "), "], strides [", absl::StrJoin(strides, ", "),
      "] and storage offset ", storage_offset, " with ", itemsize,
      "-byte elements overflows int64 bytes");
  return bytes;
}

}  // namespace turnout

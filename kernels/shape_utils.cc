#include "kernels/shape_utils.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "kernels/tensor_utils.h"

namespace turnout {

DimVector inferSize(IntArrayRef shape, int64_t numel) {
  DimVector result(shape.begin(), shape.end());
  int64_t known = 1;
  bool overflow = false;  // of `known`: no numel matches such a shape
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TURNOUT_CHECK(!infer.has_value(), ErrorKind::InvalidArgument,
                    "only one dimension can be inferred");
      infer = i;
    } else {
      TURNOUT_CHECK(shape[i] >= 0, ErrorKind::InvalidArgument,
                    "invalid shape dimension ", shape[i]);
      overflow |= __builtin_mul_overflow(known, shape[i], &known);
    }
  }
  TURNOUT_CHECK(!overflow, ErrorKind::InvalidArgument, "shape '[",
                absl::StrJoin(shape, ", "), "]' is invalid for input of size ",
                numel, " (the product of its sizes overflows int64)");
  if (infer.has_value()) {
    TURNOUT_CHECK(known != 0, ErrorKind::InvalidArgument,
                  "cannot reshape tensor of 0 elements into shape [",
                  absl::StrJoin(shape, ", "),
                  "] because the unspecified dimension size -1 can be any "
                  "value and is ambiguous");
    TURNOUT_CHECK(numel % known == 0, ErrorKind::InvalidArgument, "shape '[",
                  absl::StrJoin(shape, ", "),
                  "]' is invalid for input of size ", numel);
    result[*infer] = numel / known;
  } else {
    TURNOUT_CHECK(known == numel, ErrorKind::InvalidArgument, "shape '[",
                  absl::StrJoin(shape, ", "),
                  "]' is invalid for input of size ", numel);
  }
  return result;
}

std::optional<DimVector> computeViewStrides(IntArrayRef old_sizes,
                                            IntArrayRef old_strides,
                                            IntArrayRef new_sizes) {
  const size_t n_new = new_sizes.size();
  if (numelOf(old_sizes) == 0) {
    if (old_sizes == new_sizes) {
      return DimVector(old_strides.begin(), old_strides.end());
    }
    return contiguousStrides(new_sizes);
  }
  // The old layout as runs ("chunks") of dimensions that are contiguous with
  // each other: each is numel elements at a fixed innermost stride. Size-1
  // dimensions address nothing and are skipped.
  struct Chunk {
    int64_t numel;
    int64_t stride;  // of its innermost dimension
  };
  absl::InlinedVector<Chunk, 5> chunks;
  int64_t prev = -1;
  for (size_t d = 0; d < old_sizes.size(); ++d) {
    if (old_sizes[d] == 1) continue;
    if (prev >= 0 && old_strides[prev] == old_sizes[d] * old_strides[d]) {
      chunks.back().numel *= old_sizes[d];
      chunks.back().stride = old_strides[d];
    } else {
      chunks.push_back({old_sizes[d], old_strides[d]});
    }
    prev = static_cast<int64_t>(d);
  }
  // Each chunk takes the next new dimensions whose product is its numel;
  // within it, the new dimensions are laid out contiguously.
  DimVector new_strides(n_new, 1);
  size_t next = 0;
  for (const Chunk& chunk : chunks) {
    const size_t first = next;
    int64_t product = 1;
    while (product < chunk.numel) {
      if (next == n_new) return std::nullopt;
      product *= new_sizes[next++];
    }
    if (product != chunk.numel) return std::nullopt;
    int64_t stride = chunk.stride;
    for (size_t i = next; i-- > first;) {
      new_strides[i] = stride;
      stride *= new_sizes[i];
    }
  }
  // What is left can only be size-1 dimensions (numel already matched).
  for (size_t i = next; i < n_new; ++i) {
    if (new_sizes[i] != 1) return std::nullopt;
  }
  return new_strides;
}

std::string tensorTypeString(const Tensor& t) {
  return absl::StrCat("torch.", toString(t.scalar_type()), "Tensor{[",
                      absl::StrJoin(t.sizes(), ", "), "]}");
}

ExpandedGeometry expandGeometry(const Tensor& self, IntArrayRef target) {
  const int64_t ndim = self.dim();
  const int64_t n = static_cast<int64_t>(target.size());
  TURNOUT_CHECK(n >= ndim, ErrorKind::InvalidArgument, "expand(",
                tensorTypeString(self), ", size=[", absl::StrJoin(target, ", "),
                "]): the number of sizes provided (", n,
                ") must be greater or equal to the number of dimensions in "
                "the tensor (",
                ndim, ")");
  IntArrayRef sizes = self.sizes();
  IntArrayRef strides = self.strides();
  ExpandedGeometry g{DimVector(n), DimVector(n), 0};
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t offset = ndim - n + i;  // the matching dim of self, if >= 0
    const int64_t size = offset >= 0 ? sizes[offset] : 1;
    const int64_t stride =
        offset >= 0 ? strides[offset]
        : i + 1 < n ? saturatingMul(g.sizes[i + 1], g.strides[i + 1])
                    : 1;
    int64_t want = target[i];
    if (want == -1) {
      TURNOUT_CHECK(offset >= 0, ErrorKind::InvalidArgument,
                    "The expanded size of the tensor (-1) isn't allowed in a "
                    "leading, non-existing dimension ",
                    i);
      want = size;
    }
    TURNOUT_CHECK(want >= 0, ErrorKind::InvalidArgument, "expand(",
                  tensorTypeString(self), ", size=[",
                  absl::StrJoin(target, ", "),
                  "]): the expanded size of the tensor (", want,
                  ") must be non-negative");
    if (size == want) {
      g.sizes[i] = size;
      g.strides[i] = stride;
    } else {
      TURNOUT_CHECK(size == 1, ErrorKind::InvalidArgument,
                    "The expanded size of the tensor (", want,
                    ") must match the existing size (", size,
                    ") at non-singleton dimension ", i, ".  Target sizes: [",
                    absl::StrJoin(target, ", "), "].  Tensor sizes: [",
                    absl::StrJoin(sizes, ", "), "]");
      g.sizes[i] = want;
      g.strides[i] = 0;
    }
  }
  // A new leading dimension's stride is never read; c10 writes 0 when the
  // dimension is expanded and a harmless dense value when it has size 1.
  for (int64_t i = 0; i < n - ndim; ++i) {
    if (g.sizes[i] != 1) g.strides[i] = 0;
  }
  TURNOUT_CHECK(tryNumel(g.sizes, &g.numel), ErrorKind::InvalidArgument,
                "expand(", tensorTypeString(self), ", size=[",
                absl::StrJoin(target, ", "),
                "]): the number of elements of the expanded sizes [",
                absl::StrJoin(g.sizes, ", "), "] overflows int64");
  return g;
}

}  // namespace turnout

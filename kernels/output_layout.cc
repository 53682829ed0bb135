#include "kernels/output_layout.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/size_arithmetic.h"
#include "kernels/factory_utils.h"

namespace turnout {
namespace {

// Per input, its stride in each output dimension (0: lacked or broadcast).
using InputStrides = absl::InlinedVector<DimVector, 4>;

// How two dimensions compare: Keep (the first stays faster), Swap (the
// second is faster), or Undecided.
enum class Order { Keep, Swap, Undecided };

// Orders the dimensions of `sizes` from fastest to slowest (the rule's
// step 2): perm[0] is the fastest. The inputs are asked in order; the
// first whose strides tell the pair apart decides.
DimVector orderDimensions(IntArrayRef sizes, const InputStrides& inputs) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  DimVector perm(ndim);
  for (int64_t i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
  // `faster` sits before `slower` in perm; should they trade places?
  auto compare = [&](int64_t faster, int64_t slower) {
    for (const DimVector& s : inputs) {
      const int64_t a = s[faster];
      const int64_t b = s[slower];
      if (a == 0 || b == 0) continue;  // broadcast: this input abstains
      if (a < b) return Order::Keep;
      if (a > b) return Order::Swap;
      // Equal strides (size-1 or size-0 dimensions): the smaller size goes
      // faster, but only a larger size in front is a decision.
      if (sizes[faster] > sizes[slower]) return Order::Swap;
    }
    return Order::Undecided;
  };
  // Insertion from the fast end. An undecided pair stops nothing: the
  // dimension being placed is compared with the ones in front of that pair
  // too, and trades places with the first that should be slower (which
  // need not be its neighbour), as torch's sort does.
  for (int64_t i = 1; i < ndim; ++i) {
    int64_t at = i;  // where the dimension being placed is now
    for (int64_t j = i - 1; j >= 0; --j) {
      const Order order = compare(perm[j], perm[at]);
      if (order == Order::Swap) {
        std::swap(perm[j], perm[at]);
        at = j;
      } else if (order == Order::Keep) {
        break;
      }
    }
  }
  return perm;
}

bool isNaturalOrder(const DimVector& perm) {
  const int64_t ndim = static_cast<int64_t>(perm.size());
  for (int64_t i = 0; i < ndim; ++i) {
    if (perm[i] != ndim - 1 - i) return false;
  }
  return true;
}

// Step 1: when every input has `sizes` and they agree on a layout, that
// layout; else nothing.
bool sameShapeLayout(IntArrayRef sizes, absl::Span<const Tensor* const> inputs,
                     DimVector* strides) {
  for (const Tensor* t : inputs) {
    if (t == nullptr || !detail::sameSizesAs(t->sizes(), sizes)) return false;
  }
  bool contiguous = true;
  bool channels_last = sizes.size() == 4;
  bool dense_alike = true;
  for (const Tensor* t : inputs) {
    contiguous = contiguous && t->is_contiguous();
    channels_last =
        channels_last && isContiguousAs(*t, MemoryFormat::ChannelsLast);
    dense_alike = dense_alike && isNonOverlappingAndDense(*t) &&
                  detail::sameSizesAs(t->strides(), inputs[0]->strides());
  }
  if (contiguous) {
    *strides = contiguousStrides(sizes);
  } else if (channels_last) {
    *strides = stridesForMemoryFormat(sizes, MemoryFormat::ChannelsLast,
                                      "elementwise output");
  } else if (dense_alike) {
    IntArrayRef s = inputs[0]->strides();
    strides->assign(s.begin(), s.end());
  } else {
    return false;
  }
  return true;
}

}  // namespace

DimVector elementwiseOutputStrides(IntArrayRef sizes,
                                   absl::Span<const Tensor* const> inputs) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  DimVector strides;
  if (!inputs.empty() && sameShapeLayout(sizes, inputs, &strides)) {
    return strides;
  }
  InputStrides input_strides;
  for (const Tensor* t : inputs) {
    if (t == nullptr) continue;  // a Scalar: stride 0 everywhere
    const IntArrayRef in_sizes = t->sizes();
    const IntArrayRef in_strides = t->strides();
    const int64_t lead = ndim - static_cast<int64_t>(in_sizes.size());
    TURNOUT_INTERNAL_ASSERT(lead >= 0, "elementwiseOutputStrides: an input ",
                            "has more dimensions than the output");
    DimVector s(ndim, 0);
    for (int64_t d = lead; d < ndim; ++d) {
      const int64_t size = in_sizes[d - lead];
      TURNOUT_INTERNAL_ASSERT(size == sizes[d] || size == 1,
                              "elementwiseOutputStrides: an input does not "
                              "broadcast to the output");
      s[d] = size == sizes[d] ? in_strides[d - lead] : 0;
    }
    input_strides.push_back(std::move(s));
  }
  const DimVector perm = orderDimensions(sizes, input_strides);
  if (isNaturalOrder(perm)) return contiguousStrides(sizes);
  strides.assign(ndim, 0);
  int64_t next = 1;
  for (const int64_t d : perm) {
    strides[d] = next;
    next = saturatingMul(next, sizes[d]);
  }
  return strides;
}

DimVector denseStridesInOrder(IntArrayRef sizes, IntArrayRef strides) {
  TURNOUT_INTERNAL_ASSERT(sizes.size() == strides.size(),
                          "denseStridesInOrder: ", sizes.size(), " sizes but ",
                          strides.size(), " strides");
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  InputStrides one;
  one.emplace_back(strides.begin(), strides.end());
  const DimVector perm = orderDimensions(sizes, one);
  DimVector out(ndim, 0);
  int64_t next = 1;
  for (const int64_t d : perm) {
    out[d] = next;
    if (sizes[d] > 1) next = saturatingMul(next, sizes[d]);
  }
  return out;
}

namespace detail {

Tensor emptyElementwiseOutputSlow(IntArrayRef sizes, ScalarType dtype,
                                  Device device,
                                  absl::Span<const Tensor* const> inputs) {
  const DimVector strides = elementwiseOutputStrides(sizes, inputs);
  return emptyStridedTensor(sizes, strides, dtype, device,
                            "elementwise output");
}

}  // namespace detail
}  // namespace turnout

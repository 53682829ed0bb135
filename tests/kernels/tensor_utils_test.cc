#include "kernels/tensor_utils.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(TensorUtils, BroadcastSizes) {
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<Case> cases = {
      {{3, 1}, {1, 4}, {3, 4}},
      {{}, {2, 3}, {2, 3}},
      {{5, 1, 3}, {4, 1}, {5, 4, 3}},
      {{0}, {1}, {0}},
  };
  for (const Case& c : cases) {
    DimVector out = inferBroadcastSize(c.a, c.b);
    EXPECT_EQ(std::vector<int64_t>(out.begin(), out.end()), c.out);
  }
}

TEST(TensorUtils, BroadcastErrorReadsLikePyTorch) {
  try {
    inferBroadcastSize({2, 3}, {2, 4});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "The size of tensor a (3) must match the size of tensor b (4) "
              "at non-singleton dimension 1");
  }
}

TEST(TensorUtils, WrapDim) {
  EXPECT_EQ(maybeWrapDim(-1, 3), 2);
  EXPECT_EQ(maybeWrapDim(0, 0), 0);
  EXPECT_EQ(maybeWrapDim(-1, 0), 0);
  try {
    maybeWrapDim(2, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_EQ(e.message(),
              "Dimension out of range (expected to be in range of [-2, 1], but "
              "got 2)");
  }
}

TEST(TensorUtils, StridesAndViews) {
  DimVector s = contiguousStrides({2, 3, 4});
  EXPECT_EQ(std::vector<int64_t>(s.begin(), s.end()),
            (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(numelOf({2, 3, 4}), 24);
  Tensor base = emptyTensor({2, 3}, ScalarType::Float, Device("cpu"));
  for (int i = 0; i < 6; ++i) base.data_ptr<float>()[i] = static_cast<float>(i);
  Tensor t = makeView(base, {3, 2}, {1, 3}, 0);  // the transpose
  EXPECT_EQ(static_cast<const float*>(t.data_ptr())[0], 0.0f);
  base.data_ptr<float>()[1] = 42.0f;
  // Element (1, 0) of the transpose is element (0, 1) of the base.
  const float* data = static_cast<const float*>(t.data_ptr());
  EXPECT_EQ(data[t.strides()[0]], 42.0f);
  EXPECT_THROW(makeView(base, {7}, {1}, 0), Error);
  // The view and its base count in-place writes together.
  t.unsafeGetTensorImpl()->bump_version();
  EXPECT_EQ(base.unsafeGetTensorImpl()->version(), 1u);
}

}  // namespace
}  // namespace turnout

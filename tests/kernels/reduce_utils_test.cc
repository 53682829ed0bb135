#include "kernels/reduce_utils.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/library.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/error_of.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace {

using testing::errorOf;
using ::testing::HasSubstr;
using testing::metaTensor;
using testing::sizesOf;
using testing::tensorOf;
using testing::valuesOf;

// Host memory standing in for a device's: a PrivateUse1 storage that only
// the PrivateUse1 copy_ kernel below may copy. resizeOutput must not
// memcpy a device's memory (a CUDA out tensor's lives on the GPU).
class StandInAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    void* p = nbytes == 0 ? nullptr : std::malloc(nbytes);
    return DataPtr(p, p, &std::free, Device(DeviceType::PrivateUse1, 0));
  }
};

// Installs the stand-in allocator for PrivateUse1 for one test.
class StandInDevice {
 public:
  StandInDevice()
      : previous_(setAllocator(DeviceType::PrivateUse1, &allocator_)) {}
  ~StandInDevice() { setAllocator(DeviceType::PrivateUse1, previous_); }

 private:
  StandInAllocator allocator_;
  Allocator* previous_;
};

int g_copy_calls = 0;
Tensor& standInCopy(Tensor& self, const Tensor& src, bool) {
  ++g_copy_calls;
  EXPECT_EQ(self.device().type(), DeviceType::PrivateUse1);
  EXPECT_EQ(src.device().type(), DeviceType::PrivateUse1);
  EXPECT_EQ(sizesOf(self), sizesOf(src));
  std::memcpy(self.data_ptr<uint8_t>(), src.data_ptr<uint8_t>(),
              static_cast<size_t>(self.numel()));
  return self;
}

Tensor standInFloats(const std::vector<float>& values) {
  Tensor t = detail::makeEmptyTensor({static_cast<int64_t>(values.size())},
                                     ScalarType::Float,
                                     Device(DeviceType::PrivateUse1));
  std::memcpy(t.data_ptr<float>(), values.data(), values.size() * 4);
  return t;
}

std::vector<float> floatsOf(const Tensor& t, int64_t n) {
  const float* p = t.data_ptr<float>();
  return std::vector<float>(p, p + n);
}

TEST(ResizeOutput, GrowingCopiesThroughTheDevicesCopyKernel) {
  StandInDevice device;
  Library lib(Library::IMPL, "aten", DispatchKey::PrivateUse1, __FILE__,
              __LINE__);
  lib.impl("copy_", TURNOUT_FN(standInCopy));
  Tensor out = standInFloats({1, 2, 3});
  const void* before = out.storage().data();
  g_copy_calls = 0;
  reduce_internal::resizeOutput(out, {2, 4}, "test_op.out");
  EXPECT_EQ(g_copy_calls, 1);  // not a host memcpy
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out.storage().nbytes(), 8u * 4);
  EXPECT_NE(out.storage().data(), before);
  EXPECT_EQ(floatsOf(out, 3), (std::vector<float>{1, 2, 3}));
  // Shrinking, or keeping the size, allocates and copies nothing.
  reduce_internal::resizeOutput(out, {5}, "test_op.out");
  reduce_internal::resizeOutput(out, {5}, "test_op.out");
  EXPECT_EQ(g_copy_calls, 1);
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{5}));
}

TEST(ResizeOutput, ACopyThatFailsLeavesTheOutTensorAsItWas) {
  // No copy_ kernel for PrivateUse1: the copy fails in the dispatcher,
  // naming the operator and the key, and `out` keeps its sizes and data.
  StandInDevice device;
  Tensor out = standInFloats({4, 5});
  const void* before = out.storage().data();
  EXPECT_THAT(
      errorOf([&] { reduce_internal::resizeOutput(out, {6}, "test_op.out"); }),
      ::testing::AllOf(HasSubstr("copy_"), HasSubstr("PrivateUse1")));
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{2}));
  EXPECT_EQ(out.storage().nbytes(), 2u * 4);
  EXPECT_EQ(out.storage().data(), before);
  EXPECT_EQ(floatsOf(out, 2), (std::vector<float>{4, 5}));
}

TEST(ResizeOutput, GrowingACpuTensorKeepsItsValues) {
  // As resize_: the old bytes stay at the start of the grown storage.
  Tensor out = tensorOf({1, 2, 3, 4}, {2, 2});
  reduce_internal::resizeOutput(out, {3, 3}, "test_op.out");
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(floatsOf(out, 4), (std::vector<float>{1, 2, 3, 4}));
}

TEST(ResizeOutput, GrowingASmallTensorMovesItsDataToTheAllocator) {
  // 8 bytes: the data lives in the tensor's own block (makeContiguousTensor)
  // until the storage grows; then it is the CPU allocator's, and a view
  // sharing the storage sees the move.
  Tensor out = emptyTensor({2}, ScalarType::Float, testing::cpu());
  out.data_ptr<float>()[0] = 1.0f;
  out.data_ptr<float>()[1] = 2.0f;
  const Storage storage = out.storage();
  const void* before = out.data_ptr();
  EXPECT_EQ(storage.unsafeGetStorageImpl()->data_ptr().get_deleter(), nullptr);
  reduce_internal::resizeOutput(out, {40}, "test_op.out");
  EXPECT_TRUE(out.storage().is_alias_of(storage));
  EXPECT_NE(out.data_ptr(), before);
  EXPECT_EQ(storage.nbytes(), 160u);
  EXPECT_NE(storage.unsafeGetStorageImpl()->data_ptr().get_deleter(), nullptr);
  EXPECT_EQ(floatsOf(out, 2), (std::vector<float>{1, 2}));
  out.data_ptr<float>()[39] = 39.0f;  // asan: the grown memory is all there
}

TEST(ResizeOutput, GrowingAMetaTensorCopiesNothing) {
  Tensor out = metaTensor({2});
  reduce_internal::resizeOutput(out, {4, 4}, "test_op.out");
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{4, 4}));
}

TEST(ResizeOutput, AStorageThatCannotGrowIsAnError) {
  float data[2] = {7, 8};
  Storage storage(make_intrusive<StorageImpl>(
      sizeof(data), DataPtr(data, Device(DeviceType::CPU)),
      /*allocator=*/nullptr, /*resizable=*/false));
  Tensor out(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), ScalarType::Float, Device(DeviceType::CPU)));
  out.unsafeGetTensorImpl()->set_sizes_contiguous({2});
  EXPECT_THAT(
      errorOf([&] { reduce_internal::resizeOutput(out, {3}, "test_op.out"); }),
      HasSubstr("test_op.out: Trying to resize storage that is not "
                "resizable (out has shape [2], needs [3])"));
  EXPECT_EQ(sizesOf(out), (std::vector<int64_t>{2}));
  EXPECT_EQ(valuesOf(out), (std::vector<double>{7, 8}));
}

}  // namespace
}  // namespace turnout

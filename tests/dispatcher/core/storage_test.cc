#include "dispatcher/core/storage.h"

#include <cstring>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(Storage, AllocatesFromTheAllocator) {
  Storage s = Storage::allocate(64, getAllocator(DeviceType::CPU));
  ASSERT_TRUE(s.defined());
  EXPECT_EQ(s.nbytes(), 64u);
  EXPECT_NE(s.data(), nullptr);
  EXPECT_EQ(s.device(), Device(DeviceType::CPU));
  EXPECT_EQ(s.device_type(), DeviceType::CPU);
  EXPECT_EQ(s.allocator(), getAllocator(DeviceType::CPU));
  EXPECT_FALSE(s.resizable());
  std::memset(s.mutable_data(), 0, s.nbytes());
  EXPECT_EQ(s.use_count(), 1u);
}

TEST(Storage, CopiesShareTheImpl) {
  Storage s = Storage::allocate(8, getAllocator(DeviceType::CPU), true);
  Storage t = s;
  EXPECT_TRUE(t.is_alias_of(s));
  EXPECT_EQ(s.use_count(), 2u);
  EXPECT_EQ(s.unsafeGetStorageImpl(), t.unsafeGetStorageImpl());
  Storage other = Storage::allocate(8, getAllocator(DeviceType::CPU));
  EXPECT_FALSE(other.is_alias_of(s));
  Storage undefined;
  EXPECT_FALSE(undefined.defined());
  EXPECT_FALSE(undefined.is_alias_of(Storage()));
  EXPECT_EQ(undefined.use_count(), 0u);
}

TEST(Storage, MetaStorageHasSizeButNoData) {
  Storage s = Storage::allocate(1 << 20, getAllocator(DeviceType::Meta));
  EXPECT_EQ(s.nbytes(), 1u << 20);
  EXPECT_EQ(s.data(), nullptr);
  EXPECT_EQ(s.device(), Device(DeviceType::Meta));
}

TEST(StorageImpl, SetDataPtrReturnsTheOldOne) {
  auto impl = make_intrusive<StorageImpl>(16, getAllocator(DeviceType::CPU),
                                          /*resizable=*/true);
  const void* old_data = impl->data();
  DataPtr fresh = getAllocator(DeviceType::CPU)->allocate(32);
  void* fresh_data = fresh.get();
  DataPtr old = impl->set_data_ptr(std::move(fresh));
  impl->set_nbytes(32);
  EXPECT_EQ(old.get(), old_data);
  EXPECT_EQ(impl->data(), fresh_data);
  EXPECT_EQ(impl->nbytes(), 32u);
  impl->set_resizable(false);
  EXPECT_FALSE(impl->resizable());
}

TEST(StorageImpl, AdoptsForeignMemory) {
  static char buffer[16];
  Storage s(make_intrusive<StorageImpl>(
      sizeof(buffer), DataPtr(buffer, Device(DeviceType::CPU)), nullptr,
      /*resizable=*/false));
  EXPECT_EQ(s.data(), buffer);
  EXPECT_EQ(s.allocator(), nullptr);
}

TEST(StorageImpl, Errors) {
  try {
    StorageImpl impl(8, nullptr, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "StorageImpl(): allocator is null; pass one, e.g. "
              "getAllocator(DeviceType::CPU)");
  }
  try {
    StorageImpl impl(8, getAllocator(DeviceType::CPU)->allocate(8), nullptr,
                     /*resizable=*/true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "StorageImpl(): a resizable storage needs an allocator");
  }
}

}  // namespace
}  // namespace turnout

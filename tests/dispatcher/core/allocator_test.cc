#include "dispatcher/core/allocator.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

// Hands out CPU memory labelled with a fake device, and counts frees (of
// every FakeAllocator: tests compare before and after).
class FakeAllocator final : public Allocator {
 public:
  explicit FakeAllocator(Device device) : device_(device) {}
  DataPtr allocate(size_t nbytes) override {
    ++allocations;
    void* data = ::operator new(nbytes == 0 ? 1 : nbytes);
    return DataPtr(data, data, &FakeAllocator::freeAndCount, device_);
  }
  std::atomic<int> allocations{0};
  static std::atomic<int> frees;

 private:
  static void freeAndCount(void* context) {
    ::operator delete(context);
    ++frees;
  }
  Device device_;
};

std::atomic<int> FakeAllocator::frees{0};

TEST(Allocator, DefaultCPUAllocatorIsAligned) {
  Allocator* cpu = getAllocator(DeviceType::CPU);
  EXPECT_EQ(cpu, getDefaultCPUAllocator());
  for (size_t nbytes : {1, 3, 64, 65, 1000, 4096}) {
    SCOPED_TRACE(nbytes);
    DataPtr p = cpu->allocate(nbytes);
    ASSERT_NE(p.get(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % kCPUAlignment, 0u);
    EXPECT_EQ(p.device(), Device(DeviceType::CPU));
    std::memset(p.get(), 0xab, nbytes);  // ASan checks the extent
  }
  DataPtr empty = cpu->allocate(0);
  EXPECT_EQ(empty.get(), nullptr);
  EXPECT_FALSE(empty);
}

TEST(Allocator, MetaAllocatorAllocatesNothing) {
  DataPtr p = getAllocator(DeviceType::Meta)->allocate(1 << 30);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.device(), Device(DeviceType::Meta));
}

TEST(Allocator, MissingAllocatorSaysHowToFixIt) {
  struct Case {
    DeviceType type;
    const char* message;
  };
  const std::vector<Case> cases = {
      {DeviceType::CUDA,
       "no allocator is registered for device type CUDA: link turnout's CUDA "
       "kernels, or call setAllocator(DeviceType::CUDA, ...)"},
      {DeviceType::PrivateUse1,
       "no allocator is registered for device type PrivateUse1: link "
       "turnout's PrivateUse1 kernels, or call "
       "setAllocator(DeviceType::PrivateUse1, ...)"},
      {DeviceType::XLA,
       "no allocator is registered for device type XLA: link turnout's XLA "
       "kernels, or call setAllocator(DeviceType::XLA, ...)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      getAllocator(c.type);
      ADD_FAILURE() << "found an allocator";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
      EXPECT_EQ(e.message(), c.message);
    }
  }
  EXPECT_THROW(getAllocator(static_cast<DeviceType>(5)), Error);
  EXPECT_THROW(setAllocator(static_cast<DeviceType>(21), nullptr), Error);
}

TEST(Allocator, SetAllocatorReturnsThePreviousOne) {
  FakeAllocator fake(Device(DeviceType::PrivateUse1, 0));
  const int frees = FakeAllocator::frees;
  EXPECT_EQ(setAllocator(DeviceType::PrivateUse1, &fake), nullptr);
  EXPECT_EQ(getAllocator(DeviceType::PrivateUse1), &fake);
  {
    DataPtr p = getAllocator(DeviceType::PrivateUse1)->allocate(16);
    EXPECT_EQ(p.device(), Device("privateuseone:0"));
    EXPECT_EQ(fake.allocations, 1);
  }
  EXPECT_EQ(FakeAllocator::frees, frees + 1);
  EXPECT_EQ(setAllocator(DeviceType::PrivateUse1, nullptr), &fake);
  EXPECT_THROW(getAllocator(DeviceType::PrivateUse1), Error);
}

TEST(Allocator, ReplacingCPUAndRestoringTheDefault) {
  FakeAllocator fake(Device(DeviceType::CPU));
  EXPECT_EQ(setAllocator(DeviceType::CPU, &fake), nullptr);
  EXPECT_EQ(getAllocator(DeviceType::CPU), &fake);
  EXPECT_EQ(setAllocator(DeviceType::CPU, nullptr), &fake);
  EXPECT_EQ(getAllocator(DeviceType::CPU), getDefaultCPUAllocator());
}

TEST(DataPtr, OwnsAndMoves) {
  FakeAllocator fake(Device(DeviceType::CPU));
  const int frees = FakeAllocator::frees;
  {
    DataPtr a = fake.allocate(8);
    void* data = a.get();
    DataPtr b = std::move(a);
    EXPECT_EQ(a.get(), nullptr);  // NOLINT: moved-from is empty by contract
    EXPECT_EQ(b.get(), data);
    EXPECT_EQ(b.get_context(), data);
    DataPtr c;
    c = std::move(b);
    EXPECT_EQ(FakeAllocator::frees, frees);
    c = fake.allocate(8);  // frees the first allocation
    EXPECT_EQ(FakeAllocator::frees, frees + 1);
    c.clear();
    EXPECT_EQ(FakeAllocator::frees, frees + 2);
    EXPECT_EQ(c.get(), nullptr);
  }
  EXPECT_EQ(FakeAllocator::frees, frees + 2);
  DataPtr d = fake.allocate(8);
  void* context = d.release_context();
  EXPECT_EQ(d.get(), nullptr);
  ::operator delete(context);  // the caller owns it now
  EXPECT_EQ(FakeAllocator::frees, frees + 2);
  int local = 0;
  DataPtr unowned(&local, Device(DeviceType::CPU));
  EXPECT_EQ(unowned.get_deleter(), nullptr);
}

TEST(Allocator, RegistrationRacesWithLookups) {
  FakeAllocator a(Device(DeviceType::HPU, 0));
  FakeAllocator b(Device(DeviceType::HPU, 0));
  setAllocator(DeviceType::HPU, &a);
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        Allocator* found = getAllocator(DeviceType::HPU);
        EXPECT_TRUE(found == &a || found == &b);
        DataPtr p = found->allocate(4);
        static_cast<char*>(p.get())[0] = 1;
      }
    });
  }
  for (int i = 0; i < 2000; ++i) setAllocator(DeviceType::HPU, i % 2 ? &a : &b);
  stop = true;
  for (auto& t : readers) t.join();
  setAllocator(DeviceType::HPU, nullptr);
}

}  // namespace
}  // namespace turnout

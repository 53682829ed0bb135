#include "dispatcher/core/tensor.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/py_object_slot.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

using detail::makeEmptyTensor;

// Host memory that claims to live on `device`: enough to build tensors of a
// backend this machine does not have.
class FakeDeviceAllocator final : public Allocator {
 public:
  explicit FakeDeviceAllocator(Device device) : device_(device) {}
  DataPtr allocate(size_t nbytes) override {
    void* data = ::operator new(nbytes == 0 ? 1 : nbytes);
    return DataPtr(
        data, data, [](void* p) { ::operator delete(p); }, device_);
  }

 private:
  Device device_;
};

// Registers fake CUDA and PrivateUse1 allocators for the test's duration.
class TensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setAllocator(DeviceType::CUDA, &cuda_);
    setAllocator(DeviceType::PrivateUse1, &private_use1_);
  }
  void TearDown() override {
    setAllocator(DeviceType::CUDA, nullptr);
    setAllocator(DeviceType::PrivateUse1, nullptr);
  }

 private:
  FakeDeviceAllocator cuda_{Device(DeviceType::CUDA, 0)};
  FakeDeviceAllocator private_use1_{Device(DeviceType::PrivateUse1, 0)};
};

TEST_F(TensorTest, KeySetsAsC10) {
  struct Case {
    const char* device;
    Layout layout;
    DispatchKeySet keys;
    const char* printed;
  };
  const std::vector<Case> cases = {
      {"cpu",
       Layout::Strided,
       {DispatchKey::CPU, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradCPU},
       "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)"},
      {"meta",
       Layout::Strided,
       {DispatchKey::Meta, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradMeta},
       "DispatchKeySet(Meta, ADInplaceOrView, AutogradMeta)"},
      {"cuda:0",
       Layout::Strided,
       {DispatchKey::CUDA, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradCUDA},
       "DispatchKeySet(CUDA, ADInplaceOrView, AutogradCUDA)"},
      {"privateuseone",
       Layout::Strided,
       {DispatchKey::PrivateUse1, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradPrivateUse1},
       "DispatchKeySet(PrivateUse1, ADInplaceOrView, AutogradPrivateUse1)"},
      {"cpu",
       Layout::Sparse,
       {DispatchKey::SparseCPU, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradCPU},
       "DispatchKeySet(SparseCPU, ADInplaceOrView, AutogradCPU)"},
      {"cpu",
       Layout::Mkldnn,
       {DispatchKey::MkldnnCPU, DispatchKey::ADInplaceOrView,
        DispatchKey::AutogradOther},
       "DispatchKeySet(MkldnnCPU, ADInplaceOrView, AutogradOther)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.device) + " " + toString(c.layout));
    Tensor t = makeEmptyTensor({2, 3}, kFloat, Device(c.device), c.layout);
    EXPECT_EQ(t.key_set(), c.keys);
    EXPECT_EQ(toString(t.key_set()), c.printed);
    EXPECT_EQ(TensorImpl::computeKeySet(kFloat, c.layout, Device(c.device)),
              c.keys);
    EXPECT_EQ(t.layout(), c.layout);
    t.unsafeGetTensorImpl()->checkInvariants();
  }
}

TEST_F(TensorTest, DeviceComesFromTheAllocation) {
  Tensor cuda = makeEmptyTensor({4}, kFloat, Device("cuda"));
  EXPECT_EQ(cuda.device(), Device("cuda:0"));
  EXPECT_TRUE(cuda.is_cuda());
  EXPECT_EQ(cuda.storage().device(), Device("cuda:0"));
  try {
    makeEmptyTensor({4}, kFloat, Device("cuda:1"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "makeEmptyTensor(): the CUDA allocator returned memory on "
              "cuda:0 for a tensor requested on cuda:1");
  }
  Tensor meta = makeEmptyTensor({4}, kFloat, Device("meta"));
  EXPECT_EQ(meta.device(), Device("meta"));
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(meta.data_ptr(), nullptr);
  EXPECT_EQ(meta.storage().nbytes(), 16u);
  Tensor cpu = makeEmptyTensor({4}, kFloat, Device("cpu"));
  EXPECT_TRUE(cpu.is_cpu());
}

TEST(Tensor, NoAllocatorNoTensor) {
  try {
    makeEmptyTensor({2}, kFloat, Device("cuda"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
    EXPECT_EQ(e.message(),
              "no allocator is registered for device type CUDA: link "
              "turnout's CUDA kernels, or call setAllocator(DeviceType::CUDA, "
              "...)");
  }
}

TEST(Tensor, MakeEmptyTensorErrors) {
  struct Case {
    std::vector<int64_t> sizes;
    ScalarType dtype;
    Layout layout;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{2, -1},
       kFloat,
       Layout::Strided,
       "makeEmptyTensor(): sizes must be non-negative, got [2, -1]"},
      {{2},
       ScalarType::Undefined,
       Layout::Strided,
       "makeEmptyTensor(): dtype Undefined (16) is not a tensor dtype"},
      {{2},
       kFloat,
       Layout::Jagged,
       "computeDispatchKey(): layout Jagged is not supported on device type "
       "CPU (device 'cpu'); turnout has no dispatch key for this layout"},
      {{int64_t{1} << 40, int64_t{1} << 40},
       kFloat,
       Layout::Strided,
       "empty(): the number of elements of sizes [1099511627776, "
       "1099511627776] overflows int64 (the product of the sizes must be at "
       "most 9223372036854775807)"},
      // The elements fit int64, their bytes do not.
      {{int64_t{1} << 61},
       kFloat,
       Layout::Strided,
       "empty(): 2305843009213693952 elements of sizes [2305843009213693952] "
       "of Float need more than int64 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      makeEmptyTensor(c.sizes, c.dtype, Device("cpu"), c.layout);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), c.message);
    }
  }
}

TEST(Tensor, ContiguousStrides) {
  struct Case {
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    int64_t numel;
  };
  const std::vector<Case> cases = {
      {{}, {}, 1},
      {{5}, {1}, 5},
      {{2, 3}, {3, 1}, 6},
      {{2, 3, 4}, {12, 4, 1}, 24},
      {{2, 0, 4}, {4, 4, 1}, 0},
      {{1, 1}, {1, 1}, 1},
      {{2, 3, 4, 5, 6, 7}, {2520, 840, 210, 42, 7, 1}, 5040},
  };
  for (const Case& c : cases) {
    Tensor t = makeEmptyTensor(c.sizes, kDouble, Device("cpu"));
    SCOPED_TRACE(t.toString());
    EXPECT_EQ(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
              c.sizes);
    EXPECT_EQ(std::vector<int64_t>(t.strides().begin(), t.strides().end()),
              c.strides);
    EXPECT_EQ(t.dim(), static_cast<int64_t>(c.sizes.size()));
    EXPECT_EQ(t.numel(), c.numel);
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t.storage().nbytes(), static_cast<size_t>(c.numel) * 8);
    EXPECT_EQ(t.storage_offset(), 0);
    t.unsafeGetTensorImpl()->checkInvariants();
  }
}

TEST(Tensor, Contiguity) {
  struct Case {
    std::vector<int64_t> sizes;
    std::vector<int64_t> strides;
    bool contiguous;
  };
  const std::vector<Case> cases = {
      {{2, 3}, {3, 1}, true},
      {{2, 3}, {1, 2}, false},  // a transpose of [3, 2]
      {{3, 2}, {1, 3}, false},
      {{2, 1}, {1, 99}, true},  // size-1 dimensions may have any stride
      {{1, 3}, {7, 1}, true},
      {{2, 2}, {4, 1}, false},  // every other row
      {{0, 3}, {5, 7}, true},   // empty is contiguous
      {{3}, {2}, false},
      {{3}, {0}, false},  // a broadcast
  };
  for (const Case& c : cases) {
    Tensor t = makeEmptyTensor({12}, kFloat, Device("cpu"));
    t.unsafeGetTensorImpl()->set_sizes_and_strides(c.sizes, c.strides);
    SCOPED_TRACE(t.toString());
    EXPECT_EQ(t.is_contiguous(), c.contiguous);
    t.unsafeGetTensorImpl()->checkInvariants();
  }
}

TEST(Tensor, ViewsMustFitTheirStorage) {
  Tensor t = makeEmptyTensor({2, 3}, kFloat, Device("cpu"));
  TensorImpl* impl = t.unsafeGetTensorImpl();
  impl->set_sizes_and_strides({3, 2}, {1, 3});
  impl->set_storage_offset(0);
  EXPECT_EQ(t.stride(0), 1);
  EXPECT_EQ(t.stride(-1), 3);
  try {
    impl->set_sizes_and_strides({3, 3}, {3, 1});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "set_sizes_and_strides(): sizes [3, 3], strides [3, 1] and "
              "offset 0 need 36 bytes of storage but it has 24");
  }
  // A failed change leaves the tensor as it was.
  EXPECT_EQ(t.size(0), 3);
  EXPECT_EQ(t.stride(0), 1);
  try {
    impl->set_storage_offset(1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "set_storage_offset(): sizes [3, 2], strides [1, 3] and offset "
              "1 need 28 bytes of storage but it has 24");
  }
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_THROW(impl->set_sizes_contiguous({7}), Error);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_THROW(impl->set_sizes_and_strides({2}, {1, 1}), Error);
  EXPECT_THROW(impl->set_sizes_and_strides({2}, {-1}), Error);
  EXPECT_THROW(impl->set_storage_offset(-1), Error);
  impl->set_sizes_contiguous({5});
  impl->set_storage_offset(1);
  EXPECT_EQ(static_cast<char*>(t.data_ptr()) -
                static_cast<const char*>(t.storage().data()),
            4);
  impl->checkInvariants();
}

// Sizes whose number of elements, or whose storage bytes, overflow int64
// are refused before anything changes (an expanded view used to get numel
// -2^63, and empty(2^31, 2^31, 2^31) numel 0).
TEST(Tensor, OverflowingSizesAreRefused) {
  constexpr int64_t k62 = int64_t{1} << 62;
  Tensor t = makeEmptyTensor({2, 3}, kFloat, Device("cpu"));
  TensorImpl* impl = t.unsafeGetTensorImpl();
  struct Case {
    const char* name;
    std::function<void()> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"expanded view",
       [&] { impl->set_sizes_and_strides({k62, 2, 3}, {0, 3, 1}); },
       "set_sizes_and_strides(): the number of elements of sizes "
       "[4611686018427387904, 2, 3] overflows int64"},
      {"contiguous",
       [&] { impl->set_sizes_contiguous({int64_t{1} << 31, int64_t{1} << 31,
                                         int64_t{1} << 31}); },
       "set_sizes_contiguous(): the number of elements of sizes "
       "[2147483648, 2147483648, 2147483648] overflows int64"},
      {"a zero too late",
       [&] { impl->set_sizes_and_strides({k62, k62, 0}, {0, 0, 0}); },
       "the number of elements of sizes [4611686018427387904, "
       "4611686018427387904, 0] overflows int64"},
      {"stride",
       [&] { impl->set_sizes_and_strides({3}, {k62}); },
       "set_sizes_and_strides(): sizes [3], strides [4611686018427387904] "
       "and offset 0 reach past int64 bytes of storage (4-byte elements)"},
      {"offset",
       [&] { impl->set_storage_offset(std::numeric_limits<int64_t>::max()); },
       "set_storage_offset(): sizes [2, 3], strides [3, 1] and offset "
       "9223372036854775807 reach past int64 bytes of storage"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      c.change();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_THAT(e.message(), ::testing::HasSubstr(c.message));
    }
    EXPECT_EQ(t.sizes(), IntArrayRef({2, 3}));
    EXPECT_EQ(t.strides(), IntArrayRef({3, 1}));
    EXPECT_EQ(t.storage_offset(), 0);
    EXPECT_EQ(t.numel(), 6);
    impl->checkInvariants();
  }
  // No elements: huge sizes after a zero are fine, as in PyTorch, and the
  // contiguous strides saturate instead of overflowing.
  Tensor e = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU),
                                          {0, k62, k62}, kFloat, Device("cpu"));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.strides(),
            IntArrayRef({std::numeric_limits<int64_t>::max(), k62, 1}));
  e.unsafeGetTensorImpl()->checkInvariants();
}

TEST(Tensor, SizeAndStrideIndexErrors) {
  Tensor t = makeEmptyTensor({2, 3}, kFloat, Device("cpu"));
  EXPECT_EQ(t.size(-2), 2);
  EXPECT_EQ(t.size(1), 3);
  try {
    t.size(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_EQ(e.message(),
              "size(): dimension 2 is out of range for a tensor of 2 "
              "dimensions (expected a dimension in [-2, 1])");
  }
  EXPECT_THROW(t.stride(-3), Error);
}

TEST(Tensor, DataPtrIsCheckedAgainstTheDtype) {
  Tensor t = makeEmptyTensor({4}, kLong, Device("cpu"));
  int64_t* data = t.data_ptr<int64_t>();
  for (int i = 0; i < 4; ++i) data[i] = i * 10;
  EXPECT_EQ(t.data_ptr(), data);
  const int64_t* const_data = t.data_ptr<const int64_t>();
  EXPECT_EQ(const_data[3], 30);
  try {
    t.data_ptr<float>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Type);
    EXPECT_EQ(e.message(),
              "data_ptr<T>(): T is the C++ type of Float but the tensor's "
              "dtype is Long; use data_ptr() or the dtype's C++ type");
  }
  Tensor h = makeEmptyTensor({2}, kHalf, Device("cpu"));
  h.data_ptr<Half>()[0] = Half(1.5f);
  EXPECT_EQ(static_cast<float>(h.data_ptr<Half>()[0]), 1.5f);
  EXPECT_EQ(h.itemsize(), 2u);
  Tensor sparse = makeEmptyTensor({2}, kFloat, Device("cpu"), Layout::Sparse);
  EXPECT_FALSE(sparse.has_storage());
  EXPECT_TRUE(sparse.is_sparse());
  EXPECT_FALSE(sparse.is_contiguous());
  try {
    sparse.strides();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
    EXPECT_EQ(e.message(),
              "strides(): a tensor with layout Sparse has no strides");
  }
}

TEST(Tensor, CopiesShareMovesSteal) {
  Tensor a = makeEmptyTensor({2}, kFloat, Device("cpu"));
  EXPECT_EQ(a.use_count(), 1u);
  Tensor b = a;
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_TRUE(a.is_same(b));
  Tensor c = std::move(b);
  EXPECT_FALSE(b.defined());  // NOLINT: moved-from is undefined by contract
  EXPECT_EQ(a.use_count(), 2u);
  c.reset();
  EXPECT_EQ(a.use_count(), 1u);
  EXPECT_EQ(a.storage().use_count(), 1u);
  TensorImpl* raw = a.unsafeReleaseTensorImpl();
  EXPECT_FALSE(a.defined());
  Tensor back = Tensor::unsafeReclaimFromRaw(raw);
  EXPECT_EQ(back.use_count(), 1u);
  EXPECT_EQ(back.unsafeGetTensorImpl(), raw);
}

TEST(Tensor, UndefinedTensor) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_TRUE(t.key_set().empty());
  EXPECT_EQ(t.use_count(), 0u);
  EXPECT_EQ(t.unsafeGetTensorImpl(), UndefinedTensorImpl::singleton());
  EXPECT_TRUE(t.is_same(Tensor()));
  EXPECT_EQ(t.toString(), "Tensor(undefined)");
  try {
    t.sizes();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "sizes() called on an undefined Tensor");
  }
  EXPECT_THROW(t.dim(), Error);
  EXPECT_THROW(t.data_ptr<float>(), Error);
  EXPECT_THROW(t.unsafeGetTensorImpl()->add_key(DispatchKey::Python), Error);
  EXPECT_TRUE(Tensor().key_set().empty());
  {
    Tensor copy = t;
    Tensor moved = std::move(copy);
  }
  EXPECT_EQ(UndefinedTensorImpl::singleton()->refcount(), 0u);
  UndefinedTensorImpl::singleton()->checkInvariants();
}

TEST(Tensor, KeySetCanBeChanged) {
  Tensor t = makeEmptyTensor({2}, kFloat, Device("cpu"));
  t.unsafeGetTensorImpl()->add_key(DispatchKey::Python);
  EXPECT_TRUE(t.key_set().has(DispatchKey::Python));
  EXPECT_EQ(t.key_set().highestPriorityTypeId(), DispatchKey::AutogradCPU);
  t.unsafeGetTensorImpl()->remove_key(DispatchKey::AutogradCPU);
  EXPECT_EQ(t.key_set().highestPriorityTypeId(), DispatchKey::ADInplaceOrView);
  t.unsafeGetTensorImpl()->remove_key(DispatchKey::ADInplaceOrView);
  EXPECT_EQ(t.key_set().highestPriorityTypeId(), DispatchKey::Python);
  t.unsafeGetTensorImpl()->set_key_set(DispatchKeySet(DispatchKey::CPU));
  EXPECT_EQ(t.key_set(), DispatchKeySet(DispatchKey::CPU));
}

TEST(Tensor, ShallowCopyFromTakesMetadataKeepsCounterAndPythonKeys) {
  Tensor t = makeEmptyTensor({3}, kFloat, Device("cpu"));
  t.unsafeGetTensorImpl()->add_key(DispatchKey::Python);
  t.unsafeGetTensorImpl()->bump_version();
  Tensor src = makeEmptyTensor({2, 4}, kDouble, Device("cpu"));
  src.unsafeGetTensorImpl()->set_sizes_and_strides({4, 2}, {1, 4});
  TensorImpl* impl = t.unsafeGetTensorImpl();
  impl->shallow_copy_from(*src.unsafeGetTensorImpl());
  EXPECT_EQ(impl->dtype(), kDouble);
  EXPECT_EQ(impl->sizes(), src.sizes());
  EXPECT_EQ(impl->strides(), src.strides());
  EXPECT_FALSE(impl->is_contiguous());
  EXPECT_EQ(impl->numel(), 8);
  EXPECT_EQ(impl->data(), src.unsafeGetTensorImpl()->data());  // shared
  EXPECT_EQ(impl->version(), 1u);  // its own counter
  EXPECT_EQ(src.unsafeGetTensorImpl()->version(), 0u);
  EXPECT_TRUE(t.key_set().has(DispatchKey::Python));  // still a subclass
  EXPECT_EQ(t.key_set().remove(DispatchKey::Python), src.key_set());
  impl->checkInvariants();
  impl->shallow_copy_from(*impl);  // itself: nothing changes
  EXPECT_EQ(impl->numel(), 8);
}

TEST(Tensor, WrappedNumberFlag) {
  Tensor n = makeEmptyTensor({}, kLong, Device("cpu"));
  TensorImpl* impl = n.unsafeGetTensorImpl();
  EXPECT_FALSE(impl->is_wrapped_number());
  impl->set_wrapped_number(true);
  EXPECT_TRUE(impl->is_wrapped_number());
  // A flag only: the keys and the metadata stay a 0-dim CPU tensor's.
  EXPECT_EQ(n.key_set(), makeEmptyTensor({}, kLong, Device("cpu")).key_set());
  EXPECT_EQ(n.dim(), 0);
  impl->checkInvariants();
  impl->set_wrapped_number(false);
  EXPECT_FALSE(impl->is_wrapped_number());

  // Only a 0-dim tensor is a number; nothing changes on a refusal.
  Tensor v = makeEmptyTensor({2}, kLong, Device("cpu"));
  try {
    v.unsafeGetTensorImpl()->set_wrapped_number(true);
    FAIL() << "a 1-dim tensor was made a wrapped number";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_THAT(e.message(), ::testing::HasSubstr(
                                 "a wrapped number is a 0-dim tensor, this "
                                 "one has sizes [2]"));
  }
  EXPECT_FALSE(v.unsafeGetTensorImpl()->is_wrapped_number());
  v.unsafeGetTensorImpl()->set_wrapped_number(false);  // always allowed
  EXPECT_THROW(Tensor().unsafeGetTensorImpl()->set_wrapped_number(true),
               Error);
  EXPECT_FALSE(UndefinedTensorImpl::singleton()->is_wrapped_number());
}

TEST(Tensor, MakeTensorWithKeySetUsesExactlyThoseKeys) {
  DispatchKeySet keys({DispatchKey::PrivateUse1, DispatchKey::Python});
  Tensor t = detail::makeTensorWithKeySet(keys, {3, 4});
  EXPECT_EQ(t.key_set(), keys);
  EXPECT_EQ(t.numel(), 12);
  EXPECT_FALSE(t.has_storage());
  t.unsafeGetTensorImpl()->checkInvariants();
}

// A tensor with elements but no storage (a wrapper subclass's) has no data
// to read: a kernel asking for it gets an error, not a null pointer. With
// no element there is nothing to read, and the address is null.
TEST(Tensor, DataOfATensorWithoutStorageIsAnError) {
  Tensor t = detail::makeTensorWithKeySet(
      DispatchKeySet({DispatchKey::CPU, DispatchKey::Python}), {3, 4});
  for (auto read : {+[](const Tensor& x) { (void)x.data_ptr(); },
                    +[](const Tensor& x) { (void)x.data_ptr<float>(); }}) {
    try {
      read(t);
      FAIL() << "read the data of a tensor without storage";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_THAT(e.message(), ::testing::HasSubstr("has no storage"));
      EXPECT_THAT(e.message(), ::testing::HasSubstr("unwrap it"));
    }
  }
  Tensor sparse = makeEmptyTensor({2}, kFloat, Device("cpu"), Layout::Sparse);
  EXPECT_THROW((void)sparse.data_ptr(), Error);
  Tensor empty = detail::makeTensorWithKeySet(
      DispatchKeySet(DispatchKey::CPU), {0, 4});
  EXPECT_EQ(empty.data_ptr(), nullptr);
}

// The objects the test releaser saw, in order. Only touched by the thread
// that destroys the last reference (each test joins before reading).
std::vector<void*> released_objects;
void recordRelease(void* obj) { released_objects.push_back(obj); }

TEST(PyObjectSlot, AnOwnedObjectIsReleasedWithTheTensorImpl) {
  PyObjectSlot::setReleaser(&recordRelease);
  released_objects.clear();
  int owned_obj = 0, borrowed_obj = 0;
  {
    Tensor t = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
    PyObjectSlot& slot = t.unsafeGetTensorImpl()->pyobj_slot();
    EXPECT_EQ(slot.get(), nullptr);
    slot.set(&borrowed_obj, /*owned=*/false);
    EXPECT_EQ(slot.get(), &borrowed_obj);
    EXPECT_FALSE(slot.owned());
    slot.set(&owned_obj, /*owned=*/true);
    EXPECT_TRUE(slot.owned());
    Tensor copy = t;  // the slot belongs to the TensorImpl, not to a Tensor
    t = Tensor();
    EXPECT_TRUE(released_objects.empty());
  }
  EXPECT_EQ(released_objects, std::vector<void*>{&owned_obj});

  released_objects.clear();
  {
    Tensor t = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
    t.unsafeGetTensorImpl()->pyobj_slot().set(&owned_obj, /*owned=*/true);
    t.unsafeGetTensorImpl()->pyobj_slot().set(&borrowed_obj, /*owned=*/false);
    Tensor u = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
    u.unsafeGetTensorImpl()->pyobj_slot().set(&owned_obj, /*owned=*/true);
    u.unsafeGetTensorImpl()->pyobj_slot().clear();
  }
  EXPECT_TRUE(released_objects.empty());  // not owned, or forgotten
}

TEST(PyObjectSlot, ReleasedOnTheThreadThatDropsTheLastReference) {
  PyObjectSlot::setReleaser(&recordRelease);
  released_objects.clear();
  int obj = 0;
  Tensor t = detail::makeTensorWithKeySet(DispatchKeySet(DispatchKey::CPU));
  t.unsafeGetTensorImpl()->pyobj_slot().set(&obj, /*owned=*/true);
  std::thread other([moved = std::move(t)]() mutable { moved = Tensor(); });
  other.join();
  EXPECT_EQ(released_objects, std::vector<void*>{&obj});
}

TEST(Tensor, Printing) {
  struct Case {
    Tensor t;
    const char* text;
  };
  const std::vector<Case> cases = {
      {makeEmptyTensor({2, 3}, kFloat, Device("cpu")),
       "Tensor(sizes=[2, 3], dtype=Float, device=cpu)"},
      {makeEmptyTensor({}, kLong, Device("meta")),
       "Tensor(sizes=[], dtype=Long, device=meta)"},
      {makeEmptyTensor({4}, kBool, Device("cpu"), Layout::Sparse),
       "Tensor(sizes=[4], dtype=Bool, device=cpu, layout=Sparse)"},
      {Tensor(), "Tensor(undefined)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(c.t.toString(), c.text);
    std::ostringstream out;
    out << c.t;
    EXPECT_EQ(out.str(), c.text);
  }
}

TEST(Tensor, ImplRejectsStorageOnAnotherDevice) {
  Storage cpu_storage = Storage::allocate(16, getAllocator(DeviceType::CPU));
  try {
    TensorImpl impl(cpu_storage, kFloat, Device("meta"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "TensorImpl(): the storage is on cpu but the tensor's device is "
              "meta; pass a storage from getAllocator(DeviceType::Meta)");
  }
}

// The constructor that takes the sizes (every new kernel result) makes what
// the four-argument one followed by set_sizes_contiguous makes, and refuses
// what set_sizes_contiguous refuses, with the same messages.
TEST(Tensor, ImplWithSizesIsTheContiguousTensor) {
  const DispatchKeySet keys =
      TensorImpl::computeKeySet(kFloat, Layout::Strided, Device("cpu"));
  for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{
           {}, {0}, {1}, {2, 3}, {2, 0, 4}, {2, 3, 4, 5, 6, 7}}) {
    SCOPED_TRACE(shapeString(sizes));
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    Storage storage =
        Storage::allocate(static_cast<size_t>(numel) * 4,
                          getAllocator(DeviceType::CPU), /*resizable=*/true);
    TensorImpl made(storage, kFloat, Device("cpu"), Layout::Strided, keys,
                    sizes);
    TensorImpl reference(storage, kFloat, Device("cpu"), Layout::Strided,
                         keys);
    reference.set_sizes_contiguous(sizes);
    made.checkInvariants();
    EXPECT_EQ(made.sizes(), reference.sizes());
    EXPECT_EQ(made.strides(), reference.strides());
    EXPECT_EQ(made.numel(), reference.numel());
    EXPECT_TRUE(made.is_contiguous());
    EXPECT_EQ(made.key_set(), keys);
  }
}

TEST(Tensor, ImplWithSizesErrors) {
  const DispatchKeySet keys =
      TensorImpl::computeKeySet(kFloat, Layout::Strided, Device("cpu"));
  Storage small = Storage::allocate(16, getAllocator(DeviceType::CPU));
  struct Case {
    const char* name;
    std::function<void()> make;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"negative size",
       [&] { TensorImpl(small, kFloat, Device("cpu"), Layout::Strided, keys,
                        {2, -1}); },
       "set_sizes_contiguous(): sizes must be non-negative, got [2, -1]"},
      {"overflow",
       [&] { TensorImpl(small, kFloat, Device("cpu"), Layout::Strided, keys,
                        {int64_t{1} << 31, int64_t{1} << 31,
                         int64_t{1} << 31}); },
       "set_sizes_contiguous(): the number of elements of sizes "
       "[2147483648, 2147483648, 2147483648] overflows int64"},
      {"storage too small",
       [&] { TensorImpl(small, kFloat, Device("cpu"), Layout::Strided, keys,
                        {5}); },
       "set_sizes_contiguous()"},
      {"bytes overflow",
       [&] { TensorImpl(small, kFloat, Device("cpu"), Layout::Strided, keys,
                        {int64_t{1} << 62}); },
       "set_sizes_contiguous()"},
      {"storage on another device",
       [&] { TensorImpl(small, kFloat, Device("meta"), Layout::Strided, keys,
                        {2}); },
       "TensorImpl(): the storage is on cpu but the tensor's device is meta"},
      {"invalid layout",
       [&] { TensorImpl(Storage(), kFloat, Device("cpu"),
                        static_cast<Layout>(100), keys, {2}); },
       "TensorImpl(): invalid layout 100"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    try {
      c.make();
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_THAT(e.message(), ::testing::HasSubstr(c.message));
    }
  }
}

// makeContiguousTensor puts TensorImpl, StorageImpl and VersionCounter in
// one block: each part must stay usable for as long as anything holds it,
// in any order of release (ASan reports a use after free or a leak), and a
// refused shape must free everything.
TEST(Tensor, ContiguousTensorPartsOutliveEachOther) {
  const DispatchKeySet keys =
      TensorImpl::computeKeySet(kFloat, Layout::Strided, Device("cpu"));
  Allocator* cpu = getAllocator(DeviceType::CPU);
  Tensor t = detail::makeContiguousTensor({2, 3}, 24, cpu, kFloat,
                                          Device("cpu"), keys);
  t.unsafeGetTensorImpl()->checkInvariants();
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.key_set(), keys);
  EXPECT_EQ(t.unsafeGetTensorImpl()->version(), 0u);
  float* data = t.data_ptr<float>();
  for (int i = 0; i < 6; ++i) data[i] = static_cast<float>(i);

  // A second tensor sharing the storage and the counter, as a view does.
  auto view = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      t.storage(), kFloat, Device("cpu"), Layout::Strided, keys);
  view->set_sizes_contiguous({6});
  view->set_version_counter(t.unsafeGetTensorImpl()->version_counter());
  Storage storage = t.storage();
  t = Tensor();  // the first tensor goes; its block stays for the others
  view->bump_version();
  EXPECT_EQ(view->version(), 1u);
  EXPECT_EQ(static_cast<float*>(view->data())[5], 5.0f);
  view.reset();  // the counter goes
  EXPECT_EQ(static_cast<const float*>(storage.data())[4], 4.0f);
  storage = Storage();  // the last part: the block is freed

  try {
    detail::makeContiguousTensor({2, -3}, 0, cpu, kFloat, Device("cpu"),
                                 keys);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), ::testing::HasSubstr("must be non-negative"));
  }
  try {
    detail::makeContiguousTensor({4}, 8, cpu, kFloat, Device("cpu"), keys);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), ::testing::HasSubstr("set_sizes_contiguous()"));
  }
}

// CPU memory that records each allocation and its release, and can give
// memory makeContiguousTensor must not place its block in (misaligned, or
// claiming another device), or refuse its n-th request.
std::atomic<int> g_live_allocations{0};

class RecordingAllocator final : public Allocator {
 public:
  enum class Gives { kAligned, kMisaligned, kOtherDevice };
  explicit RecordingAllocator(Gives gives = Gives::kAligned, int refuse = -1)
      : gives_(gives), refuse_(refuse) {}

  DataPtr allocate(size_t nbytes) override {
    TURNOUT_CHECK(static_cast<int>(requests.size()) != refuse_,
                  ErrorKind::InvalidArgument, "RecordingAllocator: refused");
    requests.push_back(nbytes);
    const size_t rounded = (nbytes + 2 * kCPUAlignment) / kCPUAlignment *
                           kCPUAlignment;
    char* base = static_cast<char*>(std::aligned_alloc(kCPUAlignment, rounded));
    char* data = gives_ == Gives::kMisaligned ? base + 4 : base;
    starts.push_back(data);
    ++g_live_allocations;
    return DataPtr(data, base,
                   [](void* p) {
                     --g_live_allocations;
                     std::free(p);
                   },
                   gives_ == Gives::kOtherDevice
                       ? Device(DeviceType::PrivateUse1)
                       : Device(DeviceType::CPU));
  }

  std::vector<size_t> requests;
  std::vector<const char*> starts;

 private:
  Gives gives_;
  int refuse_;
};

// True when [p, p + n) lies within allocation `i` of `a`.
bool within(const RecordingAllocator& a, size_t i, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  return c >= a.starts[i] && c + n <= a.starts[i] + a.requests[i];
}

// On the CPU, makeContiguousTensor takes its block from the tensor's
// allocator, and keeps up to 64 bytes of data in it (64-byte aligned); a
// larger tensor's data is a second allocation of exactly its bytes.
TEST(Tensor, ContiguousTensorSmallDataLivesInItsBlock) {
  const DispatchKeySet keys =
      TensorImpl::computeKeySet(kFloat, Layout::Strided, Device("cpu"));
  struct Case {
    int64_t numel;
    bool inline_data;
  };
  for (const Case& c : {Case{1, true}, Case{16, true}, Case{17, false},
                        Case{1000, false}}) {
    SCOPED_TRACE(c.numel);
    {
      RecordingAllocator alloc;
      const size_t nbytes = static_cast<size_t>(c.numel) * 4;
      Tensor t = detail::makeContiguousTensor({c.numel}, nbytes, &alloc,
                                              kFloat, Device("cpu"), keys);
      t.unsafeGetTensorImpl()->checkInvariants();
      ASSERT_EQ(alloc.requests.size(), c.inline_data ? 1u : 2u);
      float* data = t.data_ptr<float>();
      EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % kCPUAlignment, 0u);
      if (c.inline_data) {
        EXPECT_TRUE(within(alloc, 0, data, nbytes));
        // The block owns the bytes; the storage only points at them.
        EXPECT_EQ(t.storage().unsafeGetStorageImpl()->data_ptr().get_deleter(),
                  nullptr);
      } else {
        EXPECT_EQ(alloc.requests[1], nbytes);
        EXPECT_EQ(static_cast<const char*>(t.data_ptr()), alloc.starts[1]);
      }
      EXPECT_EQ(t.storage().allocator(), &alloc);  // a resize allocates here
      EXPECT_TRUE(t.storage().resizable());
      for (int64_t i = 0; i < c.numel; ++i) data[i] = static_cast<float>(i);
      Storage storage = t.storage();
      t = Tensor();  // the storage keeps the block, and the data with it
      EXPECT_EQ(static_cast<const float*>(storage.data())[c.numel - 1],
                static_cast<float>(c.numel - 1));
      EXPECT_GT(g_live_allocations.load(), 0);
    }
    EXPECT_EQ(g_live_allocations.load(), 0);
  }
}

// Memory the block cannot go in (misaligned for it, or on another device)
// is given back and the block comes from new; a refused allocation leaves
// nothing allocated.
TEST(Tensor, ContiguousTensorBlockFallsBackAndCleansUp) {
  const DispatchKeySet keys =
      TensorImpl::computeKeySet(kFloat, Layout::Strided, Device("cpu"));
  {
    RecordingAllocator misaligned(RecordingAllocator::Gives::kMisaligned);
    Tensor t = detail::makeContiguousTensor({3}, 12, &misaligned, kFloat,
                                            Device("cpu"), keys);
    // The block's memory went back; the data is the second allocation.
    ASSERT_EQ(misaligned.requests.size(), 2u);
    EXPECT_EQ(misaligned.requests[1], 12u);
    EXPECT_EQ(static_cast<const char*>(t.data_ptr()), misaligned.starts[1]);
    EXPECT_EQ(g_live_allocations.load(), 1);
    t.data_ptr<float>()[2] = 2.0f;
  }
  EXPECT_EQ(g_live_allocations.load(), 0);
  {
    // The data from an allocator on another device: TensorImpl refuses it.
    RecordingAllocator other(RecordingAllocator::Gives::kOtherDevice);
    try {
      detail::makeContiguousTensor({3}, 12, &other, kFloat, Device("cpu"),
                                   keys);
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_THAT(e.message(), ::testing::HasSubstr("the storage is on"));
    }
  }
  EXPECT_EQ(g_live_allocations.load(), 0);
  for (int refuse : {0, 1}) {
    SCOPED_TRACE(refuse);
    // 0: the block's request fails; 1: the data's, after the block's.
    RecordingAllocator refusing(RecordingAllocator::Gives::kAligned, refuse);
    try {
      detail::makeContiguousTensor({100}, 400, &refusing, kFloat,
                                   Device("cpu"), keys);
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      EXPECT_THAT(e.message(), ::testing::HasSubstr("refused"));
    }
    EXPECT_EQ(g_live_allocations.load(), 0);
  }
}

TEST(Tensor, ConcurrentCopiesAndKeyReads) {
  Tensor shared = makeEmptyTensor({8}, kFloat, Device("cpu"));
  const DispatchKeySet expected = shared.key_set();
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([shared, expected] {
      for (int j = 0; j < 10000; ++j) {
        Tensor copy = shared;
        Tensor moved = std::move(copy);
        if (moved.key_set() != expected) ADD_FAILURE();
        if (Tensor().key_set() != DispatchKeySet()) ADD_FAILURE();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared.use_count(), 1u);
}


// ---- python_custom readers (setPythonMetadataHook) -------------------------

// A metadata hook for the tests: counts the questions, answers what
// `answers` holds (or keeps the stored value, or throws).
struct HookScript {
  std::atomic<int> asked[6] = {};
  std::atomic<bool> answer{true};
  std::atomic<bool> fail{false};
  DimVector sizes{7, 3};
  DimVector strides{1, 7};
  std::atomic<int64_t> dim{2};
  std::string order;  // the questions, one letter each (single thread only)
  std::atomic<bool> record_order{false};
};
HookScript* g_script = nullptr;

bool scriptedHook(const TensorImpl& self, PythonMetadata what,
                  DimVector* out) {
  (void)self;
  const int w = static_cast<int>(what);
  g_script->asked[w].fetch_add(1, std::memory_order_relaxed);
  if (g_script->record_order.load()) g_script->order += "sSdnco"[w];
  TURNOUT_CHECK(!g_script->fail.load(), ErrorKind::Type,
                "the handler raised");
  if (!g_script->answer.load()) return false;
  switch (what) {
    case PythonMetadata::kSizes: *out = g_script->sizes; break;
    case PythonMetadata::kStrides: *out = g_script->strides; break;
    case PythonMetadata::kDim: out->assign({g_script->dim.load()}); break;
    case PythonMetadata::kNumel: out->assign({21}); break;
    case PythonMetadata::kIsContiguous: out->assign({0}); break;
    case PythonMetadata::kStorageOffset: out->assign({5}); break;
  }
  return true;
}

// Installs scriptedHook for one test.
class PythonMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_script = &script_;
    setPythonMetadataHook(&scriptedHook);
  }
  void TearDown() override {
    setPythonMetadataHook(nullptr);
    g_script = nullptr;
  }
  int asked(PythonMetadata what) {
    return script_.asked[static_cast<int>(what)].load();
  }
  int askedTotal() {
    int n = 0;
    for (auto& a : script_.asked) n += a.load();
    return n;
  }
  static Tensor custom(uint8_t mask) {
    Tensor t = makeEmptyTensor({2, 3}, kFloat, Device("cpu"));
    t.unsafeGetTensorImpl()->set_python_custom(mask);
    return t;
  }
  HookScript script_;
};

TEST_F(PythonMetadataTest, PlainTensorsNeverAsk) {
  Tensor t = makeEmptyTensor({2, 3}, kFloat, Device("cpu"));
  Tensor device_only = custom(TensorImpl::kCustomDevice |
                              TensorImpl::kCustomLayout);
  for (const Tensor& x : {t, device_only}) {
    EXPECT_THAT(x.sizes(), ::testing::ElementsAre(2, 3));
    EXPECT_THAT(x.strides(), ::testing::ElementsAre(3, 1));
    EXPECT_EQ(x.dim(), 2);
    EXPECT_EQ(x.numel(), 6);
    EXPECT_TRUE(x.is_contiguous());
    EXPECT_EQ(x.storage_offset(), 0);
    EXPECT_EQ(x.size(-1), 3);
    EXPECT_EQ(x.stride(0), 3);
  }
  EXPECT_EQ(askedTotal(), 0);
}

TEST_F(PythonMetadataTest, EachPolicyAsksForItsReaders) {
  struct Case {
    const char* name;
    uint8_t mask;
    std::function<void(const Tensor&)> read;
    PythonMetadata asks;
    bool asked;
  };
  const uint8_t sizes = TensorImpl::kCustomSizes | TensorImpl::kCustomStrides;
  const uint8_t strides = TensorImpl::kCustomStrides;
  const std::vector<Case> cases = {
      {"sizes/sizes", sizes,
       [](const Tensor& t) { EXPECT_THAT(t.sizes(), ::testing::ElementsAre(7, 3)); },
       PythonMetadata::kSizes, true},
      {"sizes/strides", sizes,
       [](const Tensor& t) { EXPECT_THAT(t.strides(), ::testing::ElementsAre(1, 7)); },
       PythonMetadata::kStrides, true},
      {"sizes/dim", sizes, [](const Tensor& t) { EXPECT_EQ(t.dim(), 2); },
       PythonMetadata::kDim, true},
      {"sizes/numel", sizes, [](const Tensor& t) { EXPECT_EQ(t.numel(), 21); },
       PythonMetadata::kNumel, true},
      {"sizes/is_contiguous", sizes,
       [](const Tensor& t) { EXPECT_FALSE(t.is_contiguous()); },
       PythonMetadata::kIsContiguous, true},
      {"sizes/storage_offset", sizes,
       [](const Tensor& t) { EXPECT_EQ(t.storage_offset(), 5); },
       PythonMetadata::kStorageOffset, true},
      {"strides/sizes", strides,
       [](const Tensor& t) { EXPECT_THAT(t.sizes(), ::testing::ElementsAre(2, 3)); },
       PythonMetadata::kSizes, false},
      {"strides/strides", strides,
       [](const Tensor& t) { EXPECT_THAT(t.strides(), ::testing::ElementsAre(1, 7)); },
       PythonMetadata::kStrides, true},
      {"strides/dim", strides, [](const Tensor& t) { EXPECT_EQ(t.dim(), 2); },
       PythonMetadata::kDim, false},
      {"strides/numel", strides, [](const Tensor& t) { EXPECT_EQ(t.numel(), 6); },
       PythonMetadata::kNumel, false},
      {"strides/is_contiguous", strides,
       [](const Tensor& t) { EXPECT_FALSE(t.is_contiguous()); },
       PythonMetadata::kIsContiguous, true},
      {"strides/storage_offset", strides,
       [](const Tensor& t) { EXPECT_EQ(t.storage_offset(), 0); },
       PythonMetadata::kStorageOffset, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (auto& a : script_.asked) a.store(0);
    c.read(custom(c.mask));
    EXPECT_EQ(asked(c.asks), c.asked ? 1 : 0);
    EXPECT_EQ(askedTotal(), c.asked ? 1 : 0);
  }
}

TEST_F(PythonMetadataTest, NoAnswerKeepsTheStoredValues) {
  script_.answer = false;
  Tensor t = custom(TensorImpl::kCustomSizes | TensorImpl::kCustomStrides);
  EXPECT_THAT(t.sizes(), ::testing::ElementsAre(2, 3));
  EXPECT_THAT(t.strides(), ::testing::ElementsAre(3, 1));
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(askedTotal(), 6);
  // And without a hook, nothing is asked.
  setPythonMetadataHook(nullptr);
  EXPECT_THAT(t.sizes(), ::testing::ElementsAre(2, 3));
  EXPECT_EQ(askedTotal(), 6);
}

TEST_F(PythonMetadataTest, SizeAndStrideOfOneDimensionAskDimFirst) {
  Tensor t = custom(TensorImpl::kCustomSizes | TensorImpl::kCustomStrides);
  script_.record_order = true;
  EXPECT_EQ(t.size(0), 7);
  EXPECT_EQ(t.stride(-1), 7);
  EXPECT_EQ(script_.order, "dsdS");
  // A dim() that disagrees with the sizes answered is an Index error.
  script_.dim = 3;
  try {
    t.size(2);
    ADD_FAILURE() << "size(2) did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("answered sizes [7, 3] for a "
                                               "tensor of 3 dimensions"));
  }
}

TEST_F(PythonMetadataTest, HandlerErrorsReachTheReader) {
  script_.fail = true;
  Tensor t = custom(TensorImpl::kCustomStrides);
  EXPECT_THROW(t.strides(), Error);
  EXPECT_THROW(t.is_contiguous(), Error);
  EXPECT_THAT(t.sizes(), ::testing::ElementsAre(2, 3));  // not asked
  // The tensor is intact: a later answer is served.
  script_.fail = false;
  EXPECT_THAT(t.strides(), ::testing::ElementsAre(1, 7));
}

TEST_F(PythonMetadataTest, AnswersAreKeptPerTensorAndOutliveTheCall) {
  Tensor t = custom(TensorImpl::kCustomSizes | TensorImpl::kCustomStrides);
  IntArrayRef first = t.sizes();
  IntArrayRef strides = t.strides();
  IntArrayRef again = t.sizes();
  EXPECT_EQ(first.data(), again.data());  // one buffer per tensor
  EXPECT_NE(first.data(), strides.data());
  EXPECT_EQ(asked(PythonMetadata::kSizes), 2);  // asked each time
  // A new answer of the same length is written where the first one was.
  script_.sizes = {8, 4};
  EXPECT_THAT(t.sizes(), ::testing::ElementsAre(8, 4));
  EXPECT_THAT(first, ::testing::ElementsAre(8, 4));
  // One of another length is refused: `first` may still be in use.
  script_.sizes = {1, 2, 3};
  try {
    t.sizes();
    ADD_FAILURE() << "sizes() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("answered [8, 4] and now "
                                               "[1, 2, 3]"));
  }
  EXPECT_THAT(first, ::testing::ElementsAre(8, 4));
  // Another tensor has its own answers; the stored values never changed.
  Tensor u = custom(TensorImpl::kCustomSizes);
  script_.sizes = {5};
  EXPECT_THAT(u.sizes(), ::testing::ElementsAre(5));
  EXPECT_THAT(t.unsafeGetTensorImpl()->sizes_default(),
              ::testing::ElementsAre(2, 3));
  // Both caches are freed with their tensors (the asan build checks).
}

TEST_F(PythonMetadataTest, ConcurrentReadersShareOneCache) {
  Tensor t = custom(TensorImpl::kCustomSizes | TensorImpl::kCustomStrides);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([t, &wrong] {
      for (int j = 0; j < 2000; ++j) {
        IntArrayRef s = t.sizes();
        IntArrayRef st = t.strides();
        if (s.size() != 2 || s[0] != 7 || st.size() != 2 || st[1] != 7) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(asked(PythonMetadata::kSizes), 8000);
}

}  // namespace
}  // namespace turnout

#include "dispatcher/core/tensor.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <sstream>

#include "absl/strings/str_join.h"
#include "dispatcher/core/allocator.h"
#include "dispatcher/core/compute_dispatch_key.h"
#include "dispatcher/core/size_arithmetic.h"

namespace turnout {

void Tensor::throwUndefined(const char* caller) {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, caller,
                "() called on an undefined Tensor");
  __builtin_unreachable();
}

void Tensor::throwDataPtrType(ScalarType requested) const {
  TURNOUT_CHECK(false, ErrorKind::Type, "data_ptr<T>(): T is the C++ type of ",
                turnout::toString(requested), " but the tensor's dtype is ",
                turnout::toString(dtype()),
                "; use data_ptr() or the dtype's C++ type");
  __builtin_unreachable();
}

std::string Tensor::toString() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream out;
  out << "Tensor(sizes=[" << absl::StrJoin(sizes(), ", ")
      << "], dtype=" << dtype() << ", device=" << device();
  if (layout() != Layout::Strided) out << ", layout=" << layout();
  out << ")";
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  return out << t.toString();
}

namespace detail {
namespace {

void checkSizes(IntArrayRef sizes, const char* caller) {
  for (int64_t s : sizes) {
    TURNOUT_CHECK(s >= 0, ErrorKind::InvalidArgument, caller,
                  "(): sizes must be non-negative, got [",
                  absl::StrJoin(sizes, ", "), "]");
  }
}

void checkDtype(ScalarType dtype, const char* caller) {
  TURNOUT_CHECK(isValidScalarType(static_cast<int64_t>(dtype)) &&
                    dtype != ScalarType::Undefined,
                ErrorKind::InvalidArgument, caller, "(): dtype ",
                turnout::toString(dtype), " (", static_cast<int>(dtype),
                ") is not a tensor dtype");
}

// makeContiguousTensor's block: a new tensor's three counted parts, and the
// data of a small tensor, in one allocation. Each part is the usual class
// with a deallocation function that gives its share of the block back; the
// block is freed with the last share, so a storage or counter that outlives
// its first tensor (a view holds them) keeps the block's few hundred bytes
// until it goes.
//
// On the CPU the block's memory comes from the tensor's allocator (the
// caching allocator's per-thread lists: cheaper than new/delete), and data
// of at most kMaxInlineDataBytes lives in the block's tail, so that a small
// tensor costs one allocation in all. Elsewhere the block comes from new.
struct TensorBlock {
  // Data bytes a block may hold inline, and the tail reserved for them: the
  // data starts at the first kCPUAlignment boundary after the parts.
  static constexpr size_t kMaxInlineDataBytes = 64;
  static constexpr size_t kInlineTailBytes =
      kMaxInlineDataBytes + kCPUAlignment;

  explicit TensorBlock(DataPtr owner) : memory(std::move(owner)) {}

  DataPtr memory;  // owns the block itself
  std::atomic<int> parts{3};
  // Set by the tensor part as it goes, when it holds the only references
  // to the other two: then no other thread can reach the block, and the
  // three releases count down without a locked instruction each (~6 ns on
  // the project's VMs; a temporary tensor is nearly always this case).
  bool exclusive = false;
  alignas(TensorImpl) unsigned char tensor[sizeof(TensorImpl)];
  alignas(StorageImpl) unsigned char storage[sizeof(StorageImpl)];
  alignas(VersionCounter) unsigned char counter[sizeof(VersionCounter)];

  // A block, with the tail for inline data when `with_data`, when
  // `allocator` gives usable CPU memory; null otherwise (the caller then
  // uses new). Throws what the allocator throws.
  static TensorBlock* fromAllocator(Allocator* allocator, bool with_data) {
    const size_t size = sizeof(TensorBlock) + (with_data ? kInlineTailBytes : 0);
    DataPtr memory = allocator->allocate(size);
    void* p = memory.get();
    if (p == nullptr || memory.device().type() != DeviceType::CPU ||
        reinterpret_cast<uintptr_t>(p) % alignof(TensorBlock) != 0) {
      return nullptr;  // not memory this code may place objects in
    }
    return new (p) TensorBlock(std::move(memory));
  }
  static TensorBlock* fromNew() {
    void* p = ::operator new(sizeof(TensorBlock));
    return new (p)
        TensorBlock(DataPtr(p, p, &deleteRaw, Device(DeviceType::CPU)));
  }
  static void deleteRaw(void* p) { ::operator delete(p); }

  // The inline data's address (precondition: made with_data).
  void* inlineData() {
    const uintptr_t end = reinterpret_cast<uintptr_t>(this + 1);
    return reinterpret_cast<void*>((end + kCPUAlignment - 1) &
                                   ~uintptr_t{kCPUAlignment - 1});
  }

  void releasePart() noexcept {
    if (exclusive) {
      const int left = parts.load(std::memory_order_relaxed) - 1;
      parts.store(left, std::memory_order_relaxed);
      if (left != 0) return;
    } else if (parts.fetch_sub(1, std::memory_order_acq_rel) != 1) {
      // acq_rel as decref: every part's destruction happens before the
      // free.
      return;
    }
    DataPtr owned = std::move(memory);
    this->~TensorBlock();
    // `owned` frees the block as it goes.
  }
  static TensorBlock* of(void* part, size_t offset) {
    return reinterpret_cast<TensorBlock*>(static_cast<char*>(part) - offset);
  }
};

class BlockTensorImpl final : public TensorImpl {
 public:
  using TensorImpl::TensorImpl;
  ~BlockTensorImpl() override {
    // Runs before TensorImpl's members (the storage and the counter) go.
    // Holding the only reference to each of the block's other parts means
    // nobody else can reach the block: the releases need no atomics.
    TensorBlock* block = TensorBlock::of(this, offsetof(TensorBlock, tensor));
    const StorageImpl* storage = this->storage().unsafeGetStorageImpl();
    const VersionCounter* counter = version_counter().get();
    if (static_cast<const void*>(storage) == block->storage &&
        static_cast<const void*>(counter) == block->counter &&
        storage->refcount() == 1 && counter->refcount() == 1) {
      block->exclusive = true;
    }
  }
  static void operator delete(void* p) {
    TensorBlock::of(p, offsetof(TensorBlock, tensor))->releasePart();
  }
};

class BlockStorageImpl final : public StorageImpl {
 public:
  using StorageImpl::StorageImpl;
  static void operator delete(void* p) {
    TensorBlock::of(p, offsetof(TensorBlock, storage))->releasePart();
  }
};

class BlockVersionCounter final : public VersionCounter {
 public:
  static void operator delete(void* p) {
    TensorBlock::of(p, offsetof(TensorBlock, counter))->releasePart();
  }
};

static_assert(sizeof(BlockTensorImpl) == sizeof(TensorImpl) &&
                  sizeof(BlockStorageImpl) == sizeof(StorageImpl) &&
                  sizeof(BlockVersionCounter) == sizeof(VersionCounter),
              "the block's parts add no members");

}  // namespace

Tensor makeContiguousTensor(IntArrayRef sizes, size_t nbytes,
                            Allocator* allocator, ScalarType dtype,
                            Device device, DispatchKeySet key_set) {
  // The memory first: if it cannot be had, nothing was made.
  TensorBlock* block = nullptr;
  DataPtr data;
  if (device.type() == DeviceType::CPU) {
    const bool inline_data =
        nbytes > 0 && nbytes <= TensorBlock::kMaxInlineDataBytes;
    block = TensorBlock::fromAllocator(allocator, inline_data);
    if (block != nullptr && inline_data) {
      // Not owned: the block goes with the storage part, which holds it.
      data = DataPtr(block->inlineData(), Device(DeviceType::CPU));
    }
  }
  if (!data) {
    try {
      data = allocator->allocate(nbytes);
    } catch (...) {
      if (block != nullptr) {  // no part was made: give the block back
        DataPtr owned = std::move(block->memory);
        block->~TensorBlock();
      }
      throw;
    }
  }
  if (block == nullptr) block = TensorBlock::fromNew();
  auto counter = intrusive_ptr<VersionCounter>::reclaim_copy(
      new (block->counter) BlockVersionCounter);
  Storage storage(intrusive_ptr<StorageImpl>::reclaim_copy(
      new (block->storage) BlockStorageImpl(nbytes, std::move(data), allocator,
                                            /*resizable=*/true)));
  TensorImpl* impl = nullptr;
  try {
    impl = new (block->tensor)
        BlockTensorImpl(std::move(storage), dtype, device, Layout::Strided,
                        key_set, sizes, std::move(counter));
  } catch (...) {
    // The constructor's unwinding released the storage and counter parts;
    // this releases the part that was never made.
    block->releasePart();
    throw;
  }
  return Tensor(intrusive_ptr<TensorImpl, UndefinedTensorImpl>::reclaim_copy(impl));
}

Tensor makeEmptyTensor(IntArrayRef sizes, ScalarType dtype, Device device,
                       Layout layout) {
  checkSizes(sizes, "makeEmptyTensor");
  checkDtype(dtype, "makeEmptyTensor");
  // Fails early, naming the layout and device, before any allocation.
  computeDispatchKey(dtype, layout, device);

  Storage storage;
  Device tensor_device = device;
  if (layout == Layout::Strided) {
    // Named "empty": every new tensor of a kernel or factory comes here.
    const int64_t numel = checkedNumel(sizes, "empty");
    int64_t nbytes = 0;
    TURNOUT_CHECK(!__builtin_mul_overflow(
                      numel, static_cast<int64_t>(elementSize(dtype)), &nbytes),
                  ErrorKind::InvalidArgument, "empty(): ", numel,
                  " elements of sizes [", absl::StrJoin(sizes, ", "), "] of ",
                  turnout::toString(dtype), " need more than int64 bytes");
    Allocator* allocator = getAllocator(device.type());
    storage = Storage::allocate(static_cast<size_t>(nbytes), allocator,
                                /*resizable=*/true);
    const Device got = storage.device();
    // An allocator that records no index (Meta's) takes the requested one.
    TURNOUT_CHECK(
        got.type() == device.type() &&
            (!device.has_index() || !got.has_index() || got == device),
        ErrorKind::InvalidArgument, "makeEmptyTensor(): the ",
        toString(device.type()), " allocator returned memory on ", got,
        " for a tensor requested on ", device);
    tensor_device = got.has_index() ? got : device;
  }
  return Tensor(make_intrusive<TensorImpl, UndefinedTensorImpl>(
      std::move(storage), dtype, tensor_device, layout,
      TensorImpl::computeKeySet(dtype, layout, tensor_device), sizes));
}

Tensor makeTensorWithKeySet(DispatchKeySet key_set, IntArrayRef sizes,
                            ScalarType dtype, Device device) {
  checkSizes(sizes, "makeTensorWithKeySet");
  checkDtype(dtype, "makeTensorWithKeySet");
  auto impl = make_intrusive<TensorImpl, UndefinedTensorImpl>(
      Storage(), dtype, device, Layout::Strided, key_set);
  impl->set_sizes_contiguous(sizes);
  return Tensor(std::move(impl));
}

}  // namespace detail
}  // namespace turnout

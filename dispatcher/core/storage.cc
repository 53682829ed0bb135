#include "dispatcher/core/storage.h"

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

DataPtr allocateChecked(size_t nbytes, Allocator* allocator) {
  TURNOUT_CHECK(allocator != nullptr, ErrorKind::InvalidArgument,
                "StorageImpl(): allocator is null; pass one, e.g. "
                "getAllocator(DeviceType::CPU)");
  return allocator->allocate(nbytes);
}

// Out of line: building the message inline gave every new storage's
// constructor a large frame.
[[noreturn]] __attribute__((noinline, cold)) void
throwResizableWithoutAllocator() {
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument,
                "StorageImpl(): a resizable storage needs an allocator");
  __builtin_unreachable();
}

}  // namespace

StorageImpl::StorageImpl(size_t nbytes, Allocator* allocator, bool resizable)
    : StorageImpl(nbytes, allocateChecked(nbytes, allocator), allocator,
                  resizable) {}

StorageImpl::StorageImpl(size_t nbytes, DataPtr data_ptr, Allocator* allocator,
                         bool resizable)
    : data_ptr_(std::move(data_ptr)),
      nbytes_(nbytes),
      allocator_(allocator),
      resizable_(resizable) {
  if (__builtin_expect(resizable && allocator == nullptr, 0)) {
    throwResizableWithoutAllocator();
  }
}

}  // namespace turnout

// StorageImpl: the memory behind one or more tensors (a DataPtr, its size in
// bytes, the allocator it came from); Storage: a counted handle to one.
//
//   Storage s = Storage::allocate(64, getAllocator(DeviceType::CPU));
//   s.nbytes();                 // 64
//   s.device();                 // cpu
//   Storage t = s;              // same memory: t.is_alias_of(s)
//   s.use_count();              // 2
//
// Thread safety: Storage handles may be copied and dropped from any thread
// (the count is atomic). Reading a StorageImpl is safe from any thread;
// changing it (set_data_ptr, set_nbytes, set_resizable) needs the caller's
// own synchronization, as for any object.
#ifndef TURNOUT_DISPATCHER_CORE_STORAGE_H_
#define TURNOUT_DISPATCHER_CORE_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <utility>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/device.h"
#include "dispatcher/core/intrusive_ptr.h"

namespace turnout {

/// Invariant: data_ptr_ holds at least nbytes_ bytes (none on Meta).
class StorageImpl : public IntrusivePtrTarget {
 public:
  /// Allocates `nbytes` from `allocator` (not null; not owned, must outlive
  /// this storage when `resizable`).
  StorageImpl(size_t nbytes, Allocator* allocator, bool resizable);
  /// Adopts `data_ptr`, which must hold at least `nbytes` bytes. `allocator`
  /// may be null when the storage is not resizable.
  StorageImpl(size_t nbytes, DataPtr data_ptr, Allocator* allocator,
              bool resizable);

  size_t nbytes() const { return nbytes_; }
  /// Precondition: the data holds at least `nbytes` bytes.
  void set_nbytes(size_t nbytes) { nbytes_ = nbytes; }

  const void* data() const { return data_ptr_.get(); }
  void* mutable_data() { return data_ptr_.get(); }
  const DataPtr& data_ptr() const { return data_ptr_; }
  DataPtr& mutable_data_ptr() { return data_ptr_; }
  /// Installs `data_ptr` and returns the previous one (which still owns the
  /// old memory).
  DataPtr set_data_ptr(DataPtr&& data_ptr) {
    std::swap(data_ptr_, data_ptr);
    return std::move(data_ptr);
  }

  Device device() const { return data_ptr_.device(); }
  DeviceType device_type() const { return data_ptr_.device().type(); }
  /// The allocator it came from (null for adopted, non-resizable memory).
  Allocator* allocator() const { return allocator_; }
  bool resizable() const { return resizable_; }
  void set_resizable(bool resizable) { resizable_ = resizable; }

 private:
  DataPtr data_ptr_;
  size_t nbytes_;
  Allocator* allocator_;
  bool resizable_;
};

/// A counted reference to a StorageImpl, or undefined. The accessors other
/// than defined(), use_count() and is_alias_of() require defined().
class Storage {
 public:
  /// Undefined.
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}

  /// A new storage of `nbytes` bytes from `allocator` (c10's
  /// Storage(use_byte_size_t, ...)).
  static Storage allocate(size_t nbytes, Allocator* allocator,
                          bool resizable = false) {
    return Storage(make_intrusive<StorageImpl>(nbytes, allocator, resizable));
  }

  bool defined() const { return impl_.defined(); }
  explicit operator bool() const { return defined(); }

  size_t nbytes() const { return impl_->nbytes(); }
  const void* data() const { return impl_->data(); }
  void* mutable_data() const { return impl_->mutable_data(); }
  Device device() const { return impl_->device(); }
  DeviceType device_type() const { return impl_->device_type(); }
  Allocator* allocator() const { return impl_->allocator(); }
  bool resizable() const { return impl_->resizable(); }

  /// Number of handles (and tensors) sharing the storage; 0 if undefined.
  uint64_t use_count() const { return impl_.use_count(); }
  /// True when both refer to the same StorageImpl (and are defined).
  bool is_alias_of(const Storage& other) const {
    return defined() && impl_ == other.impl_;
  }

  StorageImpl* unsafeGetStorageImpl() const { return impl_.get(); }
  const intrusive_ptr<StorageImpl>& getIntrusivePtr() const { return impl_; }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_STORAGE_H_

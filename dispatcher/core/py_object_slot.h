// PyObjectSlot: the place in a TensorImpl where a language binding keeps the
// object it made for the tensor (turnout's Python bindings: the instance of a
// tensor subclass), so that a tensor handed back from C++ comes back as that
// same object. The dispatcher layer knows nothing of Python: to it the object
// is an opaque pointer, and releasing it is a function the binding installs.
//
//   // bindings, with the GIL held:
//   PyObjectSlot::setReleaser(&decrefWithGil);          // once, at import
//   impl->pyobj_slot().set(obj, /*owned=*/false);       // obj owns impl
//   ...                                                 // obj's last ref goes:
//   impl->pyobj_slot().set(obj, /*owned=*/true);        // impl now owns obj
//   // and the TensorImpl's destructor calls the releaser on obj.
//
// Ownership (PyTorch's PyObject preservation): at any time exactly one of the
// two keeps the other alive. While Python code can reach the object, the
// object holds a reference on the TensorImpl and the slot is not owned; when
// the object's last Python reference goes while C++ still holds the
// TensorImpl, the binding flips it: the slot owns one reference to the
// object and the object drops its reference on the TensorImpl. Whoever hands
// the tensor back to Python flips it again.
//
// Thread safety: set() and clear() are called only by the binding, under its
// lock (the GIL). The TensorImpl's destructor reads the slot without that
// lock: it runs after the last reference is dropped, and the acq_rel
// decrement of the reference count orders it after every earlier set().
#ifndef TURNOUT_DISPATCHER_CORE_PY_OBJECT_SLOT_H_
#define TURNOUT_DISPATCHER_CORE_PY_OBJECT_SLOT_H_

#include <atomic>

#include "dispatcher/core/error.h"

namespace turnout {

class PyObjectSlot {
 public:
  /// Drops the slot's reference to `obj`. Runs on whichever thread destroys
  /// the TensorImpl; it must take the binding's lock itself.
  using Releaser = void (*)(void* obj);

  PyObjectSlot() = default;
  PyObjectSlot(const PyObjectSlot&) = delete;
  PyObjectSlot& operator=(const PyObjectSlot&) = delete;
  /// Releases the object when the slot owns it.
  ~PyObjectSlot() {
    if (owned_) releaser_.load(std::memory_order_acquire)(obj_);
  }

  /// Installs the function that releases an owned object. Precondition: it
  /// is installed before the first set(obj, true), and never changed after.
  static void setReleaser(Releaser releaser) {
    releaser_.store(releaser, std::memory_order_release);
  }

  /// The binding's object, or null.
  void* get() const { return obj_; }
  /// True when the slot holds a reference on get().
  bool owned() const { return owned_; }
  /// Precondition: the binding's lock is held; `owned` only with a releaser
  /// installed.
  void set(void* obj, bool owned) {
    TURNOUT_INTERNAL_ASSERT(
        !owned || releaser_.load(std::memory_order_relaxed) != nullptr,
        "PyObjectSlot::set(obj, owned=true) before setReleaser()");
    obj_ = obj;
    owned_ = owned && obj != nullptr;
  }
  /// Forgets the object without releasing it. Precondition: as set().
  void clear() {
    obj_ = nullptr;
    owned_ = false;
  }

 private:
  // Defined in tensor_impl.cc, not inline: an inline variable would be one
  // copy per shared object (turnout._C is built -fvisibility=hidden), and
  // the runtime's destructor must see the releaser the binding installed.
  static std::atomic<Releaser> releaser_;
  void* obj_ = nullptr;
  bool owned_ = false;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_PY_OBJECT_SLOT_H_

// RegistrationHandleRAII: undoes one registration when destroyed.
//
//   RegistrationHandleRAII h = Dispatcher::singleton().registerDef(...);
//   ...
//   h = {};   // or let it go out of scope: the def is gone again
//
// Thread safety: a handle is owned by one thread; the undo itself takes the
// dispatcher's registry lock.
#ifndef TURNOUT_DISPATCHER_REGISTRATION_HANDLE_H_
#define TURNOUT_DISPATCHER_REGISTRATION_HANDLE_H_

#include <functional>
#include <utility>

namespace turnout {

class RegistrationHandleRAII {
 public:
  RegistrationHandleRAII() = default;
  explicit RegistrationHandleRAII(std::function<void()> on_destruction)
      : on_destruction_(std::move(on_destruction)) {}
  ~RegistrationHandleRAII() { reset(); }

  RegistrationHandleRAII(RegistrationHandleRAII&& other) noexcept
      : on_destruction_(std::exchange(other.on_destruction_, nullptr)) {}
  RegistrationHandleRAII& operator=(RegistrationHandleRAII&& other) noexcept {
    if (this != &other) {
      reset();
      on_destruction_ = std::exchange(other.on_destruction_, nullptr);
    }
    return *this;
  }
  RegistrationHandleRAII(const RegistrationHandleRAII&) = delete;
  RegistrationHandleRAII& operator=(const RegistrationHandleRAII&) = delete;

  /// Undoes the registration now (idempotent).
  void reset() {
    if (on_destruction_) std::exchange(on_destruction_, nullptr)();
  }
  /// True while the registration is in force.
  bool active() const { return static_cast<bool>(on_destruction_); }

 private:
  std::function<void()> on_destruction_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_REGISTRATION_HANDLE_H_

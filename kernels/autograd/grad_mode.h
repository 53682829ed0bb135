// GradMode: whether operators record autograd history on this thread.
//
//   {
//     NoGradGuard no_grad;     // like `with torch.no_grad():`
//     Tensor y = x * 2;        // y has no grad_fn
//   }
//
// Thread safety: thread-local; each thread starts with grad mode enabled.
#ifndef TURNOUT_KERNELS_AUTOGRAD_GRAD_MODE_H_
#define TURNOUT_KERNELS_AUTOGRAD_GRAD_MODE_H_

namespace turnout {
namespace autograd {

struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Sets grad mode for its lifetime, restoring the previous mode on exit.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : previous_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(previous_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool previous_;
};

/// Disables grad mode for its lifetime.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace autograd
}  // namespace turnout

#endif  // TURNOUT_KERNELS_AUTOGRAD_GRAD_MODE_H_

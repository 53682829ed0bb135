#include "kernels/autograd/grad_mode.h"

namespace turnout {
namespace autograd {
namespace {

// Stored negated so that zero-initialised thread storage means "enabled".
thread_local bool grad_disabled = false;

}  // namespace

bool GradMode::is_enabled() { return !grad_disabled; }
void GradMode::set_enabled(bool enabled) { grad_disabled = !enabled; }

}  // namespace autograd
}  // namespace turnout

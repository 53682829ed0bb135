#include "kernels/autograd/grad_mode.h"

#include "dispatcher/core/thread_local.h"

namespace turnout {
namespace autograd {
namespace {

// Stored negated so that zero-initialised thread storage means "enabled".
TURNOUT_THREAD_LOCAL bool grad_disabled = false;

}  // namespace

bool GradMode::is_enabled() { return !grad_disabled; }
void GradMode::set_enabled(bool enabled) { grad_disabled = !enabled; }

}  // namespace autograd
}  // namespace turnout

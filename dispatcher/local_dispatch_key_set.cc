#include "dispatcher/local_dispatch_key_set.h"

namespace turnout {
namespace detail {

TURNOUT_THREAD_LOCAL uint64_t local_included_xor = 0;
TURNOUT_THREAD_LOCAL uint64_t local_excluded_xor = 0;

}  // namespace detail

namespace {

DispatchKeySet withKey(DispatchKeySet ks, DispatchKey k, bool state) {
  uint64_t bits = DispatchKeySet(k).raw_repr();
  return DispatchKeySet(DispatchKeySet::RAW,
                        state ? ks.raw_repr() | bits : ks.raw_repr() & ~bits);
}

}  // namespace

void tls_set_dispatch_key_included(DispatchKey k, bool state) {
  LocalDispatchKeySet local = tls_local_dispatch_key_set();
  local.included_ = withKey(local.included_, k, state);
  _force_tls_local_dispatch_key_set(local);
}

void tls_set_dispatch_key_excluded(DispatchKey k, bool state) {
  LocalDispatchKeySet local = tls_local_dispatch_key_set();
  local.excluded_ = withKey(local.excluded_, k, state);
  _force_tls_local_dispatch_key_set(local);
}

bool tls_is_dispatch_key_included(DispatchKey k) {
  return tls_local_dispatch_key_set().included_.has(k);
}

bool tls_is_dispatch_key_excluded(DispatchKey k) {
  return tls_local_dispatch_key_set().excluded_.has(k);
}

bool tls_is_dispatch_keyset_included(DispatchKeySet ks) {
  return tls_local_dispatch_key_set().included_.has_all(ks);
}

bool tls_is_dispatch_keyset_excluded(DispatchKeySet ks) {
  return tls_local_dispatch_key_set().excluded_.has_all(ks);
}

}  // namespace turnout

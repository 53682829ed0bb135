// The thread-local include and exclude sets that every call folds into its
// key set: ks = (ks | included) - excluded. Exclusion wins over inclusion.
//
//   {
//     AutoDispatchBelowAutograd guard;      // autograd keys excluded here
//     op.call(x);                           // goes straight to the backend
//   }                                       // previous sets restored
//
//   LocalDispatchKeySet snapshot = tls_local_dispatch_key_set();
//   pool.submit([=] {
//     ForceDispatchKeyGuard guard(snapshot);  // same dispatch state there
//     ...
//   });
//
// Thread safety: every function acts on the calling thread's sets only.
// The defaults, as in c10: BackendSelect and ADInplaceOrView are included,
// the Autocast keys excluded.
#ifndef TURNOUT_DISPATCHER_LOCAL_DISPATCH_KEY_SET_H_
#define TURNOUT_DISPATCHER_LOCAL_DISPATCH_KEY_SET_H_

#include <cstdint>

#include "dispatcher/core/dispatch_key_set.h"
#include "dispatcher/core/thread_local.h"

namespace turnout {

/// A copy of one thread's include and exclude sets.
struct LocalDispatchKeySet {
  DispatchKeySet included_;
  DispatchKeySet excluded_;
};

/// Keys every thread includes unless told otherwise.
constexpr DispatchKeySet default_included_set = DispatchKeySet(
    {DispatchKey::BackendSelect, DispatchKey::ADInplaceOrView});
/// Keys every thread excludes unless told otherwise.
constexpr DispatchKeySet default_excluded_set = DispatchKeySet(
    {DispatchKey::AutocastCPU, DispatchKey::AutocastCUDA,
     DispatchKey::AutocastXPU, DispatchKey::AutocastHPU,
     DispatchKey::AutocastPrivateUse1});

/// The calling thread's sets. Cheap: two thread-local loads.
inline LocalDispatchKeySet tls_local_dispatch_key_set();
/// Replaces the calling thread's sets.
inline void _force_tls_local_dispatch_key_set(LocalDispatchKeySet key_set);

/// Adds (`state` true) or removes one key from the include / exclude set.
void tls_set_dispatch_key_included(DispatchKey k, bool state);
void tls_set_dispatch_key_excluded(DispatchKey k, bool state);
bool tls_is_dispatch_key_included(DispatchKey k);
bool tls_is_dispatch_key_excluded(DispatchKey k);
/// True when every key of `ks` is in the include / exclude set.
bool tls_is_dispatch_keyset_included(DispatchKeySet ks);
bool tls_is_dispatch_keyset_excluded(DispatchKeySet ks);

/// Adds `include` to the include set for its lifetime; on exit removes only
/// the keys it added. Guards must nest (destroy in reverse order).
class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet include);
  explicit IncludeDispatchKeyGuard(DispatchKey k)
      : IncludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ~IncludeDispatchKeyGuard();
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  uint64_t delta_;  // the bits this guard added
};

/// Adds `exclude` to the exclude set for its lifetime; on exit removes only
/// the keys it added.
class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet exclude);
  explicit ExcludeDispatchKeyGuard(DispatchKey k)
      : ExcludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ~ExcludeDispatchKeyGuard();
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  uint64_t delta_;
};

/// Excludes every autograd key: what an autograd kernel holds while it calls
/// the backend kernel below it.
class AutoDispatchBelowAutograd {
 public:
  AutoDispatchBelowAutograd() : guard_(autograd_dispatch_keyset) {}

 private:
  ExcludeDispatchKeyGuard guard_;
};

/// Installs a captured pair of sets for its lifetime and restores the
/// previous pair on exit: for work handed to another thread.
class ForceDispatchKeyGuard {
 public:
  explicit ForceDispatchKeyGuard(LocalDispatchKeySet key_set)
      : saved_(tls_local_dispatch_key_set()) {
    _force_tls_local_dispatch_key_set(key_set);
  }
  ForceDispatchKeyGuard(DispatchKeySet include, DispatchKeySet exclude)
      : ForceDispatchKeyGuard(LocalDispatchKeySet{include, exclude}) {}
  ~ForceDispatchKeyGuard() { _force_tls_local_dispatch_key_set(saved_); }
  ForceDispatchKeyGuard(const ForceDispatchKeyGuard&) = delete;
  ForceDispatchKeyGuard& operator=(const ForceDispatchKeyGuard&) = delete;

 private:
  LocalDispatchKeySet saved_;
};

// Implementation details.
namespace detail {

// Stored XOR'd with the defaults so that a new thread's zero-initialised
// storage already means "the defaults", with no constructor and no guard
// variable on the hot path. Two variables, not one struct: the compiler
// would merge an include guard's and an exclude guard's updates of adjacent
// words into one 16-byte access, chaining guards that are independent.
extern TURNOUT_THREAD_LOCAL uint64_t local_included_xor;
extern TURNOUT_THREAD_LOCAL uint64_t local_excluded_xor;

}  // namespace detail

inline LocalDispatchKeySet tls_local_dispatch_key_set() {
  return {DispatchKeySet(DispatchKeySet::RAW, detail::local_included_xor ^
                                                  default_included_set.raw_repr()),
          DispatchKeySet(DispatchKeySet::RAW, detail::local_excluded_xor ^
                                                  default_excluded_set.raw_repr())};
}

inline void _force_tls_local_dispatch_key_set(LocalDispatchKeySet key_set) {
  detail::local_included_xor =
      key_set.included_.raw_repr() ^ default_included_set.raw_repr();
  detail::local_excluded_xor =
      key_set.excluded_.raw_repr() ^ default_excluded_set.raw_repr();
}

inline IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet include) {
  uint64_t& raw = detail::local_included_xor;
  uint64_t current = raw ^ default_included_set.raw_repr();
  delta_ = include.raw_repr() & ~current;
  raw ^= delta_;  // sets exactly the delta bits
}

inline IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  uint64_t& raw = detail::local_included_xor;
  uint64_t current = raw ^ default_included_set.raw_repr();
  raw = (current & ~delta_) ^ default_included_set.raw_repr();
}

inline ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet exclude) {
  uint64_t& raw = detail::local_excluded_xor;
  uint64_t current = raw ^ default_excluded_set.raw_repr();
  delta_ = exclude.raw_repr() & ~current;
  raw ^= delta_;
}

inline ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() {
  uint64_t& raw = detail::local_excluded_xor;
  uint64_t current = raw ^ default_excluded_set.raw_repr();
  raw = (current & ~delta_) ^ default_excluded_set.raw_repr();
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_LOCAL_DISPATCH_KEY_SET_H_

#include "dispatcher/local_dispatch_key_set.h"

#include <thread>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(LocalDispatchKeySet, DefaultsOnEveryThread) {
  auto check = [] {
    LocalDispatchKeySet local = tls_local_dispatch_key_set();
    EXPECT_EQ(local.included_, default_included_set);
    EXPECT_EQ(local.excluded_, default_excluded_set);
    EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::BackendSelect));
    EXPECT_TRUE(tls_is_dispatch_key_excluded(DispatchKey::AutocastCPU));
  };
  check();
  std::thread t(check);
  t.join();
}

TEST(LocalDispatchKeySet, IncludeGuardRemovesOnlyWhatItAdded) {
  EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Python));
  {
    IncludeDispatchKeyGuard outer(DispatchKey::Python);
    EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Python));
    {
      IncludeDispatchKeyGuard inner(
          DispatchKeySet({DispatchKey::Python, DispatchKey::Tracer}));
      EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Tracer));
    }
    EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Python));
    EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Tracer));
  }
  EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Python));
  // A default key included again by a guard stays included afterwards.
  { IncludeDispatchKeyGuard g(DispatchKey::BackendSelect); }
  EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::BackendSelect));
}

TEST(LocalDispatchKeySet, AutoDispatchBelowAutogradExcludesAutograd) {
  {
    AutoDispatchBelowAutograd guard;
    EXPECT_TRUE(tls_is_dispatch_keyset_excluded(autograd_dispatch_keyset));
    EXPECT_TRUE(tls_is_dispatch_key_excluded(DispatchKey::AutogradCUDA));
  }
  EXPECT_FALSE(tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU));
  EXPECT_EQ(tls_local_dispatch_key_set().excluded_, default_excluded_set);
}

TEST(LocalDispatchKeySet, ForceGuardCarriesASnapshotToAnotherThread) {
  LocalDispatchKeySet snapshot;
  {
    IncludeDispatchKeyGuard inc(DispatchKey::Tracer);
    ExcludeDispatchKeyGuard exc(DispatchKey::Python);
    snapshot = tls_local_dispatch_key_set();
  }
  std::thread t([snapshot] {
    EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Tracer));
    {
      ForceDispatchKeyGuard guard(snapshot);
      EXPECT_TRUE(tls_is_dispatch_key_included(DispatchKey::Tracer));
      EXPECT_TRUE(tls_is_dispatch_key_excluded(DispatchKey::Python));
    }
    EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::Tracer));
    EXPECT_FALSE(tls_is_dispatch_key_excluded(DispatchKey::Python));
  });
  t.join();
}

TEST(LocalDispatchKeySet, SetAndQueryOneKey) {
  tls_set_dispatch_key_excluded(DispatchKey::Tracer, true);
  EXPECT_TRUE(tls_is_dispatch_key_excluded(DispatchKey::Tracer));
  tls_set_dispatch_key_excluded(DispatchKey::Tracer, false);
  EXPECT_FALSE(tls_is_dispatch_key_excluded(DispatchKey::Tracer));
  tls_set_dispatch_key_included(DispatchKey::ADInplaceOrView, false);
  EXPECT_FALSE(tls_is_dispatch_key_included(DispatchKey::ADInplaceOrView));
  tls_set_dispatch_key_included(DispatchKey::ADInplaceOrView, true);
  EXPECT_EQ(tls_local_dispatch_key_set().included_, default_included_set);
}

}  // namespace
}  // namespace turnout

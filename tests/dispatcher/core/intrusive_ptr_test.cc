#include "dispatcher/core/intrusive_ptr.h"

#include <atomic>
#include <thread>
#include <unordered_set>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

// Counts live objects so that tests can see exactly when one is destroyed.
struct Counted : IntrusivePtrTarget {
  explicit Counted(std::atomic<int>* live, int value = 0)
      : live(live), value(value) {
    ++*live;
  }
  ~Counted() override { --*live; }
  std::atomic<int>* live;
  int value;
};

struct Derived : Counted {
  using Counted::Counted;
};

TEST(IntrusivePtr, MakeIntrusiveOwnsOneReference) {
  std::atomic<int> live{0};
  {
    intrusive_ptr<Counted> p = make_intrusive<Counted>(&live, 7);
    EXPECT_TRUE(p.defined());
    EXPECT_EQ(p.use_count(), 1u);
    EXPECT_TRUE(p.unique());
    EXPECT_EQ(p->value, 7);
    EXPECT_EQ((*p).value, 7);
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, DefaultIsNull) {
  intrusive_ptr<Counted> p;
  EXPECT_FALSE(p.defined());
  EXPECT_FALSE(p);
  EXPECT_EQ(p.get(), nullptr);
  EXPECT_EQ(p.use_count(), 0u);
  intrusive_ptr<Counted> q = nullptr;
  EXPECT_EQ(p, q);
}

TEST(IntrusivePtr, CopyIncrementsMoveSteals) {
  std::atomic<int> live{0};
  intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
  intrusive_ptr<Counted> b = a;
  EXPECT_EQ(a.use_count(), 2u);
  EXPECT_EQ(a, b);
  intrusive_ptr<Counted> c = std::move(b);
  EXPECT_FALSE(b.defined());  // NOLINT: moved-from is null by contract
  EXPECT_EQ(a.use_count(), 2u);
  c = a;  // self-shared assignment
  EXPECT_EQ(a.use_count(), 2u);
  c = std::move(c);  // self-move keeps the object
  EXPECT_EQ(live, 1);
  c.reset();
  EXPECT_EQ(a.use_count(), 1u);
  a.reset();
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, AssignmentReleasesTheOldTarget) {
  std::atomic<int> live{0};
  intrusive_ptr<Counted> a = make_intrusive<Counted>(&live, 1);
  intrusive_ptr<Counted> b = make_intrusive<Counted>(&live, 2);
  EXPECT_EQ(live, 2);
  a = b;
  EXPECT_EQ(live, 1);
  EXPECT_EQ(a->value, 2);
  a = make_intrusive<Counted>(&live, 3);
  EXPECT_EQ(b.use_count(), 1u);
  EXPECT_EQ(live, 2);
}

TEST(IntrusivePtr, ReleaseAndReclaimHandOverOneReference) {
  std::atomic<int> live{0};
  intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
  Counted* raw = a.release();
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(raw->refcount(), 1u);
  EXPECT_EQ(live, 1);
  {
    intrusive_ptr<Counted> copy = intrusive_ptr<Counted>::reclaim_copy(raw);
    EXPECT_EQ(copy.use_count(), 2u);
  }
  EXPECT_EQ(raw->refcount(), 1u);
  intrusive_ptr<Counted> back = intrusive_ptr<Counted>::reclaim(raw);
  EXPECT_EQ(back.use_count(), 1u);
  back.reset();
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, DerivedConvertsToBase) {
  std::atomic<int> live{0};
  intrusive_ptr<Derived> d = make_intrusive<Derived>(&live, 5);
  intrusive_ptr<Counted> base = d;
  EXPECT_EQ(d.use_count(), 2u);
  intrusive_ptr<Counted> moved = std::move(d);
  EXPECT_EQ(base.use_count(), 2u);
  intrusive_ptr<Derived> back = static_intrusive_pointer_cast<Derived>(moved);
  EXPECT_EQ(back->value, 5);
  EXPECT_EQ(back.use_count(), 3u);  // base, moved, back
  intrusive_ptr<IntrusivePtrTarget> erased = back;
  EXPECT_EQ(erased.use_count(), 4u);
}

TEST(IntrusivePtr, HashAndEqualityFollowTheTarget) {
  std::atomic<int> live{0};
  intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
  intrusive_ptr<Counted> b = a;
  intrusive_ptr<Counted> c = make_intrusive<Counted>(&live);
  std::unordered_set<intrusive_ptr<Counted>> set = {a, b, c};
  EXPECT_EQ(set.size(), 2u);
  EXPECT_NE(a, c);
}

// A null value that is an object, as UndefinedTensorImpl is for TensorImpl.
struct Sentinel : IntrusivePtrTarget {
  static Sentinel instance;
  static constexpr Sentinel* singleton() { return &instance; }
};
Sentinel Sentinel::instance;

TEST(IntrusivePtr, SingletonNullIsNeverCounted) {
  intrusive_ptr<Sentinel, Sentinel> p;
  EXPECT_EQ(p.get(), &Sentinel::instance);
  EXPECT_FALSE(p.defined());
  {
    intrusive_ptr<Sentinel, Sentinel> q = p;
    intrusive_ptr<Sentinel, Sentinel> r = std::move(q);
  }
  EXPECT_EQ(Sentinel::instance.refcount(), 0u);
  EXPECT_EQ(p.use_count(), 0u);
  auto made = make_intrusive<Sentinel, Sentinel>();
  EXPECT_TRUE(made.defined());
  EXPECT_EQ(made.use_count(), 1u);
  // Converting a singleton null to a nullptr-null type gives nullptr.
  intrusive_ptr<IntrusivePtrTarget> erased = p;
  EXPECT_EQ(erased.get(), nullptr);
  EXPECT_EQ(Sentinel::instance.refcount(), 0u);
}

TEST(IntrusivePtr, ConcurrentCopiesDestroyExactlyOnce) {
  std::atomic<int> live{0};
  intrusive_ptr<Counted> shared = make_intrusive<Counted>(&live);
  constexpr int kThreads = 8;
  constexpr int kIterations = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([copy = shared]() mutable {
      for (int i = 0; i < kIterations; ++i) {
        intrusive_ptr<Counted> a = copy;
        intrusive_ptr<Counted> b = std::move(a);
        EXPECT_GE(b.use_count(), 2u);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared.use_count(), 1u);
  shared.reset();
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, LastReferenceDroppedOnAnotherThreadSeesWrites) {
  // The object's final write happens on one thread and its destructor runs
  // on whichever thread drops the last reference: acq_rel on the decrement
  // makes this race-free (TSan checks it).
  for (int round = 0; round < 100; ++round) {
    std::atomic<int> live{0};
    intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
    intrusive_ptr<Counted> b = a;
    std::thread t([p = std::move(b)]() mutable {
      p->value = 42;
      p.reset();
    });
    a.reset();
    t.join();
    EXPECT_EQ(live, 0);
  }
}

}  // namespace
}  // namespace turnout

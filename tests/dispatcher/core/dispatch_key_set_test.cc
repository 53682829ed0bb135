#include "dispatcher/core/dispatch_key_set.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(DispatchKeySet, RuntimeKeyIsFunctionalityPlusBackend) {
  DispatchKeySet ks(DispatchKey::AutogradCUDA);
  EXPECT_TRUE(ks.has(DispatchKey::AutogradFunctionality));
  EXPECT_TRUE(ks.has_backend(BackendComponent::CUDABit));
  EXPECT_TRUE(ks.has(DispatchKey::AutogradCUDA));
  EXPECT_FALSE(ks.has(DispatchKey::AutogradCPU));
  EXPECT_FALSE(ks.has(DispatchKey::CUDA));
}

TEST(DispatchKeySet, RemoveKeepsBackendBits) {
  DispatchKeySet ks({DispatchKey::CPU, DispatchKey::AutogradCPU});
  DispatchKeySet without = ks.remove(DispatchKey::AutogradCPU);
  EXPECT_EQ(without, DispatchKeySet(DispatchKey::CPU));
  EXPECT_TRUE(without.has_backend(BackendComponent::CPUBit));
  EXPECT_EQ(ks - DispatchKeySet(DispatchKey::AutogradCPU),
            DispatchKeySet(DispatchKey::CPU));
  EXPECT_TRUE(ks.remove_backend(BackendComponent::CPUBit)
                  .has(DispatchKey::AutogradFunctionality));
}

TEST(DispatchKeySet, HighestPriorityTypeId) {
  struct Case {
    std::vector<DispatchKey> keys;
    DispatchKey expected;
  };
  const std::vector<Case> cases = {
      {{}, DispatchKey::Undefined},
      {{DispatchKey::CPU}, DispatchKey::CPU},
      {{DispatchKey::CPU, DispatchKey::AutogradCPU}, DispatchKey::AutogradCPU},
      // Python sits below autograd, as in c10.
      {{DispatchKey::CPU, DispatchKey::AutogradCPU, DispatchKey::Python},
       DispatchKey::AutogradCPU},
      {{DispatchKey::CPU, DispatchKey::Python}, DispatchKey::Python},
      {{DispatchKey::CPU, DispatchKey::Meta}, DispatchKey::Meta},
      {{DispatchKey::CPU, DispatchKey::CUDA}, DispatchKey::CUDA},
      {{DispatchKey::QuantizedCPU, DispatchKey::CPU}, DispatchKey::QuantizedCPU},
      {{DispatchKey::BackendSelect, DispatchKey::CPU},
       DispatchKey::BackendSelect},
      {{DispatchKey::PythonDispatcher, DispatchKey::Tracer},
       DispatchKey::PythonDispatcher},
  };
  for (const Case& c : cases) {
    DispatchKeySet ks;
    for (DispatchKey k : c.keys) ks = ks.add(k);
    SCOPED_TRACE(toString(ks));
    EXPECT_EQ(ks.highestPriorityTypeId(), c.expected);
  }
}

TEST(DispatchKeySet, ToStringInC10Form) {
  EXPECT_EQ(toString(DispatchKeySet()), "DispatchKeySet()");
  EXPECT_EQ(toString(DispatchKeySet({DispatchKey::AutogradCPU,
                                     DispatchKey::CPU})),
            "DispatchKeySet(CPU, AutogradCPU)");
  EXPECT_EQ(toString(DispatchKeySet({DispatchKey::CPU, DispatchKey::CUDA,
                                     DispatchKey::ADInplaceOrView})),
            "DispatchKeySet(CPU, CUDA, ADInplaceOrView)");
}

TEST(DispatchKeySet, IterationVisitsEveryRuntimeKeyLowestFirst) {
  DispatchKeySet ks({DispatchKey::Python, DispatchKey::CPU,
                     DispatchKey::AutogradCUDA, DispatchKey::FPGA});
  std::vector<DispatchKey> seen(ks.begin(), ks.end());
  // The backend bits {CPU, CUDA} apply to both per-backend functionalities.
  std::vector<DispatchKey> expected = {
      DispatchKey::CPU,         DispatchKey::CUDA,
      DispatchKey::FPGA,        DispatchKey::Python,
      DispatchKey::AutogradCPU, DispatchKey::AutogradCUDA};
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(DispatchKeySet().begin(), DispatchKeySet().end());
}

TEST(DispatchKeySet, FullAfterHoldsLowerPrioritiesOnly) {
  DispatchKeySet after(DispatchKeySet::FULL_AFTER, DispatchKey::AutogradCPU);
  EXPECT_FALSE(after.has(DispatchKey::AutogradCPU));
  EXPECT_TRUE(after.has(DispatchKey::Python));
  EXPECT_TRUE(after.has(DispatchKey::ADInplaceOrView));
  EXPECT_TRUE(after.has(DispatchKey::CPU));
  EXPECT_TRUE(after.has(DispatchKey::CUDA));
  EXPECT_FALSE(after.has(DispatchKey::Tracer));
  DispatchKeySet full(DispatchKeySet::FULL);
  for (DispatchKey k : full) EXPECT_TRUE(isRuntimeDispatchKey(k));
}

TEST(DispatchKeySet, TableIndicesAreDistinctAndInRange) {
  std::set<int> seen;
  int runtime_keys = 0;
  for (int i = 0; i <= static_cast<int>(DispatchKey::EndOfRuntimeBackendKeys);
       ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (!isRuntimeDispatchKey(k)) continue;
    ++runtime_keys;
    int index = getDispatchTableIndexForDispatchKey(k);
    SCOPED_TRACE(toString(k));
    EXPECT_GE(index, 0);
    EXPECT_LT(index, kNumRuntimeEntries);
    EXPECT_TRUE(seen.insert(index).second) << "index " << index << " reused";
  }
  // Plus one "no backend" slot per per-backend functionality.
  EXPECT_EQ(runtime_keys + kNumPerBackendFunctionalities, kNumRuntimeEntries);
}

TEST(DispatchKeySet, IndexOfASetIsIndexOfItsHighestKey) {
  DispatchKeySet ks({DispatchKey::CPU, DispatchKey::AutogradCPU,
                     DispatchKey::ADInplaceOrView});
  EXPECT_EQ(ks.getDispatchTableIndexForDispatchKeySet(),
            getDispatchTableIndexForDispatchKey(DispatchKey::AutogradCPU));
  EXPECT_EQ(DispatchKeySet().getDispatchTableIndexForDispatchKeySet(), 0);
}

TEST(DispatchKeySet, HasAnyNeedsAFunctionalityMatch) {
  DispatchKeySet cpu(DispatchKey::CPU);
  EXPECT_TRUE(cpu.has_any(DispatchKeySet(DispatchKey::CPU)));
  EXPECT_FALSE(cpu.has_any(DispatchKeySet(DispatchKey::AutogradCPU)));
  EXPECT_FALSE(cpu.has_any(DispatchKeySet(DispatchKey::CUDA)));
  EXPECT_TRUE(cpu.has_any(backend_dispatch_keyset));
  EXPECT_FALSE(cpu.has_any(autograd_dispatch_keyset));
}

TEST(DispatchKeySet, AliasKeysCoverTheirRuntimeKeys) {
  struct Case {
    DispatchKey alias;
    DispatchKey key;
    bool expected;
  };
  const Case cases[] = {
      {DispatchKey::Autograd, DispatchKey::AutogradCPU, true},
      {DispatchKey::Autograd, DispatchKey::AutogradOther, true},
      {DispatchKey::Autograd, DispatchKey::CPU, false},
      {DispatchKey::CompositeExplicitAutograd, DispatchKey::CPU, true},
      {DispatchKey::CompositeExplicitAutograd, DispatchKey::Meta, true},
      {DispatchKey::CompositeExplicitAutograd, DispatchKey::SparseCPU, true},
      {DispatchKey::CompositeExplicitAutograd, DispatchKey::AutogradCPU, false},
      {DispatchKey::CompositeImplicitAutograd, DispatchKey::CPU, true},
      {DispatchKey::CompositeImplicitAutograd, DispatchKey::AutogradCUDA, true},
      {DispatchKey::CompositeImplicitAutograd, DispatchKey::Python, false},
      {DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::CPU,
       true},
      {DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::Meta,
       true},
      {DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::XLA,
       false},
      {DispatchKey::CompositeExplicitAutogradNonFunctional,
       DispatchKey::QuantizedLazy, false},
      {DispatchKey::CompositeExplicitAutogradNonFunctional,
       DispatchKey::QuantizedCPU, true},
      {DispatchKey::CompositeImplicitAutograd, DispatchKey::NestedTensorCPU,
       true},
      {DispatchKey::CompositeExplicitAutograd, DispatchKey::NestedTensorCPU,
       false},
      {DispatchKey::CompositeExplicitAutogradNonFunctional,
       DispatchKey::SparseCPU, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(toString(c.alias)) + " / " + toString(c.key));
    EXPECT_EQ(runtimeDispatchKeySetHas(c.alias, c.key), c.expected);
  }
}

TEST(DispatchKeySet, BackendKeysOfAutogradKeys) {
  DispatchKeySet cuda = getBackendKeySetFromAutograd(DispatchKey::AutogradCUDA);
  // As c10's: the dense backend only (SparseCUDA is under AutogradOther).
  EXPECT_EQ(cuda, DispatchKeySet(DispatchKey::CUDA));
  EXPECT_TRUE(getBackendKeySetFromAutograd(DispatchKey::AutogradOther)
                  .has(DispatchKey::SparseCUDA));
  EXPECT_TRUE(getBackendKeySetFromAutograd(DispatchKey::AutogradOther)
                  .has(DispatchKey::FPGA));
  EXPECT_EQ(getAutogradRelatedKeySetFromBackend(BackendComponent::CPUBit),
            DispatchKeySet(
                {DispatchKey::AutogradCPU, DispatchKey::ADInplaceOrView}));
}

}  // namespace
}  // namespace turnout

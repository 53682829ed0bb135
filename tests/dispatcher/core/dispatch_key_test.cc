#include "dispatcher/core/dispatch_key.h"

#include <string>

#include "dispatcher/core/error.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(DispatchKey, EveryValidKeyRoundTripsThroughItsName) {
  int valid = 0;
  for (int i = 0; i <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++i) {
    auto k = static_cast<DispatchKey>(i);
    if (!isValidDispatchKey(k)) continue;
    ++valid;
    SCOPED_TRACE(toString(k));
    EXPECT_EQ(parseDispatchKey(toString(k)), k);
  }
  // Undefined + functionality keys + 5 x 15 runtime keys + 6 alias keys.
  EXPECT_EQ(valid, 1 + kNumFunctionalityKeys + 5 * kNumBackends + 6);
}

TEST(DispatchKey, UnknownNameIsAnError) {
  try {
    parseDispatchKey("CPUU");
    FAIL() << "expected a throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_EQ(e.message(), "could not parse dispatch key: CPUU");
  }
  EXPECT_THROW(parseDispatchKey("StartOfDenseBackends"), Error);
  EXPECT_THROW(parseDispatchKey(""), Error);
}

TEST(DispatchKey, RuntimeKeyNames) {
  struct Case {
    DispatchKey key;
    const char* name;
  };
  const Case cases[] = {
      {DispatchKey::CPU, "CPU"},
      {DispatchKey::CUDA, "CUDA"},
      {DispatchKey::Meta, "Meta"},
      {DispatchKey::QuantizedCPU, "QuantizedCPU"},
      {DispatchKey::SparseCUDA, "SparseCUDA"},
      {DispatchKey::NestedTensorCPU, "NestedTensorCPU"},
      {DispatchKey::AutogradCPU, "AutogradCPU"},
      {DispatchKey::AutogradPrivateUse1, "AutogradPrivateUse1"},
      {DispatchKey::AutogradMeta, "AutogradMeta"},
      {DispatchKey::CompositeImplicitAutograd, "CompositeImplicitAutograd"},
      {DispatchKey::PythonDispatcher, "PythonDispatcher"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_STREQ(toString(c.key), c.name);
  }
}

TEST(DispatchKey, FunctionalityAndBackendOfRuntimeKeys) {
  struct Case {
    DispatchKey key;
    DispatchKey functionality;
    BackendComponent backend;
  };
  const Case cases[] = {
      {DispatchKey::CPU, DispatchKey::Dense, BackendComponent::CPUBit},
      {DispatchKey::Meta, DispatchKey::Dense, BackendComponent::MetaBit},
      {DispatchKey::QuantizedCUDA, DispatchKey::Quantized,
       BackendComponent::CUDABit},
      {DispatchKey::SparseXLA, DispatchKey::Sparse, BackendComponent::XLABit},
      {DispatchKey::AutogradPrivateUse1, DispatchKey::AutogradFunctionality,
       BackendComponent::PrivateUse1Bit},
      {DispatchKey::Python, DispatchKey::Python, BackendComponent::InvalidBit},
      {DispatchKey::Autograd, DispatchKey::Undefined,
       BackendComponent::InvalidBit},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(toString(c.key));
    EXPECT_EQ(toFunctionalityKey(c.key), c.functionality);
    EXPECT_EQ(toBackendComponent(c.key), c.backend);
    if (c.backend != BackendComponent::InvalidBit) {
      EXPECT_EQ(toRuntimePerBackendFunctionalityKey(c.functionality, c.backend),
                c.key);
    }
  }
  EXPECT_EQ(getAutogradKeyFromBackend(BackendComponent::CUDABit),
            DispatchKey::AutogradCUDA);
  EXPECT_EQ(getAutogradKeyFromBackend(BackendComponent::InvalidBit),
            DispatchKey::AutogradOther);
}

TEST(DispatchKey, Classification) {
  EXPECT_TRUE(isAliasDispatchKey(DispatchKey::Autograd));
  EXPECT_TRUE(isAliasDispatchKey(DispatchKey::CompositeExplicitAutograd));
  EXPECT_TRUE(
      isAliasDispatchKey(DispatchKey::CompositeExplicitAutogradNonFunctional));
  EXPECT_FALSE(isAliasDispatchKey(DispatchKey::AutogradCPU));
  EXPECT_FALSE(isAliasDispatchKey(DispatchKey::AutogradMeta));
  EXPECT_TRUE(isPerBackendFunctionalityKey(DispatchKey::Dense));
  EXPECT_TRUE(isPerBackendFunctionalityKey(DispatchKey::AutogradFunctionality));
  EXPECT_FALSE(isPerBackendFunctionalityKey(DispatchKey::CPU));
  EXPECT_FALSE(isPerBackendFunctionalityKey(DispatchKey::Python));
  EXPECT_TRUE(isRuntimeDispatchKey(DispatchKey::CPU));
  EXPECT_TRUE(isRuntimeDispatchKey(DispatchKey::Python));
  EXPECT_FALSE(isRuntimeDispatchKey(DispatchKey::Dense));
  EXPECT_FALSE(isRuntimeDispatchKey(DispatchKey::StartOfSparseBackends));
  EXPECT_FALSE(isRuntimeDispatchKey(DispatchKey::Autograd));
}

}  // namespace
}  // namespace turnout

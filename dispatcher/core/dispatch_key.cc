#include "dispatcher/core/dispatch_key.h"

#include <array>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "dispatcher/core/error.h"

namespace turnout {
namespace {

constexpr DispatchKey kPerBackendStarts[] = {
    DispatchKey::StartOfDenseBackends,
    DispatchKey::StartOfQuantizedBackends,
    DispatchKey::StartOfSparseBackends,
    DispatchKey::StartOfNestedTensorBackends,
    DispatchKey::StartOfAutogradFunctionalityBackends,
};
constexpr DispatchKey kPerBackendFunctionalities[] = {
    DispatchKey::Dense,
    DispatchKey::Quantized,
    DispatchKey::Sparse,
    DispatchKey::NestedTensor,
    DispatchKey::AutogradFunctionality,
};

// Which per-backend functionality a runtime key belongs to: the index into
// kPerBackendStarts, or -1.
int perBackendGroup(DispatchKey k) {
  if (!isRuntimePerBackendKey(k)) return -1;
  for (int g = kNumPerBackendFunctionalities - 1; g >= 0; --g) {
    if (k > kPerBackendStarts[g]) return g;
  }
  return -1;
}

}  // namespace

bool isValidDispatchKey(DispatchKey k) {
  if (k <= DispatchKey::EndOfFunctionalityKeys) {
    return k != DispatchKey::EndOfFunctionalityKeys;
  }
  return isRuntimePerBackendKey(k) || isAliasDispatchKey(k);
}

DispatchKey toFunctionalityKey(DispatchKey k) {
  if (isFunctionalityKey(k)) return k;
  int g = perBackendGroup(k);
  return g < 0 ? DispatchKey::Undefined : kPerBackendFunctionalities[g];
}

BackendComponent toBackendComponent(DispatchKey k) {
  int g = perBackendGroup(k);
  if (g < 0) return BackendComponent::InvalidBit;
  return static_cast<BackendComponent>(static_cast<int>(k) -
                                       static_cast<int>(kPerBackendStarts[g]));
}

DispatchKey toRuntimePerBackendFunctionalityKey(DispatchKey functionality,
                                                BackendComponent backend) {
  TURNOUT_INTERNAL_ASSERT(backend != BackendComponent::InvalidBit,
                          "no backend for ", toString(functionality));
  for (int g = 0; g < kNumPerBackendFunctionalities; ++g) {
    if (kPerBackendFunctionalities[g] == functionality) {
      return static_cast<DispatchKey>(static_cast<int>(kPerBackendStarts[g]) +
                                      static_cast<int>(backend));
    }
  }
  TURNOUT_INTERNAL_ASSERT(false, toString(functionality),
                          " is not a per-backend functionality");
}

DispatchKey getAutogradKeyFromBackend(BackendComponent backend) {
  if (backend == BackendComponent::InvalidBit) return DispatchKey::AutogradOther;
  return toRuntimePerBackendFunctionalityKey(DispatchKey::AutogradFunctionality,
                                             backend);
}

DispatchKey toDenseKey(BackendComponent backend) {
  return toRuntimePerBackendFunctionalityKey(DispatchKey::Dense, backend);
}

const char* toString(BackendComponent b) {
  switch (b) {
    case BackendComponent::InvalidBit:
      return "InvalidBit";
#define TURNOUT_CASE(n)      \
  case BackendComponent::n##Bit: \
    return #n "Bit";
      TURNOUT_FORALL_BACKEND_COMPONENTS(TURNOUT_CASE)
#undef TURNOUT_CASE
  }
  return "UNKNOWN_BACKEND_BIT";
}

const char* toString(DispatchKey k) {
  switch (k) {
#define TURNOUT_CASE(n) \
  case DispatchKey::n:  \
    return #n;
    TURNOUT_CASE(Undefined)
    TURNOUT_CASE(Dense)
    TURNOUT_CASE(FPGA)
    TURNOUT_CASE(Vulkan)
    TURNOUT_CASE(Metal)
    TURNOUT_CASE(Quantized)
    TURNOUT_CASE(CustomRNGKeyId)
    TURNOUT_CASE(MkldnnCPU)
    TURNOUT_CASE(Sparse)
    TURNOUT_CASE(SparseCsrCPU)
    TURNOUT_CASE(SparseCsrCUDA)
    TURNOUT_CASE(NestedTensor)
    TURNOUT_CASE(BackendSelect)
    TURNOUT_CASE(Python)
    TURNOUT_CASE(Fake)
    TURNOUT_CASE(FuncTorchDynamicLayerBackMode)
    TURNOUT_CASE(Functionalize)
    TURNOUT_CASE(Named)
    TURNOUT_CASE(Conjugate)
    TURNOUT_CASE(Negative)
    TURNOUT_CASE(ZeroTensor)
    TURNOUT_CASE(ADInplaceOrView)
    TURNOUT_CASE(AutogradOther)
    TURNOUT_CASE(AutogradFunctionality)
    TURNOUT_CASE(AutogradNestedTensor)
    TURNOUT_CASE(Tracer)
    TURNOUT_CASE(AutocastCPU)
    TURNOUT_CASE(AutocastXPU)
    TURNOUT_CASE(AutocastHPU)
    TURNOUT_CASE(AutocastCUDA)
    TURNOUT_CASE(AutocastPrivateUse1)
    TURNOUT_CASE(FuncTorchBatched)
    TURNOUT_CASE(FuncTorchVmapMode)
    TURNOUT_CASE(Batched)
    TURNOUT_CASE(VmapMode)
    TURNOUT_CASE(FuncTorchGradWrapper)
    TURNOUT_CASE(DeferredInit)
    TURNOUT_CASE(PythonTLSSnapshot)
    TURNOUT_CASE(FuncTorchDynamicLayerFrontMode)
    TURNOUT_CASE(TESTING_ONLY_GenericWrapper)
    TURNOUT_CASE(TESTING_ONLY_GenericMode)
    TURNOUT_CASE(PreDispatch)
    TURNOUT_CASE(PythonDispatcher)
    TURNOUT_CASE(EndOfFunctionalityKeys)
    TURNOUT_CASE(StartOfDenseBackends)
    TURNOUT_CASE(StartOfQuantizedBackends)
    TURNOUT_CASE(StartOfSparseBackends)
    TURNOUT_CASE(StartOfNestedTensorBackends)
    TURNOUT_CASE(StartOfAutogradFunctionalityBackends)
    TURNOUT_CASE(Autograd)
    TURNOUT_CASE(CompositeImplicitAutograd)
    TURNOUT_CASE(FuncTorchBatchedDecomposition)
    TURNOUT_CASE(CompositeImplicitAutogradNestedTensor)
    TURNOUT_CASE(CompositeExplicitAutograd)
    TURNOUT_CASE(CompositeExplicitAutogradNonFunctional)
#define TURNOUT_PER_BACKEND_CASE(n, prefix) TURNOUT_CASE(prefix##n)
    TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_PER_BACKEND_CASE, )
    TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_PER_BACKEND_CASE, Quantized)
    TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_PER_BACKEND_CASE, Sparse)
    TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_PER_BACKEND_CASE,
                                           NestedTensor)
    TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_PER_BACKEND_CASE, Autograd)
#undef TURNOUT_PER_BACKEND_CASE
#undef TURNOUT_CASE
  }
  return "UNKNOWN_TENSOR_TYPE_ID";
}

std::ostream& operator<<(std::ostream& out, DispatchKey k) {
  return out << toString(k);
}

std::ostream& operator<<(std::ostream& out, BackendComponent b) {
  return out << toString(b);
}

DispatchKey parseDispatchKey(std::string_view name) {
  static const auto* const kByName = [] {
    auto* map = new absl::flat_hash_map<std::string, DispatchKey>();
    for (int i = 0; i <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++i) {
      auto k = static_cast<DispatchKey>(i);
      if (isValidDispatchKey(k)) map->emplace(toString(k), k);
    }
    map->emplace("CatchAll", DispatchKey::CatchAll);
    return map;
  }();
  auto it = kByName->find(std::string(name));
  TURNOUT_CHECK(it != kByName->end(), ErrorKind::InvalidArgument,
                "could not parse dispatch key: ", name);
  return it->second;
}

}  // namespace turnout

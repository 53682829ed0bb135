// DispatchKey: the names of everything a kernel can be registered for.
//
// Keys follow c10's structure and spelling, so a PyTorch user reads them the
// same way:
//   - a BackendComponent names a device family (CPU, CUDA, ..., Meta);
//   - a functionality key names a layer of behaviour (Dense, Autograd..., Python,
//     Tracer, ...), lower enumerators having lower priority;
//   - five functionalities are "per backend" (Dense, Quantized, Sparse,
//     NestedTensor, AutogradFunctionality): combined with a backend they give
//     runtime keys such as CPU, QuantizedCPU, SparseCUDA, AutogradCPU;
//   - alias keys (Autograd, CompositeImplicitAutograd, ...) stand for a set of
//     runtime keys and exist only at registration.
//
//   DispatchKey k = parseDispatchKey("AutogradCUDA");
//   toFunctionalityKey(k);   // DispatchKey::AutogradFunctionality
//   toBackendComponent(k);   // BackendComponent::CUDABit
//   toString(k);             // "AutogradCUDA"
//
// Everything here is constexpr or a pure function: thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_H_
#define TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace turnout {

// The backend components, lowest priority first. Meta is last, as in c10, so a
// Meta tensor mixed with any other dispatches to Meta.
#define TURNOUT_FORALL_BACKEND_COMPONENTS(_) \
  _(CPU)                                     \
  _(CUDA)                                    \
  _(HIP)                                     \
  _(XLA)                                     \
  _(MPS)                                     \
  _(IPU)                                     \
  _(XPU)                                     \
  _(HPU)                                     \
  _(VE)                                      \
  _(Lazy)                                    \
  _(MTIA)                                    \
  _(PrivateUse1)                             \
  _(PrivateUse2)                             \
  _(PrivateUse3)                             \
  _(Meta)

/// A device family. `InvalidBit` is "no backend"; the others occupy the low
/// bits of a DispatchKeySet, bit (value - 1).
enum class BackendComponent : uint8_t {
  InvalidBit = 0,
#define TURNOUT_DEFINE_BACKEND_BIT(n) n##Bit,
  TURNOUT_FORALL_BACKEND_COMPONENTS(TURNOUT_DEFINE_BACKEND_BIT)
#undef TURNOUT_DEFINE_BACKEND_BIT
  EndOfBackendKeys = MetaBit,
};

#define TURNOUT_DEFINE_PER_BACKEND_KEY(n, prefix) prefix##n,
#define TURNOUT_DEFINE_PER_BACKEND_KEYS(fullname, prefix)                  \
  StartOf##fullname##Backends,                                              \
      TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(TURNOUT_DEFINE_PER_BACKEND_KEY, \
                                             prefix)                        \
          EndOf##fullname##Backends = prefix##Meta,

#define TURNOUT_FORALL_BACKEND_COMPONENTS_WITH(_, extra) \
  _(CPU, extra)                                          \
  _(CUDA, extra)                                         \
  _(HIP, extra)                                          \
  _(XLA, extra)                                          \
  _(MPS, extra)                                          \
  _(IPU, extra)                                          \
  _(XPU, extra)                                          \
  _(HPU, extra)                                          \
  _(VE, extra)                                           \
  _(Lazy, extra)                                         \
  _(MTIA, extra)                                         \
  _(PrivateUse1, extra)                                  \
  _(PrivateUse2, extra)                                  \
  _(PrivateUse3, extra)                                  \
  _(Meta, extra)

/// Every key: functionality keys (lowest priority first), then the runtime
/// keys of the per-backend functionalities, then the alias keys.
enum class DispatchKey : uint16_t {
  Undefined = 0,
  CatchAll = Undefined,

  // Functionality keys, lowest priority first. Their order is c10's.
  Dense,  // per backend: CPU, CUDA, ...
  FPGA,
  Vulkan,
  Metal,
  Quantized,  // per backend: QuantizedCPU, ...
  CustomRNGKeyId,
  MkldnnCPU,
  Sparse,  // per backend: SparseCPU, ...
  SparseCsrCPU,
  SparseCsrCUDA,
  NestedTensor,  // per backend: NestedTensorCPU, ...
  BackendSelect,
  Python,
  Fake,
  FuncTorchDynamicLayerBackMode,
  Functionalize,
  Named,
  Conjugate,
  Negative,
  ZeroTensor,
  ADInplaceOrView,
  AutogradOther,
  AutogradFunctionality,  // per backend: AutogradCPU, ...
  AutogradNestedTensor,
  Tracer,
  AutocastCPU,
  AutocastXPU,
  AutocastHPU,
  AutocastCUDA,
  AutocastPrivateUse1,
  FuncTorchBatched,
  FuncTorchVmapMode,
  Batched,
  VmapMode,
  FuncTorchGradWrapper,
  DeferredInit,
  PythonTLSSnapshot,
  FuncTorchDynamicLayerFrontMode,
  TESTING_ONLY_GenericWrapper,
  TESTING_ONLY_GenericMode,
  PreDispatch,
  PythonDispatcher,
  EndOfFunctionalityKeys,

  // Runtime keys of the per-backend functionalities: StartOfXBackends + the
  // BackendComponent's value.
  TURNOUT_DEFINE_PER_BACKEND_KEYS(Dense, )
  TURNOUT_DEFINE_PER_BACKEND_KEYS(Quantized, Quantized)
  TURNOUT_DEFINE_PER_BACKEND_KEYS(Sparse, Sparse)
  TURNOUT_DEFINE_PER_BACKEND_KEYS(NestedTensor, NestedTensor)
  TURNOUT_DEFINE_PER_BACKEND_KEYS(AutogradFunctionality, Autograd)

  EndOfRuntimeBackendKeys = EndOfAutogradFunctionalityBackends,

  // Alias keys: registration only, each stands for a set of runtime keys.
  Autograd,
  CompositeImplicitAutograd,
  FuncTorchBatchedDecomposition,
  CompositeImplicitAutogradNestedTensor,
  CompositeExplicitAutograd,
  CompositeExplicitAutogradNonFunctional,
  EndOfAliasKeys = CompositeExplicitAutogradNonFunctional,
};

#undef TURNOUT_DEFINE_PER_BACKEND_KEY
#undef TURNOUT_DEFINE_PER_BACKEND_KEYS

/// Number of backend components (CPU .. Meta).
constexpr int kNumBackends = static_cast<int>(BackendComponent::EndOfBackendKeys);
/// Number of functionality keys (Dense .. PythonDispatcher), Undefined excluded.
constexpr int kNumFunctionalityKeys =
    static_cast<int>(DispatchKey::EndOfFunctionalityKeys) - 1;
/// Number of per-backend functionalities (Dense, Quantized, Sparse,
/// NestedTensor, AutogradFunctionality).
constexpr int kNumPerBackendFunctionalities = 5;
/// Size of an operator's dispatch table: slot 0 for Undefined, one slot for
/// each other functionality, and 1 + kNumBackends slots for each per-backend
/// functionality (the first for "no backend bit set").
constexpr int kNumRuntimeEntries =
    1 + (kNumFunctionalityKeys - kNumPerBackendFunctionalities) +
    kNumPerBackendFunctionalities * (1 + kNumBackends);

static_assert(kNumBackends + kNumFunctionalityKeys <= 64,
              "backend and functionality bits must fit in 64 bits");

// ---- Classification --------------------------------------------------------

/// True for Dense, Quantized, Sparse, NestedTensor, AutogradFunctionality.
constexpr bool isPerBackendFunctionalityKey(DispatchKey k) {
  return k == DispatchKey::Dense || k == DispatchKey::Quantized ||
         k == DispatchKey::Sparse || k == DispatchKey::NestedTensor ||
         k == DispatchKey::AutogradFunctionality;
}

/// True for Undefined and the functionality keys (Dense .. PythonDispatcher).
constexpr bool isFunctionalityKey(DispatchKey k) {
  return k < DispatchKey::EndOfFunctionalityKeys;
}

/// True for the alias keys (Autograd, CompositeImplicitAutograd, ...).
constexpr bool isAliasDispatchKey(DispatchKey k) {
  return k > DispatchKey::EndOfRuntimeBackendKeys &&
         k <= DispatchKey::EndOfAliasKeys;
}

/// True for a runtime key of a per-backend functionality (CPU, AutogradCUDA).
constexpr bool isRuntimePerBackendKey(DispatchKey k) {
  return k > DispatchKey::EndOfFunctionalityKeys &&
         k <= DispatchKey::EndOfRuntimeBackendKeys &&
         k != DispatchKey::StartOfDenseBackends &&
         k != DispatchKey::StartOfQuantizedBackends &&
         k != DispatchKey::StartOfSparseBackends &&
         k != DispatchKey::StartOfNestedTensorBackends &&
         k != DispatchKey::StartOfAutogradFunctionalityBackends;
}

/// True for every key a table has a slot for: Undefined, the functionality
/// keys other than the per-backend ones, and the per-backend runtime keys.
constexpr bool isRuntimeDispatchKey(DispatchKey k) {
  return (isFunctionalityKey(k) && !isPerBackendFunctionalityKey(k)) ||
         isRuntimePerBackendKey(k);
}

/// True for the names parseDispatchKey accepts: every key other than the
/// StartOf...Backends placeholders.
bool isValidDispatchKey(DispatchKey k);

// ---- Conversion between runtime keys and their parts -------------------------

/// The functionality of a key: CPU -> Dense, AutogradCPU ->
/// AutogradFunctionality; functionality keys map to themselves; alias keys
/// and placeholders to Undefined.
DispatchKey toFunctionalityKey(DispatchKey k);

/// The backend of a runtime per-backend key (QuantizedCUDA -> CUDABit), else
/// InvalidBit.
BackendComponent toBackendComponent(DispatchKey k);

/// The runtime key of a per-backend functionality on a backend:
/// (AutogradFunctionality, CUDABit) -> AutogradCUDA. Precondition:
/// isPerBackendFunctionalityKey(functionality) and backend != InvalidBit.
DispatchKey toRuntimePerBackendFunctionalityKey(DispatchKey functionality,
                                                BackendComponent backend);

/// The Autograd key of a backend: CUDABit -> AutogradCUDA; InvalidBit ->
/// AutogradOther.
DispatchKey getAutogradKeyFromBackend(BackendComponent backend);

/// The Dense key of a backend: CUDABit -> CUDA.
DispatchKey toDenseKey(BackendComponent backend);

// ---- Names -----------------------------------------------------------------

/// c10's name of a key: "CPU", "AutogradCUDA", "CompositeImplicitAutograd".
const char* toString(DispatchKey k);
/// "CPUBit", "MetaBit", ...
const char* toString(BackendComponent b);
std::ostream& operator<<(std::ostream& out, DispatchKey k);
std::ostream& operator<<(std::ostream& out, BackendComponent b);

/// Inverse of toString for every valid key. Throws turnout::Error
/// (InvalidArgument) "could not parse dispatch key: NAME" otherwise.
DispatchKey parseDispatchKey(std::string_view name);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_H_

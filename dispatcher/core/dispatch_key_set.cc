#include "dispatcher/core/dispatch_key_set.h"

#include <string>

namespace turnout {
namespace {

constexpr DispatchKeySet kAllBackends(DispatchKeySet::RAW,
                                      DispatchKeySet::kBackendMask);

}  // namespace

const DispatchKeySet autograd_dispatch_keyset =
    DispatchKeySet({DispatchKey::AutogradFunctionality,
                    DispatchKey::AutogradOther,
                    DispatchKey::AutogradNestedTensor}) |
    kAllBackends;

// The backends that have no autograd key of their own and use AutogradOther.
// Quantized and Sparse are listed too, as c10 does: a kernel for them next to
// a CompositeImplicitAutograd kernel makes AutogradOther ambiguous.
const DispatchKeySet autogradother_backends =
    DispatchKeySet({DispatchKey::FPGA, DispatchKey::Vulkan, DispatchKey::Metal,
                    DispatchKey::CustomRNGKeyId, DispatchKey::MkldnnCPU,
                    DispatchKey::SparseCsrCPU, DispatchKey::SparseCsrCUDA,
                    DispatchKey::Sparse, DispatchKey::Quantized}) |
    kAllBackends;

const DispatchKeySet backend_dispatch_keyset =
    autogradother_backends | DispatchKeySet(DispatchKey::Dense);

// As c10's: a CompositeImplicitAutograd kernel serves the NestedTensor keys
// too (CompositeExplicitAutograd does not).
const DispatchKeySet math_dispatch_keyset =
    backend_dispatch_keyset | autograd_dispatch_keyset |
    (DispatchKeySet(DispatchKey::NestedTensor) | kAllBackends);

// As c10's: every backend but the sparse ones and the functional backends
// (XLA, Lazy), which want the functional decomposition instead.
const DispatchKeySet non_functional_backend_dispatch_keyset =
    backend_dispatch_keyset.remove(DispatchKey::Sparse)
        .remove_backend(BackendComponent::XLABit)
        .remove_backend(BackendComponent::LazyBit);

DispatchKey DispatchKeySet::highestPriorityTypeId() const {
  DispatchKey f = highestFunctionalityKey();
  if (!isPerBackendFunctionalityKey(f)) return f;
  BackendComponent b = highestBackendKey();
  if (b == BackendComponent::InvalidBit) return f;
  return toRuntimePerBackendFunctionalityKey(f, b);
}

DispatchKey DispatchKeySet::iterator::operator*() const {
  auto f = static_cast<DispatchKey>(functionality_);
  if (!isPerBackendFunctionalityKey(f)) return f;
  return toRuntimePerBackendFunctionalityKey(
      f, static_cast<BackendComponent>(backend_));
}

void DispatchKeySet::iterator::advance() {
  auto f = static_cast<DispatchKey>(functionality_);
  if (isPerBackendFunctionalityKey(f) && backend_ != 0) {
    ++backend_;
    if (backend_ <= kNumBackends) return;
  }
  ++functionality_;
  backend_ = 0;
}

// Moves forward to the first key present at or after the current position.
void DispatchKeySet::iterator::settle() {
  while (functionality_ <= kNumFunctionalityKeys) {
    auto f = static_cast<DispatchKey>(functionality_);
    if (repr_ & functionalityBit(f)) {
      if (!isPerBackendFunctionalityKey(f)) return;
      if (backend_ == 0) backend_ = 1;
      while (backend_ <= kNumBackends &&
             !(repr_ & backendBit(static_cast<BackendComponent>(backend_)))) {
        ++backend_;
      }
      if (backend_ <= kNumBackends) return;
    }
    ++functionality_;
    backend_ = 0;
  }
  functionality_ = kNumFunctionalityKeys + 1;
  backend_ = 0;
}

std::string toString(DispatchKeySet ks) {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (DispatchKey k : ks) {
    if (!first) out += ", ";
    first = false;
    out += toString(k);
  }
  out += ")";
  return out;
}

std::ostream& operator<<(std::ostream& out, DispatchKeySet ks) {
  return out << toString(ks);
}

DispatchKeySet getRuntimeDispatchKeySet(DispatchKey k) {
  switch (k) {
    case DispatchKey::Autograd:
      return autograd_dispatch_keyset;
    case DispatchKey::CompositeImplicitAutograd:
      return math_dispatch_keyset;
    case DispatchKey::CompositeImplicitAutogradNestedTensor:
      return DispatchKeySet({DispatchKey::NestedTensor,
                             DispatchKey::AutogradNestedTensor}) |
             kAllBackends;
    case DispatchKey::CompositeExplicitAutograd:
      return backend_dispatch_keyset;
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return non_functional_backend_dispatch_keyset;
    case DispatchKey::FuncTorchBatchedDecomposition:
      return DispatchKeySet(DispatchKey::FuncTorchBatched);
    default:
      return DispatchKeySet(k);
  }
}

bool runtimeDispatchKeySetHas(DispatchKey alias, DispatchKey k) {
  if (k == DispatchKey::Undefined) return false;
  return getRuntimeDispatchKeySet(alias).has(k);
}

DispatchKeySet getBackendKeySetFromAutograd(DispatchKey k) {
  if (k == DispatchKey::AutogradOther) return autogradother_backends;
  if (k == DispatchKey::AutogradNestedTensor) {
    return DispatchKeySet(DispatchKey::NestedTensor) | kAllBackends;
  }
  if (toFunctionalityKey(k) != DispatchKey::AutogradFunctionality) {
    return DispatchKeySet();
  }
  // As c10's: the dense backend only. Its Quantized / Sparse keys stand
  // behind AutogradOther, whose set has them.
  return DispatchKeySet(DispatchKey::Dense) |
         DispatchKeySet(toBackendComponent(k));
}

DispatchKeySet getAutogradRelatedKeySetFromBackend(BackendComponent b) {
  return DispatchKeySet(
      {getAutogradKeyFromBackend(b), DispatchKey::ADInplaceOrView});
}

int getDispatchTableIndexForDispatchKey(DispatchKey k) {
  return DispatchKeySet(k).getDispatchTableIndexForDispatchKeySet();
}

}  // namespace turnout

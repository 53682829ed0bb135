// DispatchKeySet: a set of dispatch keys in one 64-bit word.
//
// The low kNumBackends bits are backend components (CPU .. Meta); the bits
// above them are functionalities (Dense .. PythonDispatcher), priority rising
// with the bit. A runtime per-backend key such as AutogradCUDA is the pair
// (functionality bit AutogradFunctionality, backend bit CUDA), so
// {CPU, AutogradCUDA} also "has" AutogradCPU and CUDA: as in c10, a tensor
// has exactly one backend and the cross product is harmless.
//
//   DispatchKeySet ks({DispatchKey::CPU, DispatchKey::AutogradCPU});
//   ks.highestPriorityTypeId();      // AutogradCPU
//   (ks - DispatchKeySet(DispatchKey::AutogradFunctionality))
//       .highestPriorityTypeId();    // CPU
//   toString(ks);                    // "DispatchKeySet(CPU, AutogradCPU)"
//
// A value type; everything is constexpr or inline, and thread-safe.
#ifndef TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_SET_H_
#define TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_SET_H_

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <string>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/error.h"

namespace turnout {
namespace detail {

// Per functionality index (0 = Undefined): the first table slot of the
// functionality, and the backend bits that select within its slots (all of
// them for a per-backend functionality, none otherwise).
struct OffsetAndMask {
  uint16_t offset;
  uint64_t backend_mask;
};

struct OffsetsAndMasks {
  OffsetAndMask entries[kNumFunctionalityKeys + 1];
};

constexpr OffsetsAndMasks makeOffsetsAndMasks() {
  OffsetsAndMasks table{};
  table.entries[0] = {0, 0};
  uint16_t next = 1;
  for (int f = 1; f <= kNumFunctionalityKeys; ++f) {
    if (isPerBackendFunctionalityKey(static_cast<DispatchKey>(f))) {
      table.entries[f] = {next, (uint64_t{1} << kNumBackends) - 1};
      next += 1 + kNumBackends;
    } else {
      table.entries[f] = {next, 0};
      next += 1;
    }
  }
  return table;
}

inline constexpr OffsetsAndMasks kOffsetsAndMasks = makeOffsetsAndMasks();
static_assert(kOffsetsAndMasks.entries[kNumFunctionalityKeys].offset + 1 ==
                  kNumRuntimeEntries,
              "the last functionality must end the table");

}  // namespace detail

class DispatchKeySet {
 public:
  enum Full { FULL };
  enum FullAfter { FULL_AFTER };
  enum Raw { RAW };

  /// The empty set.
  constexpr DispatchKeySet() = default;
  /// Every key.
  constexpr explicit DispatchKeySet(Full) : repr_(kFullMask) {}
  /// Every key of lower priority than `k`'s functionality, with every backend
  /// (c10's FULL_AFTER): what a kernel at `k` redispatches with.
  constexpr DispatchKeySet(FullAfter, DispatchKey k)
      : repr_(((functionalityBit(toFunctionalityKeyConstexpr(k)) - 1) &
               ~kBackendMask & kFullMask) |
              kBackendMask) {}
  /// The set whose representation is `bits`.
  constexpr DispatchKeySet(Raw, uint64_t bits) : repr_(bits) {}
  /// The set of one backend component.
  constexpr explicit DispatchKeySet(BackendComponent b)
      : repr_(b == BackendComponent::InvalidBit ? 0 : backendBit(b)) {}
  /// The set of one key: a functionality key is its bit; a runtime
  /// per-backend key is its functionality bit and its backend bit. An alias
  /// key is an error (use getRuntimeDispatchKeySet).
  constexpr DispatchKeySet(DispatchKey k) : repr_(bitsOf(k)) {}  // NOLINT
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> keys) {
    for (DispatchKey k : keys) repr_ |= bitsOf(k);
  }
  constexpr DispatchKeySet(std::initializer_list<BackendComponent> backends) {
    for (BackendComponent b : backends) repr_ |= DispatchKeySet(b).repr_;
  }

  // ---- Set algebra ---------------------------------------------------------
  constexpr DispatchKeySet operator|(DispatchKeySet o) const {
    return DispatchKeySet(RAW, repr_ | o.repr_);
  }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const {
    return DispatchKeySet(RAW, repr_ & o.repr_);
  }
  /// Removes `o`'s functionality bits only: backend bits stay, as in c10,
  /// so {CPU, AutogradCPU} - AutogradCPU == {CPU}.
  constexpr DispatchKeySet operator-(DispatchKeySet o) const {
    return DispatchKeySet(RAW, repr_ & ~(o.repr_ & ~kBackendMask));
  }
  constexpr DispatchKeySet operator^(DispatchKeySet o) const {
    return DispatchKeySet(RAW, repr_ ^ o.repr_);
  }
  constexpr bool operator==(DispatchKeySet o) const { return repr_ == o.repr_; }
  constexpr bool operator!=(DispatchKeySet o) const { return repr_ != o.repr_; }

  /// Adds `k` (both bits of a runtime per-backend key).
  constexpr DispatchKeySet add(DispatchKey k) const {
    return *this | DispatchKeySet(k);
  }
  constexpr DispatchKeySet add(DispatchKeySet ks) const { return *this | ks; }
  /// Removes `k`'s functionality bit, keeping the backend bits.
  constexpr DispatchKeySet remove(DispatchKey k) const {
    return *this - DispatchKeySet(k);
  }
  /// Removes a backend bit.
  constexpr DispatchKeySet remove_backend(BackendComponent b) const {
    return DispatchKeySet(RAW, repr_ & ~DispatchKeySet(b).repr_);
  }

  // ---- Queries -------------------------------------------------------------
  /// For a runtime per-backend key: both its bits. Otherwise: its bit.
  constexpr bool has(DispatchKey k) const { return has_all(DispatchKeySet(k)); }
  constexpr bool has_backend(BackendComponent b) const {
    return has_all(DispatchKeySet(b));
  }
  constexpr bool has_all(DispatchKeySet ks) const {
    return (repr_ & ks.repr_) == ks.repr_;
  }
  /// True when the sets share a key. Backend bits of `ks` count only
  /// together with one of its functionality bits, as in c10.
  constexpr bool has_any(DispatchKeySet ks) const {
    uint64_t f = ks.repr_ & ~kBackendMask;
    uint64_t b = ks.repr_ & kBackendMask;
    if (f == 0) return (repr_ & b) != 0;
    if ((repr_ & f) == 0) return false;
    return b == 0 || (repr_ & b) != 0;
  }
  constexpr bool empty() const { return repr_ == 0; }
  constexpr uint64_t raw_repr() const { return repr_; }
  /// True when no functionality bit is set.
  constexpr bool emptyFunctionality() const {
    return (repr_ & ~kBackendMask) == 0;
  }

  /// The highest functionality key in the set, or Undefined.
  DispatchKey highestFunctionalityKey() const {
    int f = functionalityIndex();
    return static_cast<DispatchKey>(f);
  }
  /// The highest backend component in the set, or InvalidBit.
  BackendComponent highestBackendKey() const {
    return static_cast<BackendComponent>(backendIndex(kBackendMask));
  }
  /// The runtime key a call with this set dispatches to: the highest
  /// functionality, combined with the highest backend when it is a
  /// per-backend functionality (c10's highestPriorityTypeId).
  DispatchKey highestPriorityTypeId() const;

  /// The slot of this set's highest runtime key in an operator's table, in
  /// [0, kNumRuntimeEntries). Branch-free: two bit scans and one table load.
  int getDispatchTableIndexForDispatchKeySet() const {
    int f = functionalityIndex();
    const detail::OffsetAndMask& om = detail::kOffsetsAndMasks.entries[f];
    return om.offset + backendIndex(om.backend_mask);
  }

  // ---- Iteration -----------------------------------------------------------
  /// Iterates the runtime keys of the set from lowest to highest priority,
  /// as c10 does: each non-per-backend functionality once, each per-backend
  /// functionality once for every backend bit.
  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = DispatchKey;
    using difference_type = std::ptrdiff_t;
    using pointer = const DispatchKey*;
    using reference = DispatchKey;

    iterator(uint64_t repr, int functionality, int backend)
        : repr_(repr), functionality_(functionality), backend_(backend) {
      settle();
    }
    DispatchKey operator*() const;
    iterator& operator++() {
      advance();
      settle();
      return *this;
    }
    bool operator==(const iterator& o) const {
      return functionality_ == o.functionality_ && backend_ == o.backend_;
    }
    bool operator!=(const iterator& o) const { return !(*this == o); }

   private:
    void advance();
    void settle();
    uint64_t repr_;
    int functionality_;  // 1..kNumFunctionalityKeys, or past the end
    int backend_;        // 1..kNumBackends for per-backend functionalities
  };
  iterator begin() const { return iterator(repr_, 1, 0); }
  iterator end() const { return iterator(0, kNumFunctionalityKeys + 1, 0); }

  // ---- Bit layout (used by tables and tests) --------------------------------
  static constexpr uint64_t kBackendMask = (uint64_t{1} << kNumBackends) - 1;
  static constexpr uint64_t kFullMask =
      (uint64_t{1} << (kNumBackends + kNumFunctionalityKeys)) - 1;

 private:
  static constexpr uint64_t backendBit(BackendComponent b) {
    return uint64_t{1} << (static_cast<int>(b) - 1);
  }
  static constexpr uint64_t functionalityBit(DispatchKey f) {
    return f == DispatchKey::Undefined
               ? 0
               : uint64_t{1} << (kNumBackends + static_cast<int>(f) - 1);
  }
  static constexpr DispatchKey toFunctionalityKeyConstexpr(DispatchKey k) {
    if (k < DispatchKey::EndOfFunctionalityKeys) return k;
    if (k > DispatchKey::StartOfAutogradFunctionalityBackends)
      return DispatchKey::AutogradFunctionality;
    if (k > DispatchKey::StartOfNestedTensorBackends)
      return DispatchKey::NestedTensor;
    if (k > DispatchKey::StartOfSparseBackends) return DispatchKey::Sparse;
    if (k > DispatchKey::StartOfQuantizedBackends) return DispatchKey::Quantized;
    return DispatchKey::Dense;
  }
  static constexpr uint64_t bitsOf(DispatchKey k) {
    if (k <= DispatchKey::EndOfFunctionalityKeys) {
      return k == DispatchKey::EndOfFunctionalityKeys ? 0 : functionalityBit(k);
    }
    if (isRuntimePerBackendKey(k)) {
      return functionalityBit(toFunctionalityKeyConstexpr(k)) |
             backendBit(toBackendComponentConstexpr(k));
    }
    // Alias keys and placeholders have no bits. An alias key here is a
    // caller's mistake in a registration path (those check first); on the
    // call path this function is only used with runtime keys.
    return 0;
  }
  static constexpr BackendComponent toBackendComponentConstexpr(DispatchKey k) {
    DispatchKey start = DispatchKey::StartOfDenseBackends;
    if (k > DispatchKey::StartOfAutogradFunctionalityBackends)
      start = DispatchKey::StartOfAutogradFunctionalityBackends;
    else if (k > DispatchKey::StartOfNestedTensorBackends)
      start = DispatchKey::StartOfNestedTensorBackends;
    else if (k > DispatchKey::StartOfSparseBackends)
      start = DispatchKey::StartOfSparseBackends;
    else if (k > DispatchKey::StartOfQuantizedBackends)
      start = DispatchKey::StartOfQuantizedBackends;
    return static_cast<BackendComponent>(static_cast<int>(k) -
                                         static_cast<int>(start));
  }

  // Index of the highest functionality bit (1-based), 0 when none. The "| 1"
  // makes the scan well defined on an empty set without a branch.
  int functionalityIndex() const {
    return 63 - __builtin_clzll((repr_ >> (kNumBackends - 1)) | 1);
  }
  // Index of the highest backend bit under `mask` (1-based), 0 when none.
  int backendIndex(uint64_t mask) const {
    return 63 - __builtin_clzll(((repr_ & mask) << 1) | 1);
  }

  uint64_t repr_ = 0;
};

/// "DispatchKeySet(CPU, AutogradCPU)", c10's form.
std::string toString(DispatchKeySet ks);
std::ostream& operator<<(std::ostream& out, DispatchKeySet ks);

// ---- Alias keys and key groups ----------------------------------------------

/// The runtime keys an alias key stands for; for a runtime key, the set of
/// that key. Autograd -> every AutogradX key, AutogradOther,
/// AutogradNestedTensor; CompositeExplicitAutograd -> every backend key;
/// CompositeImplicitAutograd -> both, and the NestedTensor keys;
/// CompositeExplicitAutogradNonFunctional -> the backend keys other than the
/// Sparse ones and those of the functional backends XLA and Lazy (as c10).
DispatchKeySet getRuntimeDispatchKeySet(DispatchKey k);
/// True when runtime key `k` is one of the keys of alias `alias`.
bool runtimeDispatchKeySetHas(DispatchKey alias, DispatchKey k);

/// The backend keys an autograd key stands in front of, as c10's:
/// AutogradCUDA -> {CUDA}; AutogradOther -> the backends without an autograd
/// key of their own (FPGA, Vulkan, ..., the Quantized and Sparse keys);
/// AutogradNestedTensor -> the NestedTensor keys.
DispatchKeySet getBackendKeySetFromAutograd(DispatchKey k);
/// {AutogradX, ADInplaceOrView} for backend X.
DispatchKeySet getAutogradRelatedKeySetFromBackend(BackendComponent b);

/// Sets of keys, with every backend bit where they are per backend.
extern const DispatchKeySet autograd_dispatch_keyset;
extern const DispatchKeySet autogradother_backends;
extern const DispatchKeySet backend_dispatch_keyset;
extern const DispatchKeySet math_dispatch_keyset;
extern const DispatchKeySet non_functional_backend_dispatch_keyset;
/// The runtime table slot of a runtime key.
int getDispatchTableIndexForDispatchKey(DispatchKey k);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CORE_DISPATCH_KEY_SET_H_

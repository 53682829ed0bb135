// CppSignature: the C++ function type of an unboxed kernel, as the callers of
// TypedOperatorHandle<Sig> must spell it (a leading DispatchKeySet removed).
//
//   CppSignature s = CppSignature::make<Tensor(const Tensor&, int64_t)>();
//   s.name();   // "turnout::Tensor (turnout::Tensor const&, long)"
//
// Thread safety: a value type.
#ifndef TURNOUT_DISPATCHER_CPP_SIGNATURE_H_
#define TURNOUT_DISPATCHER_CPP_SIGNATURE_H_

#include <string>
#include <typeindex>

#include "dispatcher/boxing.h"
#include "dispatcher/fallback_filter.h"

namespace turnout {

class CppSignature {
 public:
  /// The signature of function type `FuncType`, with a leading
  /// DispatchKeySet parameter removed.
  template <class FuncType>
  static CppSignature make() {
    using Sig = typename detail::RemoveKeySetArg<FuncType>::type;
    return CppSignature(std::type_index(typeid(Sig)),
                        detail::unboxedFilteredFallbackEntry<Sig>());
  }

  /// The demangled C++ type.
  std::string name() const;
  /// The unboxed entry point of a filtered backend fallback for this
  /// signature (detail::UnboxedFilteredFallback<Sig>::call).
  void* unboxedFilteredFallback() const { return filtered_fallback_; }

  bool operator==(const CppSignature& o) const { return type_ == o.type_; }
  bool operator!=(const CppSignature& o) const { return type_ != o.type_; }

 private:
  CppSignature(std::type_index type, void* filtered_fallback)
      : type_(type), filtered_fallback_(filtered_fallback) {}
  std::type_index type_;
  void* filtered_fallback_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CPP_SIGNATURE_H_

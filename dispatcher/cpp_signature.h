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

namespace turnout {

class CppSignature {
 public:
  /// The signature of function type `FuncType`, with a leading
  /// DispatchKeySet parameter removed.
  template <class FuncType>
  static CppSignature make() {
    using Sig = typename detail::RemoveKeySetArg<FuncType>::type;
    return CppSignature(std::type_index(typeid(Sig)));
  }

  /// The demangled C++ type.
  std::string name() const;

  bool operator==(const CppSignature& o) const { return type_ == o.type_; }
  bool operator!=(const CppSignature& o) const { return type_ != o.type_; }

 private:
  explicit CppSignature(std::type_index type) : type_(type) {}
  std::type_index type_;
};

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_CPP_SIGNATURE_H_

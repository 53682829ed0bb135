// Schema inference from a C++ kernel's signature, c10's way: arguments and
// returns are named _0, _1, ...
//
//   inferSchemaString<Tensor(const Tensor&, int64_t)>();
//   // "(Tensor _0, int _1) -> Tensor _0"
//
// The dispatcher compares an inferred schema with the declared one at
// registration (schema_matching.h). Thread safety: stateless.
#ifndef TURNOUT_DISPATCHER_INFER_SCHEMA_H_
#define TURNOUT_DISPATCHER_INFER_SCHEMA_H_

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "dispatcher/boxing.h"

namespace turnout {
namespace detail {

template <class T, class Enable = void>
struct SchemaTypeName {
  static_assert(kAlwaysFalse<T>,
                "turnout: no schema type for this C++ type; see boxing.h for "
                "the supported kernel argument and return types");
};
#define TURNOUT_SCHEMA_TYPE_NAME(Type, text) \
  template <>                                \
  struct SchemaTypeName<Type> {              \
    static std::string call() { return text; } \
  };
TURNOUT_SCHEMA_TYPE_NAME(Tensor, "Tensor")
TURNOUT_SCHEMA_TYPE_NAME(int64_t, "int")
TURNOUT_SCHEMA_TYPE_NAME(double, "float")
TURNOUT_SCHEMA_TYPE_NAME(bool, "bool")
TURNOUT_SCHEMA_TYPE_NAME(std::string, "str")
TURNOUT_SCHEMA_TYPE_NAME(std::string_view, "str")
TURNOUT_SCHEMA_TYPE_NAME(Scalar, "Scalar")
TURNOUT_SCHEMA_TYPE_NAME(Device, "Device")
TURNOUT_SCHEMA_TYPE_NAME(ScalarType, "ScalarType")
TURNOUT_SCHEMA_TYPE_NAME(Layout, "Layout")
TURNOUT_SCHEMA_TYPE_NAME(MemoryFormat, "MemoryFormat")
#undef TURNOUT_SCHEMA_TYPE_NAME

template <class T>
struct SchemaTypeName<std::optional<T>> {
  static std::string call() { return SchemaTypeName<T>::call() + "?"; }
};
template <class T>
struct SchemaTypeName<std::vector<T>> {
  static std::string call() { return SchemaTypeName<T>::call() + "[]"; }
};
template <class T>
struct SchemaTypeName<absl::Span<const T>> {
  static std::string call() { return SchemaTypeName<T>::call() + "[]"; }
};

template <class T>
std::string schemaTypeName() {
  return SchemaTypeName<std::remove_cv_t<std::remove_reference_t<T>>>::call();
}

template <class... A>
std::string inferArguments() {
  std::string out = "(";
  size_t i = 0;
  ((out += (i ? ", " : "") + schemaTypeName<A>() + " _" + std::to_string(i),
    ++i),
   ...);
  return out + ")";
}

template <class R>
struct InferReturns {
  static std::string call() { return schemaTypeName<R>() + " _0"; }
};
template <>
struct InferReturns<void> {
  static std::string call() { return "()"; }
};
template <class... Ts>
struct InferReturns<std::tuple<Ts...>> {
  static std::string call() {
    std::string out = "(";
    size_t i = 0;
    ((out += (i ? ", " : "") + schemaTypeName<Ts>() + " _" + std::to_string(i),
      ++i),
     ...);
    return out + ")";
  }
};

template <class Sig>
struct InferSchema;
template <class R, class... A>
struct InferSchema<R(A...)> {
  static std::string call() {
    return inferArguments<A...>() + " -> " + InferReturns<R>::call();
  }
};

}  // namespace detail

/// The schema c10 would infer for a kernel of type `FuncType` (a leading
/// DispatchKeySet parameter is not part of it), printed without a name.
template <class FuncType>
std::string inferSchemaString() {
  return detail::InferSchema<
      typename detail::RemoveKeySetArg<FuncType>::type>::call();
}

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_INFER_SCHEMA_H_

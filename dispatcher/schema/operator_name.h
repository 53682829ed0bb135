// OperatorName: the qualified name of one operator overload, the key under
// which the dispatcher registers and finds it.
//
//   OperatorName op{"aten::add", "Tensor"};
//   toString(op);        // "aten::add.Tensor"
//   op.getNamespace();   // "aten"
//   absl::flat_hash_map<OperatorName, Entry> table;  // hashable
//
// `name` includes the namespace ("aten::add"); `overload_name` is empty for
// the default overload, which prints as plain "aten::add".
//
// Thread safety: a plain value type; const methods may be called from any
// thread.
#ifndef TURNOUT_DISPATCHER_SCHEMA_OPERATOR_NAME_H_
#define TURNOUT_DISPATCHER_SCHEMA_OPERATOR_NAME_H_

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace turnout {

/// The name of an operator overload, e.g. {"aten::add", "Tensor"}.
struct OperatorName {
  /// Qualified name, "ns::name" (or a bare "name" before a Library has
  /// prefixed its namespace).
  std::string name;
  /// Overload name, e.g. "Tensor" or "out"; empty for the default overload.
  std::string overload_name;

  /// The namespace: the part of `name` before "::", e.g. "aten"; empty when
  /// `name` has no "::". The view points into `name`, so it lives as long as
  /// this OperatorName and its `name` are left unchanged.
  std::string_view getNamespace() const;

  template <typename H>
  friend H AbslHashValue(H h, const OperatorName& op) {
    return H::combine(std::move(h), op.name, op.overload_name);
  }
};

/// "aten::add.Tensor", or "aten::add" when the overload name is empty.
std::string toString(const OperatorName& op);

std::ostream& operator<<(std::ostream& out, const OperatorName& op);

inline bool operator==(const OperatorName& a, const OperatorName& b) {
  return a.name == b.name && a.overload_name == b.overload_name;
}
inline bool operator!=(const OperatorName& a, const OperatorName& b) {
  return !(a == b);
}
/// Orders by name, then overload name: the order dumps list operators in.
inline bool operator<(const OperatorName& a, const OperatorName& b) {
  return std::tie(a.name, a.overload_name) < std::tie(b.name, b.overload_name);
}

}  // namespace turnout

/// Lets OperatorName key std::unordered_map as well as Abseil's tables.
namespace std {
template <>
struct hash<turnout::OperatorName> {
  size_t operator()(const turnout::OperatorName& op) const noexcept {
    size_t h = hash<string>()(op.name);
    // Boost's hash_combine constant: spreads the overload's bits.
    return h ^ (hash<string>()(op.overload_name) + 0x9e3779b9 + (h << 6) +
                (h >> 2));
  }
};
}  // namespace std

#endif  // TURNOUT_DISPATCHER_SCHEMA_OPERATOR_NAME_H_

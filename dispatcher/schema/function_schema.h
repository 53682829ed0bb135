// FunctionSchema: an operator's declared signature -- its name, arguments
// (with types, defaults, keyword-only markers and alias annotations) and
// returns -- and its canonical text form.
//
//   FunctionSchema s = parseSchema(
//       "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1)"
//       " -> Tensor");
//   s.arguments()[2].default_value()->toInt();  // 1
//   s.tensorArgumentIndices();                  // {0, 1}
//   toString(s);  // the same text back, exactly as PyTorch 1.13 prints it
//
// The parts, in the order they appear below:
//   AliasInfo     "(a!)", "(a -> *)", and the element's "(a!)" in Tensor(a!)[]
//   DefaultValue  the literal after '=': None, True, 1, 1.5, "str", [0, 1],
//                 and the enum names PyTorch knows (Mean, contiguous_format)
//   Argument      one argument or return
//   FunctionSchema
//
// Thread safety: value types; const methods may be called from any thread.
#ifndef TURNOUT_DISPATCHER_SCHEMA_FUNCTION_SCHEMA_H_
#define TURNOUT_DISPATCHER_SCHEMA_FUNCTION_SCHEMA_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "dispatcher/schema/operator_name.h"
#include "dispatcher/schema/schema_type.h"

namespace turnout {

/// An alias annotation: which alias sets a value belongs to before and after
/// the call, and whether the operator writes to it.
///
///   Tensor(a)        before {a}, after {a}
///   Tensor(a!)       before {a}, after {a}, write
///   Tensor(a -> *)   before {a}, after {*} (the wildcard set)
///   Tensor(b|a)      before {b, a}, after {b, a}
///   Tensor(a!)[]     the list: no sets, write; contained: {a}, write
///
/// Sets print in the order they were written in (PyTorch prints them in hash
/// order, so "Tensor(a|b)" may print there as "Tensor(b|a)") and compare as
/// sets: (a|b) equals (b|a).
class AliasInfo {
 public:
  /// The wildcard set's name, "*": the value may alias anything.
  static constexpr std::string_view kWildcardSet = "*";

  AliasInfo() = default;
  AliasInfo(std::vector<std::string> before_sets,
            std::vector<std::string> after_sets, bool is_write);

  const std::vector<std::string>& beforeSets() const { return before_sets_; }
  const std::vector<std::string>& afterSets() const { return after_sets_; }
  bool isWrite() const { return is_write_; }
  /// Annotations of the contained type: for `Tensor(a!)[]`, the element's
  /// (a!). At most one, for a list.
  const std::vector<AliasInfo>& containedTypes() const {
    return contained_types_;
  }
  bool isWildcardBefore() const;
  bool isWildcardAfter() const;

  void addBeforeSet(std::string set) { before_sets_.push_back(std::move(set)); }
  void addAfterSet(std::string set) { after_sets_.push_back(std::move(set)); }
  void setIsWrite(bool is_write) { is_write_ = is_write; }
  void addContainedType(AliasInfo info) {
    contained_types_.push_back(std::move(info));
  }

  /// "(a!)", "(a -> *)", "(b|a)"; "()" when there are no sets.
  std::string toString() const;

  friend bool operator==(const AliasInfo& a, const AliasInfo& b);
  friend bool operator!=(const AliasInfo& a, const AliasInfo& b) {
    return !(a == b);
  }

 private:
  std::vector<std::string> before_sets_;
  std::vector<std::string> after_sets_;
  bool is_write_ = false;
  std::vector<AliasInfo> contained_types_;
};

std::ostream& operator<<(std::ostream& out, const AliasInfo& info);

/// A default value as written in a schema: None, a bool, an int, a double, a
/// complex, a string, or a list of those.
///
///   int dim=-1          Int -1
///   float eps=1e-05     Double 1e-05
///   str mode="mean"     String mean
///   int[2] stride=1     List [1, 1] (a sized list repeats a single value)
///   int reduction=Mean  Int 1, spelled "Mean"
///
/// The enum names PyTorch's parser knows (float, complex, long, strided,
/// Mean, contiguous_format) are Ints with PyTorch's value; spelling() keeps
/// the name. toString() prints the value as PyTorch does ("1"), so two
/// defaults are equal when their values are, whatever their spelling.
class DefaultValue {
 public:
  enum class Kind : uint8_t { None, Bool, Int, Double, Complex, String, List };

  /// None.
  DefaultValue() = default;
  static DefaultValue fromBool(bool value);
  static DefaultValue fromInt(int64_t value);
  /// An Int written as an enum name, e.g. fromEnumName("Mean", 1).
  static DefaultValue fromEnumName(std::string name, int64_t value);
  static DefaultValue fromDouble(double value);
  static DefaultValue fromComplex(std::complex<double> value);
  static DefaultValue fromString(std::string value);
  static DefaultValue fromList(std::vector<DefaultValue> elements);

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isDouble() const { return kind_ == Kind::Double; }
  bool isComplex() const { return kind_ == Kind::Complex; }
  bool isString() const { return kind_ == Kind::String; }
  bool isList() const { return kind_ == Kind::List; }

  // Accessors; each requires the matching kind.
  bool toBool() const;
  int64_t toInt() const;
  double toDouble() const;
  std::complex<double> toComplex() const;
  const std::string& toStringRef() const;
  const std::vector<DefaultValue>& toList() const;
  /// The enum name an Int was written as ("Mean"); empty otherwise.
  const std::string& spelling() const { return spelling_; }

  /// As PyTorch 1.13 prints the value: None, True, -1, 1., 0.5,
  /// 1.0000000000000001e-05, "valid" (quoted and escaped), [0, 1].
  std::string toString() const;
  void appendTo(std::string& out) const;

  /// Equal kinds and values; spelling() does not take part.
  friend bool operator==(const DefaultValue& a, const DefaultValue& b);
  friend bool operator!=(const DefaultValue& a, const DefaultValue& b) {
    return !(a == b);
  }

 private:
  Kind kind_ = Kind::None;
  bool bool_ = false;
  int64_t int_ = 0;
  double real_ = 0;       // Double, and a Complex's real part.
  double imag_ = 0;       // A Complex's imaginary part.
  std::string string_;    // String.
  std::string spelling_;  // Int written as an enum name.
  std::vector<DefaultValue> list_;
};

std::ostream& operator<<(std::ostream& out, const DefaultValue& value);

/// One argument or return of a schema.
///
///   int[2] stride=1      type int[], N 2, default [1, 1]
///   *, Tensor(a!) out    kwarg_only, alias (a!)
///   -> Tensor values     a named return
class Argument {
 public:
  /// Precondition: `type` is not null; `N` is set only for a list or an
  /// optional list type. Returns have no default and are not kwarg_only.
  Argument(std::string name, SchemaTypePtr type,
           std::optional<int32_t> N = std::nullopt,
           std::optional<DefaultValue> default_value = std::nullopt,
           bool kwarg_only = false,
           std::optional<AliasInfo> alias_info = std::nullopt);

  /// The name; may be empty for a return.
  const std::string& name() const { return name_; }
  /// The type as written ("SymInt[]", "ScalarType?"); for an `int[2]`, the
  /// list type int[] (the size is N()).
  const SchemaTypePtr& type() const { return type_; }
  /// The fixed size of a sized list, 2 in `int[2]`.
  std::optional<int32_t> N() const { return N_; }
  const std::optional<DefaultValue>& default_value() const {
    return default_value_;
  }
  /// True for arguments after `*`.
  bool kwarg_only() const { return kwarg_only_; }
  const std::optional<AliasInfo>& alias_info() const { return alias_info_; }
  /// True when the argument is written to: its annotation, or one it
  /// contains, has '!'.
  bool isWrite() const;
  /// An out argument, as in c10: keyword-only and written to.
  bool is_out() const { return kwarg_only_ && isWrite(); }

  friend bool operator==(const Argument& a, const Argument& b);
  friend bool operator!=(const Argument& a, const Argument& b) {
    return !(a == b);
  }

 private:
  std::string name_;
  SchemaTypePtr type_;
  std::optional<int32_t> N_;
  std::optional<DefaultValue> default_value_;
  bool kwarg_only_;
  std::optional<AliasInfo> alias_info_;
};

/// As in a schema: "Tensor(a!) self", "int[2] stride=1", "Tensor?[] indices".
std::string toString(const Argument& argument);
std::ostream& operator<<(std::ostream& out, const Argument& argument);

/// An operator's schema.
class FunctionSchema {
 public:
  /// `is_vararg`: the arguments end with `...`; `is_varret`: the returns do.
  FunctionSchema(OperatorName name, std::vector<Argument> arguments,
                 std::vector<Argument> returns, bool is_vararg = false,
                 bool is_varret = false);

  const OperatorName& operator_name() const { return name_; }
  /// "aten::add".
  const std::string& name() const { return name_.name; }
  /// "Tensor"; empty for the default overload.
  const std::string& overload_name() const { return name_.overload_name; }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool is_vararg() const { return is_vararg_; }
  bool is_varret() const { return is_varret_; }

  /// True when some argument is written to (an alias annotation with '!').
  bool is_mutable() const;
  /// Indices of the arguments the dispatcher takes keys from: those of type
  /// Tensor, Tensor?, Tensor[] or Tensor?[], in order.
  std::vector<size_t> tensorArgumentIndices() const;
  /// Prefixes the name with "ns::" when it has no namespace yet (a schema
  /// declared inside a library of namespace `ns`).
  void setNamespaceIfNotSet(std::string_view ns);
  /// Index of the first argument named `name`, or nullopt.
  std::optional<size_t> argumentIndexWithName(std::string_view name) const;

  /// Structural equality of every part, names included.
  friend bool operator==(const FunctionSchema& a, const FunctionSchema& b);
  friend bool operator!=(const FunctionSchema& a, const FunctionSchema& b) {
    return !(a == b);
  }

 private:
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
  bool is_vararg_;
  bool is_varret_;
};

/// c10's canonical form, exactly as PyTorch 1.13's str(schema):
///   aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
///   aten::aminmax(Tensor self) -> (Tensor min, Tensor max)
///   aten::_foreach_zero_(Tensor(a!)[] self) -> ()
///   aten::items.str(Dict(str, t) self) -> ((str, t)[])
/// A schema with an empty name prints as "(Tensor _0) -> Tensor _0".
/// Where PyTorch's printer would write text its own parser rejects, this one
/// writes text that parses back to an equal schema; see function_schema.cc.
std::string toString(const FunctionSchema& schema);
std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_SCHEMA_FUNCTION_SCHEMA_H_

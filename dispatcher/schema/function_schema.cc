#include "dispatcher/schema/function_schema.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include "dispatcher/core/error.h"

// Printing follows PyTorch 1.13 (FunctionSchema's and IValue's operator<<)
// character for character, except where PyTorch writes text that its own
// parser rejects or reads back as a different schema. There this printer
// writes text that reads back to an equal schema:
//   - a negative zero double prints as "-0." (1.13 writes "0.", which reads
//     back as +0; later PyTorch versions write "-0." too);
//   - a Device default prints as a quoted string ("cpu"; PyTorch writes the
//     bare device, which its parser rejects);
//   - an int list default of equal elements collapses to one element only
//     when the argument has a size N equal to the list's length (PyTorch also
//     collapses `int[] x=[0, 0]` to "0", which its parser rejects);
//   - an alias annotation on a list's element is printed after the element
//     ("Tensor(a)?[]", where PyTorch writes "Tensor?(a)[]");
//   - a non-printable byte in a string is escaped as three octal digits of
//     the unsigned byte (PyTorch computes them from a signed char).
// (Dimname, too, prints as itself, where PyTorch's parser turns it into str:
// see schema_type.h.)

namespace turnout {
namespace {

using TypeKind = SchemaType::Kind;

void appendSets(std::string& out, const std::vector<std::string>& sets) {
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) out += '|';
    out += sets[i];
  }
}

// Alias sets are sets: "a|b" and "b|a" are the same. They hold one or two
// names, so a quadratic scan beats sorting copies.
bool sameSets(const std::vector<std::string>& a,
              const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  for (const std::string& s : a) {
    if (std::find(b.begin(), b.end(), s) == b.end()) return false;
  }
  for (const std::string& s : b) {
    if (std::find(a.begin(), a.end(), s) == a.end()) return false;
  }
  return true;
}

void appendDouble(std::string& out, double d) {
  // An integral value that fits an int64 prints as the integer and a '.'
  // ("1.", "10000000000."); anything else with seventeen significant
  // digits, as `ostream << setprecision(17)` does: enough to read back the
  // same double ("0.10000000000000001", "1e+19", "inf", "nan").
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && d >= -0x1p63 && d < 0x1p63) {
    int64_t i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      if (i == 0 && std::signbit(d)) out += '-';
      out += std::to_string(i);
      out += '.';
      return;
    }
  }
  char buf[40];
  auto result =
      std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::general, 17);
  TURNOUT_INTERNAL_ASSERT(result.ec == std::errc(), "cannot format ", d);
  out.append(buf, result.ptr);
}

void appendQuoted(std::string& out, const std::string& s) {
  out += '"';
  for (char ch : s) {
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default: {
        auto byte = static_cast<unsigned char>(ch);
        if (byte > 0x1f && byte < 0x7f) {
          out += ch;
        } else {
          out += '\\';
          out += static_cast<char>('0' + (byte >> 6));
          out += static_cast<char>('0' + ((byte >> 3) & 7));
          out += static_cast<char>('0' + (byte & 7));
        }
      }
    }
  }
  out += '"';
}

// The type of an argument with its alias annotations threaded through, as
// c10 writes it: "Tensor(a!)", "Tensor(a!)[]", "t[](a!)", "int[2]?",
// "Tensor(a)?". `N` applies to the outermost list.
void appendAnnotatedType(std::string& out, const SchemaType& type,
                         const AliasInfo* alias, std::optional<int32_t> N) {
  if (alias == nullptr && !N) {
    // Nothing to thread through: the plain form, printed in a loop however
    // many lists nest (the recursion below is as deep as the annotation).
    type.appendTo(out);
    return;
  }
  bool is_optional = type.kind() == TypeKind::Optional;
  const SchemaType& inner = is_optional ? *type.elementType() : type;
  if (inner.kind() == TypeKind::List) {
    const AliasInfo* element_alias =
        alias != nullptr && !alias->containedTypes().empty()
            ? &alias->containedTypes()[0]
            : nullptr;
    appendAnnotatedType(out, *inner.elementType(), element_alias, std::nullopt);
    out += '[';
    if (N) out += std::to_string(*N);
    out += ']';
  } else {
    inner.appendTo(out);
  }
  if (alias != nullptr && !alias->beforeSets().empty()) {
    out += alias->toString();
  }
  if (is_optional) out += '?';
}

// PyTorch writes `int[2] stride=1` for the default [1, 1].
bool collapsesToOneElement(const Argument& arg) {
  const SchemaType* type = arg.type().get();
  if (type->kind() == TypeKind::Optional) type = type->elementType().get();
  if (type->kind() != TypeKind::List ||
      type->elementType()->kind() != TypeKind::Int || !arg.N()) {
    return false;
  }
  const std::vector<DefaultValue>& list = arg.default_value()->toList();
  if (list.size() < 2 || list.size() != static_cast<size_t>(*arg.N())) {
    return false;
  }
  for (const DefaultValue& v : list) {
    if (v != list[0]) return false;
  }
  return true;
}

void appendArgument(std::string& out, const Argument& arg) {
  appendAnnotatedType(out, *arg.type(),
                      arg.alias_info() ? &*arg.alias_info() : nullptr, arg.N());
  if (!arg.name().empty()) {
    out += ' ';
    out += arg.name();
  }
  if (arg.default_value()) {
    out += '=';
    if (arg.default_value()->isList() && collapsesToOneElement(arg)) {
      arg.default_value()->toList()[0].appendTo(out);
    } else {
      arg.default_value()->appendTo(out);
    }
  }
}

bool anyWrite(const AliasInfo& info) {
  if (info.isWrite()) return true;
  for (const AliasInfo& c : info.containedTypes()) {
    if (anyWrite(c)) return true;
  }
  return false;
}

}  // namespace

// AliasInfo.

AliasInfo::AliasInfo(std::vector<std::string> before_sets,
                     std::vector<std::string> after_sets, bool is_write)
    : before_sets_(std::move(before_sets)),
      after_sets_(std::move(after_sets)),
      is_write_(is_write) {}

bool AliasInfo::isWildcardBefore() const {
  for (const std::string& s : before_sets_) {
    if (s == kWildcardSet) return true;
  }
  return false;
}

bool AliasInfo::isWildcardAfter() const {
  for (const std::string& s : after_sets_) {
    if (s == kWildcardSet) return true;
  }
  return false;
}

std::string AliasInfo::toString() const {
  std::string out = "(";
  appendSets(out, before_sets_);
  if (is_write_) out += '!';
  if (!sameSets(before_sets_, after_sets_)) {
    out += " -> ";
    appendSets(out, after_sets_);
  }
  out += ')';
  return out;
}

bool operator==(const AliasInfo& a, const AliasInfo& b) {
  return a.is_write_ == b.is_write_ &&
         sameSets(a.before_sets_, b.before_sets_) &&
         sameSets(a.after_sets_, b.after_sets_) &&
         a.contained_types_ == b.contained_types_;
}

std::ostream& operator<<(std::ostream& out, const AliasInfo& info) {
  return out << info.toString();
}

// DefaultValue.

DefaultValue DefaultValue::fromBool(bool value) {
  DefaultValue v;
  v.kind_ = Kind::Bool;
  v.bool_ = value;
  return v;
}

DefaultValue DefaultValue::fromInt(int64_t value) {
  DefaultValue v;
  v.kind_ = Kind::Int;
  v.int_ = value;
  return v;
}

DefaultValue DefaultValue::fromEnumName(std::string name, int64_t value) {
  DefaultValue v = fromInt(value);
  v.spelling_ = std::move(name);
  return v;
}

DefaultValue DefaultValue::fromDouble(double value) {
  DefaultValue v;
  v.kind_ = Kind::Double;
  v.real_ = value;
  return v;
}

DefaultValue DefaultValue::fromComplex(std::complex<double> value) {
  DefaultValue v;
  v.kind_ = Kind::Complex;
  v.real_ = value.real();
  v.imag_ = value.imag();
  return v;
}

DefaultValue DefaultValue::fromString(std::string value) {
  DefaultValue v;
  v.kind_ = Kind::String;
  v.string_ = std::move(value);
  return v;
}

DefaultValue DefaultValue::fromList(std::vector<DefaultValue> elements) {
  DefaultValue v;
  v.kind_ = Kind::List;
  v.list_ = std::move(elements);
  return v;
}

bool DefaultValue::toBool() const {
  TURNOUT_INTERNAL_ASSERT(isBool(), "toBool() of a non-bool default");
  return bool_;
}

int64_t DefaultValue::toInt() const {
  TURNOUT_INTERNAL_ASSERT(isInt(), "toInt() of a non-int default");
  return int_;
}

double DefaultValue::toDouble() const {
  TURNOUT_INTERNAL_ASSERT(isDouble(), "toDouble() of a non-double default");
  return real_;
}

std::complex<double> DefaultValue::toComplex() const {
  TURNOUT_INTERNAL_ASSERT(isComplex(), "toComplex() of a non-complex default");
  return {real_, imag_};
}

const std::string& DefaultValue::toStringRef() const {
  TURNOUT_INTERNAL_ASSERT(isString(), "toStringRef() of a non-string default");
  return string_;
}

const std::vector<DefaultValue>& DefaultValue::toList() const {
  TURNOUT_INTERNAL_ASSERT(isList(), "toList() of a non-list default");
  return list_;
}

void DefaultValue::appendTo(std::string& out) const {
  switch (kind_) {
    case Kind::None:
      out += "None";
      return;
    case Kind::Bool:
      out += bool_ ? "True" : "False";
      return;
    case Kind::Int:
      out += std::to_string(int_);
      return;
    case Kind::Double:
      appendDouble(out, real_);
      return;
    case Kind::Complex:
      // PyTorch's form: real part, sign, magnitude of the imaginary part, j.
      appendDouble(out, real_);
      out += imag_ >= 0 || std::isnan(imag_) ? '+' : '-';
      appendDouble(out, std::abs(imag_));
      out += 'j';
      return;
    case Kind::String:
      appendQuoted(out, string_);
      return;
    case Kind::List:
      out += '[';
      for (size_t i = 0; i < list_.size(); ++i) {
        if (i > 0) out += ", ";
        list_[i].appendTo(out);
      }
      out += ']';
      return;
  }
}

std::string DefaultValue::toString() const {
  std::string out;
  appendTo(out);
  return out;
}

bool operator==(const DefaultValue& a, const DefaultValue& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case DefaultValue::Kind::None:
      return true;
    case DefaultValue::Kind::Bool:
      return a.bool_ == b.bool_;
    case DefaultValue::Kind::Int:
      return a.int_ == b.int_;
    case DefaultValue::Kind::Double:
    case DefaultValue::Kind::Complex: {
      // NaN equals NaN here: two schemas that both say nan agree.
      auto same = [](double x, double y) {
        return x == y ? std::signbit(x) == std::signbit(y)
                      : std::isnan(x) && std::isnan(y);
      };
      return same(a.real_, b.real_) && same(a.imag_, b.imag_);
    }
    case DefaultValue::Kind::String:
      return a.string_ == b.string_;
    case DefaultValue::Kind::List:
      return a.list_ == b.list_;
  }
  return false;
}

std::ostream& operator<<(std::ostream& out, const DefaultValue& value) {
  return out << value.toString();
}

// Argument.

Argument::Argument(std::string name, SchemaTypePtr type,
                   std::optional<int32_t> N,
                   std::optional<DefaultValue> default_value, bool kwarg_only,
                   std::optional<AliasInfo> alias_info)
    : name_(std::move(name)),
      type_(std::move(type)),
      N_(N),
      default_value_(std::move(default_value)),
      kwarg_only_(kwarg_only),
      alias_info_(std::move(alias_info)) {
  TURNOUT_INTERNAL_ASSERT(type_ != nullptr, "argument '", name_,
                          "' has no type");
  if (N_) {
    const SchemaType* t = type_.get();
    if (t->kind() == TypeKind::Optional) t = t->elementType().get();
    TURNOUT_INTERNAL_ASSERT(t->kind() == TypeKind::List, "argument '", name_,
                            "' has a size N but type ", type_->toString(),
                            " is not a list");
  }
}

bool Argument::isWrite() const { return alias_info_ && anyWrite(*alias_info_); }

bool operator==(const Argument& a, const Argument& b) {
  return a.name_ == b.name_ && *a.type_ == *b.type_ && a.N_ == b.N_ &&
         a.default_value_ == b.default_value_ &&
         a.kwarg_only_ == b.kwarg_only_ && a.alias_info_ == b.alias_info_;
}

std::string toString(const Argument& argument) {
  std::string out;
  appendArgument(out, argument);
  return out;
}

std::ostream& operator<<(std::ostream& out, const Argument& argument) {
  return out << toString(argument);
}

// FunctionSchema.

FunctionSchema::FunctionSchema(OperatorName name,
                               std::vector<Argument> arguments,
                               std::vector<Argument> returns, bool is_vararg,
                               bool is_varret)
    : name_(std::move(name)),
      arguments_(std::move(arguments)),
      returns_(std::move(returns)),
      is_vararg_(is_vararg),
      is_varret_(is_varret) {}

bool FunctionSchema::is_mutable() const {
  for (const Argument& arg : arguments_) {
    if (arg.isWrite()) return true;
  }
  return false;
}

std::vector<size_t> FunctionSchema::tensorArgumentIndices() const {
  std::vector<size_t> indices;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const SchemaType& t = *arguments_[i].type();
    if (t.isTensor() || t.isOptionalTensor() || t.isTensorList() ||
        t.isOptionalTensorList()) {
      indices.push_back(i);
    }
  }
  return indices;
}

void FunctionSchema::setNamespaceIfNotSet(std::string_view ns) {
  if (!name_.getNamespace().empty()) return;
  name_.name = std::string(ns) + "::" + name_.name;
}

std::optional<size_t> FunctionSchema::argumentIndexWithName(
    std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name() == name) return i;
  }
  return std::nullopt;
}

bool operator==(const FunctionSchema& a, const FunctionSchema& b) {
  return a.name_ == b.name_ && a.is_vararg_ == b.is_vararg_ &&
         a.is_varret_ == b.is_varret_ && a.arguments_ == b.arguments_ &&
         a.returns_ == b.returns_;
}

std::string toString(const FunctionSchema& schema) {
  std::string out;
  out.reserve(64 + 24 * schema.arguments().size());
  out += schema.name();
  if (!schema.overload_name().empty()) {
    out += '.';
    out += schema.overload_name();
  }
  out += '(';
  bool seen_kwarg_only = false;
  const std::vector<Argument>& args = schema.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out += ", ";
    if (args[i].kwarg_only() && !seen_kwarg_only) {
      out += "*, ";
      seen_kwarg_only = true;
    }
    appendArgument(out, args[i]);
  }
  if (schema.is_vararg()) {
    if (!args.empty()) out += ", ";
    out += "...";
  }
  out += ") -> ";

  // One return goes without parentheses, unless its text starts with '(':
  // "-> ((str, t)[])" must not read as two returns "str" and "t[]". Varret
  // alone is a bare "...".
  const std::vector<Argument>& returns = schema.returns();
  size_t returns_start = out.size();
  bool parenthesize = !((returns.size() == 1 && !schema.is_varret()) ||
                        (returns.empty() && schema.is_varret()));
  if (!parenthesize && returns.size() == 1) {
    appendArgument(out, returns[0]);
    if (out[returns_start] != '(') return out;
    out.resize(returns_start);
    parenthesize = true;
  }
  if (parenthesize) out += '(';
  for (size_t i = 0; i < returns.size(); ++i) {
    if (i > 0) out += ", ";
    appendArgument(out, returns[i]);
  }
  if (schema.is_varret()) {
    if (!returns.empty()) out += ", ";
    out += "...";
  }
  if (parenthesize) out += ')';
  return out;
}

std::ostream& operator<<(std::ostream& out, const FunctionSchema& schema) {
  return out << toString(schema);
}

}  // namespace turnout

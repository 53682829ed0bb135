#include "dispatcher/schema/default_ivalue.h"

#include <optional>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

IValue defaultToIValueOfType(const DefaultValue& d, const SchemaType& type,
                             std::optional<int32_t> N) {
  const SchemaType* t = &type;
  if (t->kind() == Kind::Optional) {
    if (d.isNone()) return IValue();
    t = t->elementType().get();
  }
  switch (d.kind()) {
    case DefaultValue::Kind::None:
      return IValue();
    case DefaultValue::Kind::Bool:
      return IValue(d.toBool());
    case DefaultValue::Kind::Int:
      if (t->kind() == Kind::Float) return IValue(static_cast<double>(d.toInt()));
      if (t->kind() == Kind::List) {  // int[2] stride=1
        return IValue(std::vector<int64_t>(N.value_or(1), d.toInt()));
      }
      return IValue(d.toInt());
    case DefaultValue::Kind::Double:
      return IValue(d.toDouble());
    case DefaultValue::Kind::Complex:
      TURNOUT_CHECK(false, ErrorKind::NotImplemented,
                    "complex default values are not supported; pass the argument explicitly");
      break;
    case DefaultValue::Kind::String:
      return IValue(d.toStringRef());
    case DefaultValue::Kind::List: {
      const SchemaType& element =
          t->kind() == Kind::List ? *t->elementType() : *t;
      std::vector<IValue> elements;
      for (const DefaultValue& e : d.toList()) {
        elements.push_back(defaultToIValueOfType(e, element, std::nullopt));
      }
      switch (element.kind()) {
        case Kind::Int:
        case Kind::SymInt: {
          std::vector<int64_t> v;
          for (const IValue& e : elements) v.push_back(e.toInt());
          return IValue(std::move(v));
        }
        case Kind::Float: {
          std::vector<double> v;
          for (const IValue& e : elements) v.push_back(e.toDouble());
          return IValue(std::move(v));
        }
        case Kind::Bool: {
          std::vector<bool> v;
          for (const IValue& e : elements) v.push_back(e.toBool());
          return IValue(std::move(v));
        }
        default:
          return IValue(std::move(elements));
      }
    }
  }
  return IValue();
}

}  // namespace

IValue defaultToIValue(const Argument& arg) {
  TURNOUT_INTERNAL_ASSERT(arg.default_value().has_value(),
                          "defaultToIValue: argument '", arg.name(),
                          "' has no default");
  return defaultToIValueOfType(*arg.default_value(), *arg.type(), arg.N());
}

}  // namespace turnout

#include "dispatcher/schema/schema_matching.h"

#include <utility>

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

// The kind a leaf is represented by in C++ kernels (c10's "fake" type).
Kind representationKind(Kind kind) {
  switch (kind) {
    case Kind::SymInt:
    case Kind::ScalarType:
    case Kind::Layout:
    case Kind::MemoryFormat:
      return Kind::Int;
    case Kind::Dimname:
      return Kind::Str;
    case Kind::Number:
      return Kind::Scalar;
    default:
      return kind;
  }
}

std::vector<Argument> namedArguments(std::vector<SchemaTypePtr> types) {
  std::vector<Argument> out;
  out.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    out.emplace_back("_" + std::to_string(i), std::move(types[i]));
  }
  return out;
}

std::optional<std::string> findTypeMismatch(const std::vector<Argument>& a,
                                            const std::vector<Argument>& b,
                                            const char* what) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (!typesMatch(*a[i].type(), *b[i].type())) {
      // Declared first, as c10 reads it.
      return "Type mismatch in " + std::string(what) + " " +
             std::to_string(i + 1) + ": " + b[i].type()->toString() + " vs " +
             a[i].type()->toString();
    }
  }
  return std::nullopt;
}

}  // namespace

bool typesMatch(const SchemaType& inferred, const SchemaType& specified) {
  // Lists and optionals in a loop (they may nest without bound); Dict and
  // tuple elements recurse, at most SchemaType::kMaxNesting deep.
  const SchemaType* x = &inferred;
  const SchemaType* y = &specified;
  for (;;) {
    if (x == y) return true;
    if (representationKind(x->kind()) != representationKind(y->kind())) {
      return false;
    }
    if (x->kind() == Kind::Var && x->varName() != y->varName()) {
      return false;
    }
    const auto& a = x->containedTypes();
    const auto& b = y->containedTypes();
    if (a.size() != b.size()) return false;
    if (a.size() != 1 || x->kind() == Kind::Tuple) {
      for (size_t i = 0; i < a.size(); ++i) {
        if (!typesMatch(*a[i], *b[i])) return false;
      }
      return true;
    }
    x = a[0].get();
    y = b[0].get();
  }
}

std::optional<std::string> findSchemaDifferences(
    const FunctionSchema& inferred, const FunctionSchema& specified) {
  // Texts as c10's (only the argument count ends with a period).
  const auto& args = inferred.arguments();
  const auto& spec_args = specified.arguments();
  if (args.size() != spec_args.size()) {
    return "The number of arguments is different. " +
           std::to_string(spec_args.size()) + " vs " +
           std::to_string(args.size()) + ".";
  }
  const auto& rets = inferred.returns();
  const auto& spec_rets = specified.returns();
  if (rets.size() != spec_rets.size()) {
    return "The number of returns is different. " +
           std::to_string(spec_rets.size()) + " vs " +
           std::to_string(rets.size());
  }
  if (auto m = findTypeMismatch(args, spec_args, "argument")) return m;
  return findTypeMismatch(rets, spec_rets, "return");
}

FunctionSchema makeInferredSchema(std::vector<SchemaTypePtr> argument_types,
                                  std::vector<SchemaTypePtr> return_types) {
  return FunctionSchema(OperatorName{},
                        namedArguments(std::move(argument_types)),
                        namedArguments(std::move(return_types)));
}

std::string toInferredSchemaString(const FunctionSchema& schema) {
  if (schema.name().empty() && schema.overload_name().empty()) {
    return toString(schema);
  }
  return toString(FunctionSchema(OperatorName{}, schema.arguments(),
                                 schema.returns(), schema.is_vararg(),
                                 schema.is_varret()));
}

}  // namespace turnout

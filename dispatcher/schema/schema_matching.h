// Schema matching: checks the schema inferred from a C++ kernel's signature
// against the schema an operator was declared with, as c10 does when a
// typed kernel is registered.
//
//   FunctionSchema inferred = makeInferredSchema(
//       {SchemaType::get(SchemaType::Kind::Tensor)},
//       {SchemaType::get(SchemaType::Kind::Tensor)});
//   toInferredSchemaString(inferred);  // "(Tensor _0) -> Tensor _0"
//   findSchemaDifferences(inferred, parseSchema("ns::f(Tensor a, int b) -> "
//                                               "Tensor"));
//   // "The number of arguments is different. 2 vs 1." (declared vs inferred)
//
// Only counts and types take part: names, defaults, alias annotations, list
// sizes and keyword-only markers are the declared schema's business. Types
// are compared as c10 compares them, by their C++ representation: SymInt,
// ScalarType, Layout and MemoryFormat are all int, Dimname is str, and
// number is Scalar; Optional, List and the other containers must agree
// element by element (Tensor? is not Tensor, Tensor?[] is not Tensor[]).
//
// Thread safety: pure functions.
#ifndef TURNOUT_DISPATCHER_SCHEMA_SCHEMA_MATCHING_H_
#define TURNOUT_DISPATCHER_SCHEMA_SCHEMA_MATCHING_H_

#include <optional>
#include <string>
#include <vector>

#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/schema_type.h"

namespace turnout {

/// Why a kernel whose signature gave `inferred` cannot implement an operator
/// declared as `specified`, or nullopt when it can. Checked in c10's order,
/// first difference wins:
///   "The number of arguments is different. 2 vs 1."
///   "The number of returns is different. 1 vs 2"
///   "Type mismatch in argument 2: Tensor vs int"
///   "Type mismatch in return 1: Tensor[] vs Tensor"
/// Counts and types read as c10's do: specified (declared) first, inferred
/// second; positions count from 1.
std::optional<std::string> findSchemaDifferences(
    const FunctionSchema& inferred, const FunctionSchema& specified);

/// True when a kernel value of type `inferred` can stand for a declared
/// `specified`: equal once both are reduced to their C++ representation.
bool typesMatch(const SchemaType& inferred, const SchemaType& specified);

/// The schema c10 infers from a kernel: no name, arguments named _0, _1, ...,
/// returns named _0, _1, ..., no defaults and no alias annotations.
FunctionSchema makeInferredSchema(std::vector<SchemaTypePtr> argument_types,
                                  std::vector<SchemaTypePtr> return_types);

/// A schema as c10 prints an inferred one, without its name:
/// "(Tensor _0, int _1) -> Tensor _0", "() -> ()".
std::string toInferredSchemaString(const FunctionSchema& schema);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_SCHEMA_SCHEMA_MATCHING_H_

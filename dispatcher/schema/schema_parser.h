// The schema parser: reads the schema language of PyTorch's
// native_functions.yaml and of torch.library into FunctionSchema.
//
//   FunctionSchema s = parseSchema(
//       "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, "
//       "Tensor(a!) out) -> Tensor(a!)");
//   OperatorName n = parseName("aten::add.out");
//   auto either = parseSchemaOrName("myops::foo");  // holds an OperatorName
//
// The grammar, informally:
//   schema    := name '(' [arg {',' arg}] ')' '->' returns
//   name      := IDENT ['::' IDENT] ['.' IDENT]     (no namespace is fine)
//   arg       := '*' | '...' | type ['[' INT ']' [alias] ['?']] IDENT
//                ['=' default]
//   returns   := '...' | ret | '(' [ret | '...' {',' ret | '...'}] ')'
//   ret       := type ['[' INT ']' [alias] ['?']] [IDENT]
//   type      := base {'[]' [alias] | '?'}
//   base      := 'Tensor' [alias] | LEAF [alias] | TYPEVAR [alias]
//              | 'Dict(' type ',' type ')' [alias] | 'Future(' type ')'
//              | 'RRef(' type ')' | '(' [type {',' type}] ')'
//   alias     := '(' set {'|' set} ['!'] ['->' set {'|' set}] ')'
//   set       := IDENT | '*'
// A lowercase name that is no type (t, t1, tVal) is a type variable, as in
// c10. Defaults: None, True, False, integers, floats (1.5, 1e-05, 1., inf,
// nan), complex (1j), strings in single or double quotes, lists [0, 1], and
// the enum names float, complex, long, strided, Mean, contiguous_format.
//
// Errors: a schema that does not parse throws turnout::Error
// (InvalidArgument) whose message names the problem, then shows the schema
// on one line and a caret under the offending column:
//   invalid schema: unknown type 'Tensr'
//     aten::foo(Tensr x) -> Tensor
//               ^
//
// Thread safety: the functions are pure; call them from any thread.
#ifndef TURNOUT_DISPATCHER_SCHEMA_SCHEMA_PARSER_H_
#define TURNOUT_DISPATCHER_SCHEMA_SCHEMA_PARSER_H_

#include <string_view>
#include <variant>

#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/operator_name.h"

namespace turnout {

/// Parses a whole schema. A schema without a namespace ("foo(Tensor x) ->
/// Tensor") parses with the bare name; the Library that defines it prefixes
/// its own namespace.
/// Throws Error(InvalidArgument) with a caret line when `schema` does not
/// parse.
FunctionSchema parseSchema(std::string_view schema);

/// Parses "ns::name" or "ns::name.overload" (the namespace is optional).
/// Throws Error(InvalidArgument) when `name` is anything else.
OperatorName parseName(std::string_view name);

/// A schema when `text` has an argument list, else an operator name: what
/// torch.library's def() and impl() accept ("ns::foo" or "ns::foo(Tensor x)
/// -> Tensor"). Throws Error(InvalidArgument) when neither parses.
std::variant<OperatorName, FunctionSchema> parseSchemaOrName(
    std::string_view text);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_SCHEMA_SCHEMA_PARSER_H_

// Conversion between Python objects and IValue, guided by the schema: what
// turnout.ops calls use to build a Stack from (*args, **kwargs), and what a
// Python kernel will use to turn a Stack back into Python arguments.
//
//   IValue v;
//   if (!tryToIValue(obj, *arg.type(), arg.N(), &v)) { ...no match... }
//   py::object result = returnsToPython(stack, schema);
//
// Accepted Python values per schema type: Tensor (a turnout.Tensor), int
// (an int or any object with __index__, not bool), float (float or int),
// bool, str, Scalar (bool, int or float), ScalarType (a turnout.dtype),
// Layout, MemoryFormat, Device (turnout.device or a string like "cuda:0"),
// T[] (a list or tuple of T; a single int for a sized int[N]), T? (None or
// T), Tensor[] and Tensor?[]; Any and type variables take whatever the
// value's own type is.
//
// Nesting is bounded both ways: a list or tuple nested deeper than
// kMaxNestingDepth, or one that contains itself, is a TypeError that names
// the path ("x contains itself: x[0] is x"), never a C stack overflow; so is
// a value of more than kMaxConvertedElements elements (counted each time
// they are reached), never a hang.
//
// Thread safety: call with the GIL held.
#ifndef TURNOUT_BINDINGS_IVALUE_H_
#define TURNOUT_BINDINGS_IVALUE_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/schema_type.h"
#include "dispatcher/stack.h"

namespace turnout {
namespace bindings {

/// The deepest nesting of lists and tuples converted between Python and
/// IValue (either way): ample for any schema type, and small enough that the
/// recursion fits any thread's stack.
inline constexpr int kMaxNestingDepth = 100;

/// The most elements of lists and tuples one conversion visits (either
/// way), counting an element each time it is reached: a list held twice
/// counts twice, so `a = [a, a]` repeated 60 times (2**60 elements by value)
/// is refused in a fraction of a second instead of converting forever. A
/// few million: more than any argument spelled as a list needs (bulk data
/// travels as a tensor).
inline constexpr int64_t kMaxConvertedElements = int64_t{1} << 22;

/// Converts `obj` to `type` (with `N`, the size of a sized list). Returns
/// false, leaving `out` as it was, when `obj` does not fit the type.
/// Throws only for a value of the right kind that is malformed (a device
/// string that does not parse), and Error(Type) for a value nested deeper
/// than kMaxNestingDepth, containing itself or holding more than
/// kMaxConvertedElements elements, whose message calls the
/// value `name` ("x is nested more than 100 levels deep (x[0]...[0])").
bool tryToIValue(pybind11::handle obj, const SchemaType& type,
                 std::optional<int32_t> N, IValue* out,
                 std::string_view name = "value");

/// The same for argument `arg` of `schema`; throws Error(Type):
///   "aten::add.Tensor(): argument 'other' (position 2) must be Tensor, but
///   got str"
IValue toIValue(pybind11::handle obj, const FunctionSchema& schema,
                const Argument& arg, size_t position);

/// Binds (*args, **kwargs) to the schema of `op` as a call does (defaults
/// filled in); Error(Type) naming the argument on a mismatch. (debug.cc)
Stack bindArguments(const OperatorHandle& op, const pybind11::tuple& args,
                    const pybind11::dict& kwargs);

/// An IValue as a Python object (Error(Type) past kMaxNestingDepth or
/// kMaxConvertedElements). With
/// `type`, Ints of ScalarType, Layout
/// and MemoryFormat type come back as turnout.dtype / layout /
/// memory_format objects. An undefined Tensor is None.
pybind11::object toPyObject(const IValue& v, const SchemaType* type = nullptr);

/// Whether the Tensor arguments of operator `qualname` ("aten::mul", no
/// overload) take Python numbers, as wrapped numbers (wrapNumber in
/// tensor.h): torch 1.13's list, the aten arithmetic operators add, sub,
/// mul, div, floor_divide (with their aliases and in-place forms), to,
/// _to_copy and copy_. A call's binding asks only when an argument is no
/// tensor.
bool allowsNumbersAsTensors(const std::string& qualname);

/// A Python number as torch 1.13's argument parser reads one for a Scalar
/// (or a wrapped number): a bool as a bool; an int or a NumPy integer as
/// int64 (false outside its range); a float, a NumPy floating scalar or a
/// NumPy bool_ as a double (torch reads numpy.bool_(True) as 1.0). False,
/// with no Python error set, for anything else.
bool numberToScalar(PyObject* obj, Scalar* out);

/// While one is alive on this thread, a tensor converts to no int, float
/// or Scalar argument (by its __index__ or __float__). An operator packet
/// binds its overloads under one first, so that a tensor goes to a Tensor
/// overload where one takes it, as torch 1.13's overload resolution does:
/// remainder(torch.tensor(5), x) is remainder.Tensor, not
/// remainder.Scalar_Tensor; then without one. Not for use around a call.
class TensorsAreNotNumbers {
 public:
  TensorsAreNotNumbers();
  ~TensorsAreNotNumbers();
  TensorsAreNotNumbers(const TensorsAreNotNumbers&) = delete;
  TensorsAreNotNumbers& operator=(const TensorsAreNotNumbers&) = delete;

 private:
  bool previous_;
};

/// Pops the schema's returns off `stack`: None for no return, the value for
/// one, a tuple for several.
pybind11::object returnsToPython(Stack& stack, const FunctionSchema& schema);

/// How a Python value reads in an error: "str", "Tensor", "list[int]",
/// "tuple[Tensor, float]", "None"; bounded in depth and length, so a deep
/// or self-containing list reads "list[list[list[list[...]]]]".
std::string describePyType(pybind11::handle obj);

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_IVALUE_H_

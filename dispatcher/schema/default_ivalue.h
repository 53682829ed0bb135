// The default of a schema argument as the IValue a call passes: typed by
// the argument ("float x=1" is 1.0, "int[2] stride=1" is [1, 1]). Python
// calls and opcheck fill omitted arguments with it.
#ifndef TURNOUT_DISPATCHER_SCHEMA_DEFAULT_IVALUE_H_
#define TURNOUT_DISPATCHER_SCHEMA_DEFAULT_IVALUE_H_

#include "dispatcher/core/ivalue.h"
#include "dispatcher/schema/function_schema.h"

namespace turnout {

/// The schema default of `arg` as an IValue of its type; Error(NotImplemented)
/// for a complex default. Precondition: arg.default_value() is set.
IValue defaultToIValue(const Argument& arg);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_SCHEMA_DEFAULT_IVALUE_H_

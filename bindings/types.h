// The small value types of the Python API: turnout.dtype (float32, int64,
// ...), turnout.layout (strided), turnout.memory_format (contiguous_format,
// ...) and turnout.device, each converted to and from its C++ enum.
//
//   >>> turnout.float32, turnout.device("cuda", 0)
//   (turnout.float32, device(type='cuda', index=0))
//   >>> str(turnout.device("cuda:0"))
//   'cuda:0'
//
// There is one Python object per dtype, layout and memory format, so `is`
// compares them, as in PyTorch. Thread safety: the objects are made once in
// initTypes (under the GIL) and never change.
#ifndef TURNOUT_BINDINGS_TYPES_H_
#define TURNOUT_BINDINGS_TYPES_H_

#include <pybind11/pybind11.h>

#include <optional>

#include "dispatcher/core/device.h"
#include "dispatcher/core/layout.h"
#include "dispatcher/core/memory_format.h"
#include "dispatcher/core/scalar_type.h"

namespace turnout {
namespace bindings {

/// The Python object of each dtype (a borrowed reference, valid for the
/// life of the module). Precondition: `t` is not Undefined.
pybind11::handle dtypeObject(ScalarType t);
pybind11::handle layoutObject(Layout l);
pybind11::handle memoryFormatObject(MemoryFormat m);
/// A new turnout.device.
pybind11::object deviceObject(Device d);

/// The enum `obj` stands for, or nullopt when it is not one of the objects
/// above. A device is also accepted as a string ("cuda:0") -- a malformed
/// one throws Error(InvalidArgument) with Device's message.
std::optional<ScalarType> toScalarType(pybind11::handle obj);
std::optional<Layout> toLayout(pybind11::handle obj);
std::optional<MemoryFormat> toMemoryFormat(pybind11::handle obj);
std::optional<Device> toDevice(pybind11::handle obj);

}  // namespace bindings
}  // namespace turnout

#endif  // TURNOUT_BINDINGS_TYPES_H_

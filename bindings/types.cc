#include "bindings/types.h"

#include <pybind11/pybind11.h>

#include <array>
#include <string>

#include "bindings/bindings.h"
#include "dispatcher/core/error.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

// The Python face of an enum value: one object per value, compared by
// identity. `name` is the Python spelling ("float32", "strided").
template <class Enum>
struct EnumObject {
  Enum value;
  const char* name;
};

using DtypeObject = EnumObject<ScalarType>;
using LayoutObject = EnumObject<Layout>;
using MemoryFormatObject = EnumObject<MemoryFormat>;

// Indexed by the enum's value. Filled by initTypes, read afterwards.
std::array<py::handle, 17> g_dtypes;
std::array<py::handle, static_cast<int>(Layout::NumOptions)> g_layouts;
std::array<py::handle, static_cast<int>(MemoryFormat::NumOptions)>
    g_memory_formats;

template <class Enum, size_t N>
py::handle lookup(const std::array<py::handle, N>& table, Enum value,
                  const char* what) {
  auto i = static_cast<size_t>(value);
  TURNOUT_INTERNAL_ASSERT(i < N && table[i], "no Python object for ", what,
                          " ", static_cast<int>(value));
  return table[i];
}

template <class Enum, size_t N>
void add(py::module_& m, std::array<py::handle, N>& table, Enum value,
         const char* name, std::initializer_list<const char*> aliases = {}) {
  // The one object of this value: held by `table` for the process's life.
  py::object obj = py::cast(EnumObject<Enum>{value, name});
  table[static_cast<size_t>(value)] = obj.inc_ref();
  m.attr(name) = obj;
  for (const char* alias : aliases) m.attr(alias) = obj;
}

}  // namespace

py::handle dtypeObject(ScalarType t) { return lookup(g_dtypes, t, "dtype"); }
py::handle layoutObject(Layout l) { return lookup(g_layouts, l, "layout"); }
py::handle memoryFormatObject(MemoryFormat m) {
  return lookup(g_memory_formats, m, "memory_format");
}
py::object deviceObject(Device d) { return py::cast(d); }

std::optional<ScalarType> toScalarType(py::handle obj) {
  if (!py::isinstance<DtypeObject>(obj)) return std::nullopt;
  return obj.cast<const DtypeObject&>().value;
}
std::optional<Layout> toLayout(py::handle obj) {
  if (!py::isinstance<LayoutObject>(obj)) return std::nullopt;
  return obj.cast<const LayoutObject&>().value;
}
std::optional<MemoryFormat> toMemoryFormat(py::handle obj) {
  if (!py::isinstance<MemoryFormatObject>(obj)) return std::nullopt;
  return obj.cast<const MemoryFormatObject&>().value;
}
std::optional<Device> toDevice(py::handle obj) {
  if (py::isinstance<Device>(obj)) return obj.cast<Device>();
  if (py::isinstance<py::str>(obj)) return Device(obj.cast<std::string>());
  return std::nullopt;
}

void initTypes(py::module_& m) {
  py::class_<DtypeObject> dtype(m, "dtype",
                                "An element type, e.g. turnout.float32.");
  dtype
      .def("__repr__",
           [](const DtypeObject& d) { return std::string("turnout.") + d.name; })
      .def_property_readonly(
          "is_floating_point",
          [](const DtypeObject& d) { return isFloatingType(d.value); })
      .def_property_readonly(
          "itemsize", [](const DtypeObject& d) { return elementSize(d.value); })
      .def("__reduce__", [](const DtypeObject& d) { return std::string(d.name); });
  add(m, g_dtypes, ScalarType::Byte, "uint8");
  add(m, g_dtypes, ScalarType::Char, "int8");
  add(m, g_dtypes, ScalarType::Short, "int16", {"short"});
  add(m, g_dtypes, ScalarType::Int, "int32", {"int"});
  add(m, g_dtypes, ScalarType::Long, "int64", {"long"});
  add(m, g_dtypes, ScalarType::Half, "float16", {"half"});
  add(m, g_dtypes, ScalarType::Float, "float32", {"float"});
  add(m, g_dtypes, ScalarType::Double, "float64", {"double"});
  add(m, g_dtypes, ScalarType::Bool, "bool");
  add(m, g_dtypes, ScalarType::BFloat16, "bfloat16");

  py::class_<LayoutObject> layout(m, "layout", "A memory layout, e.g. turnout.strided.");
  layout.def("__repr__", [](const LayoutObject& l) {
    return std::string("turnout.") + l.name;
  });
  add(m, g_layouts, Layout::Strided, "strided");
  add(m, g_layouts, Layout::Sparse, "sparse_coo");
  add(m, g_layouts, Layout::SparseCsr, "sparse_csr");
  add(m, g_layouts, Layout::Mkldnn, "_mkldnn");
  add(m, g_layouts, Layout::SparseCsc, "sparse_csc");
  add(m, g_layouts, Layout::SparseBsr, "sparse_bsr");
  add(m, g_layouts, Layout::SparseBsc, "sparse_bsc");
  add(m, g_layouts, Layout::Jagged, "jagged");

  py::class_<MemoryFormatObject> memory_format(
      m, "memory_format", "A memory format, e.g. turnout.contiguous_format.");
  memory_format.def("__repr__", [](const MemoryFormatObject& f) {
    return std::string("turnout.") + f.name;
  });
  add(m, g_memory_formats, MemoryFormat::Contiguous,
      "contiguous_format");
  add(m, g_memory_formats, MemoryFormat::Preserve,
      "preserve_format");
  add(m, g_memory_formats, MemoryFormat::ChannelsLast,
      "channels_last");
  add(m, g_memory_formats, MemoryFormat::ChannelsLast3d,
      "channels_last_3d");

  py::class_<Device>(m, "device",
                     "Where a tensor's data lives: device('cpu'), "
                     "device('cuda:1'), device('cuda', 0), device('meta').")
      .def(py::init([](const std::string& s) { return Device(s); }),
           py::arg("type"))
      .def(py::init([](const std::string& type, int64_t index) {
             Device d(type);
             TURNOUT_CHECK(!d.has_index(), ErrorKind::InvalidArgument,
                           "device(type, index): type '", type,
                           "' already has an index; pass 'cuda' and ", index,
                           ", or 'cuda:", index, "' alone");
             TURNOUT_CHECK(index >= 0 && index < 128, ErrorKind::InvalidArgument,
                           "device(type, index): index must be in [0, 127], "
                           "got ", index);
             return Device(d.type(), static_cast<DeviceIndex>(index));
           }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly(
          "type", [](const Device& d) { return std::string(deviceTypeName(d.type())); })
      .def_property_readonly("index", [](const Device& d) -> py::object {
        if (!d.has_index()) return py::none();
        return py::int_(d.index());
      })
      .def("__str__", &Device::str)
      .def("__repr__",
           [](const Device& d) {
             std::string out = "device(type='";
             out += deviceTypeName(d.type());
             out += "'";
             if (d.has_index()) out += ", index=" + std::to_string(d.index());
             return out + ")";
           })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             std::optional<Device> other;
             if (py::isinstance<Device>(b)) other = b.cast<Device>();
             return other.has_value() && *other == a;
           })
      .def("__hash__", [](const Device& d) { return std::hash<Device>()(d); });
}

}  // namespace bindings
}  // namespace turnout

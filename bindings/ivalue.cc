#include "bindings/ivalue.h"

#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings/tensor.h"
#include "bindings/types.h"
#include "dispatcher/core/error.h"
#include "jit/runtime/future.h"

namespace py = pybind11;

namespace turnout {
namespace bindings {
namespace {

using Kind = SchemaType::Kind;

bool isBool(py::handle obj) { return PyBool_Check(obj.ptr()); }

// Set by TensorsAreNotNumbers (ivalue.h).
thread_local bool t_tensors_are_not_numbers = false;

// A tensor read as a number (through __index__), unless a packet's first
// binding pass refuses that.
bool refusedTensor(PyObject* p) {
  return t_tensors_are_not_numbers && isTensor(p);
}

enum class NumpyScalar { kNone, kFloating, kBool };

// Which NumPy scalar `p` is, for the classes torch 1.13 reads unlike
// Python's: numpy.floating (only float64 is a float) and numpy.bool_
// (neither a bool nor, for torch, an integer). The classes are looked up
// once NumPy has been imported (no NumPy scalar exists before), never
// importing it; the type name's prefix keeps other objects off that path.
// Precondition: the GIL is held (it guards the cached classes).
NumpyScalar numpyScalarKind(PyObject* p) {
  if (std::strncmp(Py_TYPE(p)->tp_name, "numpy.", 6) != 0) {
    return NumpyScalar::kNone;
  }
  static PyObject* floating = nullptr;  // strong references, kept
  static PyObject* bool_class = nullptr;
  if (floating == nullptr || bool_class == nullptr) {
    py::object numpy = py::reinterpret_steal<py::object>(
        PyImport_GetModule(py::str("numpy").ptr()));
    if (!numpy) {
      PyErr_Clear();
      return NumpyScalar::kNone;
    }
    PyObject* f = PyObject_GetAttrString(numpy.ptr(), "floating");
    PyObject* b = PyObject_GetAttrString(numpy.ptr(), "bool_");
    if (f == nullptr || b == nullptr || !PyType_Check(f) || !PyType_Check(b)) {
      PyErr_Clear();
      Py_XDECREF(f);
      Py_XDECREF(b);
      return NumpyScalar::kNone;
    }
    floating = f;
    bool_class = b;
  }
  if (PyObject_TypeCheck(p, reinterpret_cast<PyTypeObject*>(floating))) {
    return NumpyScalar::kFloating;
  }
  if (PyObject_TypeCheck(p, reinterpret_cast<PyTypeObject*>(bool_class))) {
    return NumpyScalar::kBool;
  }
  return NumpyScalar::kNone;
}

// A NumPy floating scalar or bool_ as a double.
bool numpyToDouble(PyObject* p, double* out) {
  if (numpyScalarKind(p) == NumpyScalar::kNone) return false;
  const double d = PyFloat_AsDouble(p);
  if (d == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  *out = d;
  return true;
}

// An int, or an object with __index__ (a NumPy integer), but not a bool
// (nor NumPy's bool_, whose __index__ NumPy deprecates).
bool toInt(py::handle obj, int64_t* out) {
  PyObject* p = obj.ptr();
  if (PyBool_Check(p)) return false;
  if (!PyLong_Check(p) &&
      (numpyScalarKind(p) == NumpyScalar::kBool || refusedTensor(p))) {
    return false;
  }
  if (!PyLong_Check(p) && !PyIndex_Check(p)) return false;
  int overflow = 0;
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(p));
  if (!index) {
    PyErr_Clear();
    return false;
  }
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) return false;
  *out = v;
  return true;
}

bool toDouble(py::handle obj, double* out) {
  PyObject* p = obj.ptr();
  if (PyFloat_Check(p)) {
    *out = PyFloat_AS_DOUBLE(p);
    return true;
  }
  int64_t i;
  if (toInt(obj, &i)) {
    *out = static_cast<double>(i);
    return true;
  }
  return numpyToDouble(p, out);
}

bool isSequence(py::handle obj) {
  return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr());
}

// ---- Bounded nesting and size ---------------------------------------------
//
// Every conversion here recurses into the elements of lists and tuples. A
// value nested deeper than kMaxNestingDepth (a self-referencing list is
// infinitely deep), or one whose conversion would visit more than
// kMaxConvertedElements elements, stops the conversion with
// ConversionLimit, which each container level on the way out extends with
// its index, so that the error names the path. The second bound is what
// stops a shared structure (`a = [a, a]`, 60 times: 60 levels, 2**60
// elements by value) from taking exponential time. The outermost list or
// tuple is first walked without converting anything (checkSize), so that
// such a value is refused in a fraction of a second; the conversion checks
// again as it goes, as an element's Python code (an __index__) may change
// the lists. The path and the search for a cycle cost something only on
// the error path.

struct ConversionLimit {
  bool too_many_elements = false;  // else too deep
  std::vector<Py_ssize_t> path;    // innermost index first
};

// The elements the conversion running on this thread may still visit. Each
// conversion (tryToIValue, toIValue) starts its own budget and gives the
// one it interrupted back when it ends: an element's __index__ may run
// Python code that converts other values.
thread_local int64_t tls_elements_left = 0;

class ElementBudget {
 public:
  ElementBudget() : saved_(tls_elements_left) {
    tls_elements_left = kMaxConvertedElements;
  }
  ~ElementBudget() { tls_elements_left = saved_; }
  ElementBudget(const ElementBudget&) = delete;
  ElementBudget& operator=(const ElementBudget&) = delete;

 private:
  int64_t saved_;
};

void checkDepth(int depth) {
  if (__builtin_expect(depth > kMaxNestingDepth, 0)) throw ConversionLimit{};
}

// Walks the lists and tuples of `obj` (a list or tuple) without converting
// anything, charging every element to `left`: a value past the element
// limit is refused before any conversion work, which for a huge shared
// value would take seconds to reach the limit. It does not descend past
// kMaxNestingDepth, so that a value too deep, or containing itself, is
// refused by the conversion as before (which names the cycle, and does not
// refuse a value that fails to match its type first). No Python code runs
// here, so no list can change under the walk; the conversion counts again
// (forEachElement), as its Python code may change the lists.
void checkSize(PyObject* p, int depth, int64_t* left) {
  if (depth >= kMaxNestingDepth) return;
  const bool list = PyList_Check(p);
  const Py_ssize_t n = list ? PyList_GET_SIZE(p) : PyTuple_GET_SIZE(p);
  *left -= n;
  if (__builtin_expect(*left < 0, 0)) throw ConversionLimit{true, {}};
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* e = list ? PyList_GET_ITEM(p, i) : PyTuple_GET_ITEM(p, i);
    if (!PyList_Check(e) && !PyTuple_Check(e)) continue;
    try {
      checkSize(e, depth + 1, left);
    } catch (ConversionLimit& limit) {
      limit.path.push_back(i);
      throw;
    }
  }
}

// The elements of a list or tuple, each held by a strong reference while `f`
// runs, each charged to this thread's ElementBudget. A list is re-read at
// every step: `f` may run Python code (an __index__) that shrinks, grows or
// replaces the list's storage. `f(e, depth)` gets the depth of the element.
// The outermost container (depth 0) is first walked by checkSize.
template <class F>
bool forEachElement(py::handle obj, int depth, F&& f) {
  PyObject* p = obj.ptr();
  if (depth == 0) {
    int64_t left = kMaxConvertedElements;
    checkSize(p, 0, &left);
  }
  checkDepth(depth + 1);
  int64_t& left = tls_elements_left;
  const bool list = PyList_Check(p);
  for (Py_ssize_t i = 0;; ++i) {
    const Py_ssize_t n = list ? PyList_GET_SIZE(p) : PyTuple_GET_SIZE(p);
    if (i >= n) break;
    if (__builtin_expect(--left < 0, 0)) {
      throw ConversionLimit{true, {i}};
    }
    py::object e = py::reinterpret_borrow<py::object>(
        list ? PyList_GET_ITEM(p, i) : PyTuple_GET_ITEM(p, i));
    try {
      if (!f(py::handle(e), depth + 1)) return false;
    } catch (ConversionLimit& limit) {
      limit.path.push_back(i);
      throw;
    }
  }
  return true;
}

// "[0][3]...[0]" for the path (outermost first), shortened past 12 levels.
std::string formatPath(const std::vector<Py_ssize_t>& outer_first, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    if (n > 12 && i == 6) {
      out += "...";
      i = n - 4;
    }
    out += "[" + std::to_string(outer_first[i]) + "]";
  }
  return out;
}

// The error for a value that reached a limit along `path` (innermost first,
// as ConversionLimit collects it), `root` naming the value: "x contains
// itself: x[0] is x" when the path runs into a cycle (a long list that holds
// itself may reach the element limit first), else "x is nested more than
// 100 levels deep (x[0][0]...[0])" or "x holds more than 4194304 elements in
// all ...".
std::string limitMessage(py::handle obj, const ConversionLimit& limit,
                         std::string_view root) {
  std::vector<Py_ssize_t> path = limit.path;
  std::reverse(path.begin(), path.end());
  const std::string name(root);
  // Walks the path again; an object met twice is a cycle.
  std::vector<PyObject*> seen = {obj.ptr()};
  PyObject* cur = obj.ptr();
  for (size_t i = 0; i < path.size(); ++i) {
    if (!PyList_Check(cur) && !PyTuple_Check(cur)) break;
    const Py_ssize_t n = PyList_Check(cur) ? PyList_GET_SIZE(cur)
                                           : PyTuple_GET_SIZE(cur);
    if (path[i] >= n) break;
    cur = PyList_Check(cur) ? PyList_GET_ITEM(cur, path[i])
                            : PyTuple_GET_ITEM(cur, path[i]);
    for (size_t j = 0; j < seen.size(); ++j) {
      if (seen[j] == cur) {
        return name + " contains itself: " + name + formatPath(path, i + 1) +
               " is " + name + formatPath(path, j) +
               "; turnout converts lists and tuples by value, so a value "
               "cannot contain itself";
      }
    }
    seen.push_back(cur);
  }
  if (limit.too_many_elements) {
    return name + " holds more than " + std::to_string(kMaxConvertedElements) +
           " elements in all, counting an element each time it is reached "
           "(a list held twice counts twice; stopped at " + name + formatPath(path, path.size()) +
           "); turnout converts lists and tuples by value, at most " +
           std::to_string(kMaxConvertedElements) +
           " elements per value: pass bulk data as a tensor, and do not "
           "nest the same list many times over";
  }
  return name + " is nested more than " + std::to_string(kMaxNestingDepth) +
         " levels deep (" + name + formatPath(path, path.size()) +
         "); turnout converts at most " + std::to_string(kMaxNestingDepth) +
         " levels of lists and tuples";
}

bool tryToIValueAt(py::handle obj, const SchemaType& type,
                   std::optional<int32_t> N, IValue* out, int depth);
bool inferToIValue(py::handle obj, IValue* out, int depth);

// The list kind keys() / values() of a dict make for elements of `type`.
IValue::Tag listTagFor(const SchemaType& type) {
  switch (type.kind()) {
    case Kind::Int:
    case Kind::SymInt:
      return IValue::Tag::IntList;
    case Kind::Float: return IValue::Tag::DoubleList;
    case Kind::Bool: return IValue::Tag::BoolList;
    case Kind::Tensor: return IValue::Tag::TensorList;
    default: return IValue::Tag::GenericList;
  }
}

std::string pyTypeName(py::handle obj) {
  return py::str(obj.get_type().attr("__name__")).cast<std::string>();
}

// A Python dict as a Dict IValue, in the dict's order. With `types` (key
// and value types), each entry must fit them (false otherwise); without,
// keys and values are taken by their own Python types, and a key that
// cannot be a TorchScript dict key, or keys of two kinds, are an
// Error(Type). The entries are read from a snapshot (items()), so a key or
// value whose conversion runs Python code cannot change what is walked.
bool dictToIValue(py::handle obj, const SchemaType* key_type,
                  const SchemaType* value_type, IValue* out, int depth) {
  py::list entries = py::reinterpret_steal<py::list>(PyDict_Items(obj.ptr()));
  if (!entries) throw py::error_already_set();
  auto d = ivalue::DictImpl::create(
      key_type ? listTagFor(*key_type) : IValue::Tag::GenericList,
      value_type ? listTagFor(*value_type) : IValue::Tag::GenericList);
  std::optional<IValue::Tag> key_tag;
  std::optional<IValue::Tag> value_tag;
  bool mixed_values = false;
  const bool ok = forEachElement(entries, depth, [&](py::handle e, int d2) {
    py::handle k = PyTuple_GET_ITEM(e.ptr(), 0);
    py::handle v = PyTuple_GET_ITEM(e.ptr(), 1);
    IValue key, value;
    if (key_type != nullptr) {
      if (!tryToIValueAt(k, *key_type, std::nullopt, &key, d2)) return false;
      if (!tryToIValueAt(v, *value_type, std::nullopt, &value, d2)) {
        return false;
      }
    } else {
      if (!inferToIValue(k, &key, d2) || !ivalue::DictImpl::isKey(key)) {
        throw Error(ErrorKind::Type,
                    "a dict key of type " + pyTypeName(k) +
                        " cannot be converted: TorchScript dict keys are "
                        "str, int, float, bool or Tensor");
      }
      if (key_tag && *key_tag != key.tag()) {
        throw Error(ErrorKind::Type,
                    std::string("a dict with keys of two types (") +
                        IValue::tagName(*key_tag) + " and " + key.tagKind() +
                        ") cannot be converted: a TorchScript dict's keys "
                        "all have one type");
      }
      key_tag = key.tag();
      if (!inferToIValue(v, &value, d2)) return false;
      if (value_tag && *value_tag != value.tag()) mixed_values = true;
      value_tag = value.tag();
    }
    d->insertOrAssign(std::move(key), std::move(value));
    return true;
  });
  if (!ok) return false;
  if (key_type == nullptr && !d->empty()) {
    // Untyped: the list kinds from the entries themselves.
    auto typed = ivalue::DictImpl::create(
        IValue::listTagOf(d->entries()[0].first),
        mixed_values ? IValue::Tag::GenericList
                     : IValue::listTagOf(d->entries()[0].second));
    for (const auto& [k, v] : d->entries()) typed->insertOrAssign(k, v);
    d = std::move(typed);
  }
  *out = IValue(std::move(d));
  return true;
}

// Any value by its own Python type (for Any and type variables).
bool inferToIValue(py::handle obj, IValue* out, int depth) {
  PyObject* p = obj.ptr();
  if (p == Py_None) {
    *out = IValue();
  } else if (isTensor(p)) {
    *out = IValue(unpackTensor(p));
  } else if (PyBool_Check(p)) {
    *out = IValue(p == Py_True);
  } else if (PyLong_Check(p)) {
    int64_t i;
    if (!toInt(obj, &i)) return false;
    *out = IValue(i);
  } else if (PyFloat_Check(p)) {
    *out = IValue(PyFloat_AS_DOUBLE(p));
  } else if (PyUnicode_Check(p)) {
    *out = IValue(obj.cast<std::string>());
  } else if (std::optional<ScalarType> t = toScalarType(obj)) {
    *out = IValue(*t);
  } else if (py::isinstance<Device>(obj)) {
    *out = IValue(obj.cast<Device>());
  } else if (PyDict_Check(p)) {
    return dictToIValue(obj, nullptr, nullptr, out, depth);
  } else if (isSequence(obj)) {
    std::vector<IValue> elements;
    bool ok = forEachElement(obj, depth, [&](py::handle e, int d) {
      IValue v;
      if (!inferToIValue(e, &v, d)) return false;
      elements.push_back(std::move(v));
      return true;
    });
    if (!ok) return false;
    if (PyTuple_Check(p)) {
      *out = IValue::makeTuple(std::move(elements));
    } else {
      *out = IValue(std::move(elements));
    }
  } else {
    return false;
  }
  return true;
}

bool listToIValue(py::handle obj, const SchemaType& element,
                  std::optional<int32_t> N, IValue* out, int depth) {
  const Kind kind = element.kind();
  if (!isSequence(obj)) {
    // A sized int list takes one int for all its elements: int[2] stride=1.
    int64_t i;
    if (N.has_value() && (kind == Kind::Int || kind == Kind::SymInt) &&
        toInt(obj, &i)) {
      *out = IValue(std::vector<int64_t>(static_cast<size_t>(*N), i));
      return true;
    }
    return false;
  }
  switch (kind) {
    case Kind::Int:
    case Kind::SymInt: {
      std::vector<int64_t> v;
      if (!forEachElement(obj, depth, [&](py::handle e, int) {
            int64_t i;
            if (!toInt(e, &i)) return false;
            v.push_back(i);
            return true;
          })) {
        return false;
      }
      *out = IValue(std::move(v));
      return true;
    }
    case Kind::Float: {
      std::vector<double> v;
      if (!forEachElement(obj, depth, [&](py::handle e, int) {
            double d;
            if (!toDouble(e, &d)) return false;
            v.push_back(d);
            return true;
          })) {
        return false;
      }
      *out = IValue(std::move(v));
      return true;
    }
    case Kind::Bool: {
      std::vector<bool> v;
      if (!forEachElement(obj, depth, [&](py::handle e, int) {
            if (!isBool(e)) return false;
            v.push_back(e.ptr() == Py_True);
            return true;
          })) {
        return false;
      }
      *out = IValue(std::move(v));
      return true;
    }
    case Kind::Tensor: {
      std::vector<Tensor> v;
      if (!forEachElement(obj, depth, [&](py::handle e, int) {
            if (!isTensor(e.ptr())) return false;
            v.push_back(unpackTensor(e.ptr()));
            return true;
          })) {
        return false;
      }
      *out = IValue(std::move(v));
      return true;
    }
    default: {
      std::vector<IValue> v;
      if (!forEachElement(obj, depth, [&](py::handle e, int element_depth) {
            IValue x;
            if (!tryToIValueAt(e, element, std::nullopt, &x, element_depth)) {
              return false;
            }
            v.push_back(std::move(x));
            return true;
          })) {
        return false;
      }
      *out = IValue(std::move(v));
      return true;
    }
  }
}

bool tryToIValueAt(py::handle obj, const SchemaType& type,
                   std::optional<int32_t> N, IValue* out, int depth) {
  PyObject* p = obj.ptr();
  switch (type.kind()) {
    case Kind::Tensor:
      if (!isTensor(p)) return false;
      *out = IValue(unpackTensor(p));
      return true;
    case Kind::Int:
    case Kind::SymInt: {
      int64_t i;
      if (!toInt(obj, &i)) return false;
      *out = IValue(i);
      return true;
    }
    case Kind::Float: {
      double d;
      if (!toDouble(obj, &d)) return false;
      *out = IValue(d);
      return true;
    }
    case Kind::Bool:
      if (!isBool(obj)) return false;
      *out = IValue(p == Py_True);
      return true;
    case Kind::Str:
      if (!PyUnicode_Check(p)) return false;
      *out = IValue(obj.cast<std::string>());
      return true;
    case Kind::Scalar:
    case Kind::Number: {
      Scalar s;
      if (!numberToScalar(p, &s)) return false;
      *out = IValue(s);
      return true;
    }
    case Kind::ScalarType: {
      std::optional<ScalarType> t = toScalarType(obj);
      if (!t) return false;
      *out = IValue(*t);
      return true;
    }
    case Kind::Layout: {
      std::optional<Layout> l = toLayout(obj);
      if (!l) return false;
      *out = IValue(*l);
      return true;
    }
    case Kind::MemoryFormat: {
      std::optional<MemoryFormat> f = toMemoryFormat(obj);
      if (!f) return false;
      *out = IValue(*f);
      return true;
    }
    case Kind::Device: {
      std::optional<Device> d = toDevice(obj);
      if (!d) return false;
      *out = IValue(*d);
      return true;
    }
    case Kind::None:
      if (p != Py_None) return false;
      *out = IValue();
      return true;
    case Kind::Optional:
      if (p == Py_None) {
        *out = IValue();
        return true;
      }
      return tryToIValueAt(obj, *type.elementType(), N, out, depth);
    case Kind::List:
      return listToIValue(obj, *type.elementType(), N, out, depth);
    case Kind::Tuple: {
      if (!PyTuple_Check(p)) return false;
      const auto& types = type.containedTypes();
      if (static_cast<size_t>(PyTuple_GET_SIZE(p)) != types.size()) return false;
      std::vector<IValue> elements(types.size());
      size_t i = 0;
      if (!forEachElement(obj, depth, [&](py::handle e, int d) {
            const size_t at = i++;
            return tryToIValueAt(e, *types[at], std::nullopt, &elements[at],
                                 d);
          })) {
        return false;
      }
      *out = IValue::makeTuple(std::move(elements));
      return true;
    }
    case Kind::Any:
    case Kind::Var:
      return inferToIValue(obj, out, depth);
    case Kind::Dict: {
      if (!PyDict_Check(p)) return false;
      const auto& kv = type.containedTypes();
      const Kind k = kv[0]->kind();
      if (k != Kind::Str && k != Kind::Int && k != Kind::Float &&
          k != Kind::Bool && k != Kind::Tensor && k != Kind::Var &&
          k != Kind::Any) {
        throw Error(ErrorKind::Type,
                    "cannot convert a dict to " + type.toString() +
                        ": turnout's dicts have str, int, float, bool or "
                        "Tensor keys");
      }
      const bool infer_keys = k == Kind::Var || k == Kind::Any;
      if (infer_keys) return dictToIValue(obj, nullptr, nullptr, out, depth);
      return dictToIValue(obj, kv[0].get(), kv[1].get(), out, depth);
    }
    case Kind::Future:
      if (!py::isinstance<jit::Future>(obj)) return false;
      *out = IValue(obj.cast<std::shared_ptr<jit::Future>>());
      return true;
    default:
      // Generator, Dimname, Storage, Stream, QScheme, Complex, RRef,
      // AnyEnum, AnyClass: no Python form yet.
      return false;
  }
}

// "list[int, list[...]]": element types each once, in order of appearance;
// nesting past kDescribeDepth reads "...", and `budget` bounds the elements
// looked at in all (a list holding itself many times would otherwise take
// exponential time).
constexpr int kDescribeDepth = 4;

std::string describeAt(py::handle obj, int depth, int* budget) {
  PyObject* p = obj.ptr();
  if (p == Py_None) return "None";
  if (isTensor(p)) return "Tensor";
  if (PyList_Check(p) || PyTuple_Check(p)) {
    const bool list = PyList_Check(p);
    const Py_ssize_t n = list ? PyList_GET_SIZE(p) : PyTuple_GET_SIZE(p);
    if (n == 0) return list ? "list (empty)" : "tuple (empty)";
    std::string out = list ? "list[" : "tuple[";
    if (depth >= kDescribeDepth) return out + "...]";
    std::vector<std::string> seen;
    for (Py_ssize_t i = 0; i < n; ++i) {
      if (--*budget < 0) {
        seen.push_back("...");
        break;
      }
      // Re-read: describing an element may run Python code (a type's
      // __name__ is a descriptor) that changes the list.
      const Py_ssize_t size = list ? PyList_GET_SIZE(p) : PyTuple_GET_SIZE(p);
      if (i >= size) break;
      py::object e = py::reinterpret_borrow<py::object>(
          list ? PyList_GET_ITEM(p, i) : PyTuple_GET_ITEM(p, i));
      std::string t = describeAt(e, depth + 1, budget);
      if (std::find(seen.begin(), seen.end(), t) == seen.end()) {
        seen.push_back(std::move(t));
      }
    }
    for (size_t i = 0; i < seen.size(); ++i) {
      if (i > 0) out += ", ";
      out += seen[i];
    }
    return out + "]";
  }
  if (PyDict_Check(p)) {
    if (PyDict_Size(p) == 0) return "dict (empty)";
    PyObject* key = nullptr;
    PyObject* value = nullptr;
    Py_ssize_t pos = 0;
    PyDict_Next(p, &pos, &key, &value);
    return "dict[" + describeAt(key, depth + 1, budget) + ", " +
           describeAt(value, depth + 1, budget) + "]";
  }
  if (PyLong_Check(p) && !PyBool_Check(p)) {
    // Refused where an int is wanted only when it does not fit int64.
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow != 0) return "int out of int64's range";
  }
  return py::str(obj.get_type().attr("__name__")).cast<std::string>();
}

}  // namespace

TensorsAreNotNumbers::TensorsAreNotNumbers()
    : previous_(t_tensors_are_not_numbers) {
  t_tensors_are_not_numbers = true;
}
TensorsAreNotNumbers::~TensorsAreNotNumbers() {
  t_tensors_are_not_numbers = previous_;
}

bool numberToScalar(PyObject* obj, Scalar* out) {
  if (PyBool_Check(obj)) {
    *out = Scalar(obj == Py_True);
    return true;
  }
  if (PyFloat_Check(obj)) {
    *out = Scalar(PyFloat_AS_DOUBLE(obj));
    return true;
  }
  int64_t i;
  if (toInt(obj, &i)) {
    *out = Scalar(i);
    return true;
  }
  double d;
  if (numpyToDouble(obj, &d)) {
    *out = Scalar(d);
    return true;
  }
  return false;
}

bool allowsNumbersAsTensors(const std::string& qualname) {
  static const char* const kNames[] = {
      "add",         "add_",          "div",      "div_",      "divide",
      "divide_",     "mul",           "mul_",     "multiply",  "multiply_",
      "sub",         "sub_",          "subtract", "subtract_", "true_divide",
      "true_divide_", "to",           "_to_copy", "copy_",     "floor_divide",
      "floor_divide_"};
  if (qualname.compare(0, 6, "aten::") != 0) return false;
  for (const char* n : kNames) {
    if (qualname.compare(6, std::string::npos, n) == 0) return true;
  }
  return false;
}

bool tryToIValue(py::handle obj, const SchemaType& type,
                 std::optional<int32_t> N, IValue* out,
                 std::string_view name) {
  try {
    ElementBudget budget;
    return tryToIValueAt(obj, type, N, out, 0);
  } catch (const ConversionLimit& limit) {
    throw Error(ErrorKind::Type, limitMessage(obj, limit, name));
  }
}

IValue toIValue(py::handle obj, const FunctionSchema& schema,
                const Argument& arg, size_t position) {
  IValue out;
  std::string overload = schema.overload_name().empty()
                             ? schema.name()
                             : schema.name() + "." + schema.overload_name();
  try {
    ElementBudget budget;
    if (tryToIValueAt(obj, *arg.type(), arg.N(), &out, 0)) return out;
  } catch (const ConversionLimit& limit) {
    throw Error(ErrorKind::Type,
                overload + "(): argument '" + arg.name() + "' (position " +
                    std::to_string(position + 1) + "): " +
                    limitMessage(obj, limit, arg.name()));
  }
  TURNOUT_CHECK(false, ErrorKind::Type, overload, "(): argument '", arg.name(),
                "' (position ", position + 1, ") must be ",
                arg.type()->toString(), ", but got ", describePyType(obj));
  return out;
}

namespace {

// Refuses, before building anything, an IValue of more than
// kMaxConvertedElements elements in all, counting an element each time it
// is reached: IValue lists are shared by reference, so a small value (a
// graph's ListConstruct(%l, %l), 60 times) may stand for a huge Python one.
void checkIValueSize(const IValue& v, int depth, int64_t* left) {
  if (!v.isList() && !v.isTuple() && !v.isDict()) return;
  if (depth >= kMaxNestingDepth) return;  // toPyObjectAt's error
  size_t n = 0;
  switch (v.tag()) {
    case IValue::Tag::IntList: n = v.toIntListRef().size(); break;
    case IValue::Tag::DoubleList: n = v.toDoubleListRef().size(); break;
    case IValue::Tag::BoolList: n = v.toBoolListRef().size(); break;
    case IValue::Tag::TensorList: n = v.toTensorListRef().size(); break;
    case IValue::Tag::GenericList: n = v.toListRef().size(); break;
    case IValue::Tag::Dict: n = v.toDictRef().size(); break;
    default: n = v.toTupleRef().elements().size(); break;
  }
  *left -= static_cast<int64_t>(std::min<size_t>(n, kMaxConvertedElements + 1));
  TURNOUT_CHECK(*left >= 0, ErrorKind::Type, "a value of more than ",
                kMaxConvertedElements,
                " elements in all (counting an element each time it is "
                "reached: a list held twice counts twice) cannot be converted "
                "to Python; return bulk data as a tensor");
  if (v.isGenericList()) {
    for (const IValue& e : v.toListRef()) checkIValueSize(e, depth + 1, left);
  } else if (v.isTuple()) {
    for (const IValue& e : v.toTupleRef().elements()) {
      checkIValueSize(e, depth + 1, left);
    }
  } else if (v.isDict()) {
    for (const auto& [key, value] : v.toDictRef().entries()) {
      checkIValueSize(value, depth + 1, left);
    }
  }
}

py::object toPyObjectAt(const IValue& v, const SchemaType* type, int depth) {
  const SchemaType* element = nullptr;
  if (type != nullptr) {
    if (type->kind() == Kind::Optional) type = type->elementType().get();
    if (type->kind() == Kind::List) element = type->elementType().get();
  }
  switch (v.tag()) {
    case IValue::Tag::None:
      return py::none();
    case IValue::Tag::Tensor: {
      // As torch's toPyObject: a wrapped number goes back to Python as the
      // number it was (a handler sees mul.Tensor(x, 4)).
      const Tensor& t = v.toTensor();
      if (__builtin_expect(t.unsafeGetTensorImpl()->is_wrapped_number(), 0)) {
        return unwrapNumber(t);
      }
      return wrapTensor(t);
    }
    case IValue::Tag::Double:
      return py::float_(v.toDouble());
    case IValue::Tag::Int:
      if (type != nullptr) {
        switch (type->kind()) {
          case Kind::ScalarType:
            return py::reinterpret_borrow<py::object>(dtypeObject(v.toScalarType()));
          case Kind::Layout:
            return py::reinterpret_borrow<py::object>(layoutObject(v.toLayout()));
          case Kind::MemoryFormat:
            return py::reinterpret_borrow<py::object>(
                memoryFormatObject(v.toMemoryFormat()));
          default:
            break;
        }
      }
      return py::int_(v.toInt());
    case IValue::Tag::Bool:
      return py::bool_(v.toBool());
    case IValue::Tag::String:
      return py::str(v.toStringRef());
    case IValue::Tag::Device:
      return deviceObject(v.toDevice());
    case IValue::Tag::IntList: {
      py::list out;
      for (int64_t i : v.toIntListRef()) out.append(py::int_(i));
      return std::move(out);
    }
    case IValue::Tag::DoubleList: {
      py::list out;
      for (double d : v.toDoubleListRef()) out.append(py::float_(d));
      return std::move(out);
    }
    case IValue::Tag::BoolList: {
      py::list out;
      for (bool b : v.toBoolListRef()) out.append(py::bool_(b));
      return std::move(out);
    }
    case IValue::Tag::TensorList: {
      py::list out;
      for (const Tensor& t : v.toTensorListRef()) out.append(wrapTensor(t));
      return std::move(out);
    }
    case IValue::Tag::GenericList: {
      TURNOUT_CHECK(depth < kMaxNestingDepth, ErrorKind::Type,
                    "a list nested more than ", kMaxNestingDepth,
                    " levels deep cannot be converted to Python");
      py::list out;
      for (const IValue& e : v.toListRef()) {
        out.append(toPyObjectAt(e, element, depth + 1));
      }
      return std::move(out);
    }
    case IValue::Tag::Tuple: {
      TURNOUT_CHECK(depth < kMaxNestingDepth, ErrorKind::Type,
                    "a tuple nested more than ", kMaxNestingDepth,
                    " levels deep cannot be converted to Python");
      const auto& elements = v.toTupleRef().elements();
      py::tuple out(elements.size());
      for (size_t i = 0; i < elements.size(); ++i) {
        const SchemaType* t = nullptr;
        if (type != nullptr && type->kind() == Kind::Tuple &&
            i < type->containedTypes().size()) {
          t = type->containedTypes()[i].get();
        }
        out[i] = toPyObjectAt(elements[i], t, depth + 1);
      }
      return std::move(out);
    }
    case IValue::Tag::Dict: {
      TURNOUT_CHECK(depth < kMaxNestingDepth, ErrorKind::Type,
                    "a dict nested more than ", kMaxNestingDepth,
                    " levels deep cannot be converted to Python");
      const SchemaType* value_type = nullptr;
      if (type != nullptr && type->kind() == Kind::Dict) {
        value_type = type->containedTypes()[1].get();
      }
      py::dict out;
      for (const auto& [key, value] : v.toDictRef().entries()) {
        out[toPyObjectAt(key, nullptr, depth + 1)] =
            toPyObjectAt(value, value_type, depth + 1);
      }
      return std::move(out);
    }
    case IValue::Tag::Future:
      return py::cast(v.toFuture());
  }
  return py::none();
}

}  // namespace

py::object toPyObject(const IValue& v, const SchemaType* type) {
  int64_t left = kMaxConvertedElements;
  checkIValueSize(v, 0, &left);
  return toPyObjectAt(v, type, 0);
}

py::object returnsToPython(Stack& stack, const FunctionSchema& schema) {
  const auto& returns = schema.returns();
  const size_t n = returns.size();
  TURNOUT_INTERNAL_ASSERT(stack.size() >= n, "operator ", schema.name(),
                          " left ", stack.size(), " values for ", n,
                          " returns");
  if (n == 0) return py::none();
  if (n == 1) {
    py::object out = toPyObject(stack.back(), returns[0].type().get());
    stack.pop_back();
    return out;
  }
  py::tuple out(n);
  const size_t first = stack.size() - n;
  for (size_t i = 0; i < n; ++i) {
    out[i] = toPyObject(stack[first + i], returns[i].type().get());
  }
  stack.resize(first);
  return std::move(out);
}

std::string describePyType(py::handle obj) {
  int budget = 256;
  return describeAt(obj, 0, &budget);
}

}  // namespace bindings
}  // namespace turnout

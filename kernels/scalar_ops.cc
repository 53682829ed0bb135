#include "kernels/scalar_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/library.h"
#include "kernels/aten_tags.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/factory.h"
#include "kernels/factory_utils.h"
#include "kernels/tensor_utils.h"

namespace turnout {
namespace {

// ---- int
// ------------------------------------------------------------------------
// Through uint64_t: wraps around instead of signed-overflow UB.

int64_t add_int(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
int64_t sub_int(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) -
                              static_cast<uint64_t>(b));
}
int64_t mul_int(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) *
                              static_cast<uint64_t>(b));
}
// Division by zero of the true divisions is IEEE's (inf, -inf or nan), as
// torch's div.int, div.float and floordiv.float; floordiv.int raises.
double div_int(int64_t a, int64_t b) {
  return static_cast<double>(a) / static_cast<double>(b);
}
int64_t floordiv_int(int64_t a, int64_t b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::floordiv.int: integer division or modulo by zero");
  if (b == -1) return sub_int(0, a);  // INT64_MIN // -1 wraps
  int64_t q = a / b;
  // C++ truncates toward zero; Python floors.
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t neg_int(int64_t a) { return sub_int(0, a); }
bool lt_int(int64_t a, int64_t b) { return a < b; }
bool le_int(int64_t a, int64_t b) { return a <= b; }
bool gt_int(int64_t a, int64_t b) { return a > b; }
bool ge_int(int64_t a, int64_t b) { return a >= b; }
bool eq_int(int64_t a, int64_t b) { return a == b; }
bool ne_int(int64_t a, int64_t b) { return a != b; }

// ---- float
// ----------------------------------------------------------------------

double add_float(double a, double b) { return a + b; }
double sub_float(double a, double b) { return a - b; }
double mul_float(double a, double b) { return a * b; }
double div_float(double a, double b) {
  return a / b;
}
double floordiv_float(double a, double b) {
  if (b == 0) return a / b;  // IEEE: inf, -inf or nan
  // Python's float floor division: exact through the remainder, so that
  // a == b * (a // b) + a % b with the remainder taking b's sign.
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}
double neg_float(double a) { return -a; }
bool lt_float(double a, double b) { return a < b; }
bool le_float(double a, double b) { return a <= b; }
bool gt_float(double a, double b) { return a > b; }
bool ge_float(double a, double b) { return a >= b; }
bool eq_float(double a, double b) { return a == b; }
bool ne_float(double a, double b) { return a != b; }

// ---- bool
// -----------------------------------------------------------------------

bool not_bool(bool a) { return !a; }
bool and_bool(bool a, bool b) { return a && b; }
bool or_bool(bool a, bool b) { return a || b; }

// ---- Conversions
// ------------------------------------------------------------------

int64_t int_float(double a) {
  TURNOUT_CHECK(!std::isnan(a), ErrorKind::InvalidArgument,
                "aten::Int.float: cannot convert float NaN to integer");
  TURNOUT_CHECK(!std::isinf(a), ErrorKind::InvalidArgument,
                "aten::Int.float: cannot convert float infinity to integer");
  // Truncation fits when -2^63 - 1 < a < 2^63.
  TURNOUT_CHECK(a >= -9223372036854775808.0 && a < 9223372036854775808.0,
                ErrorKind::InvalidArgument, "aten::Int.float: ", a,
                " does not fit in a 64-bit int");
  return static_cast<int64_t>(a);
}
double float_int(int64_t a) { return static_cast<double>(a); }

Scalar local_scalar_dense(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::_local_scalar_dense", "")
                             .typed<Scalar(const Tensor&)>();
  return op.call(self);
}

// aten::item, as torch's: composite (a mode or a subclass handler sees the
// _local_scalar_dense it calls), with the checks before the read.
Scalar item_composite(const Tensor& self) {
  TURNOUT_CHECK(self.defined(), ErrorKind::InvalidArgument,
                "item(): expected a defined tensor");
  TURNOUT_CHECK(self.numel() == 1, ErrorKind::InvalidArgument, "a Tensor with ",
                self.numel(), " elements cannot be converted to Scalar");
  TURNOUT_CHECK(!self.is_meta(), ErrorKind::NotImplemented,
                "Tensor.item() cannot be called on meta tensors");
  return local_scalar_dense(self);
}

// aten::_local_scalar_dense on the CPU: the first element's value, as
// torch's (item() checks for one element before). A tensor with no element
// is an error (torch 1.13 reads past its storage).
Scalar local_scalar_dense_cpu(const Tensor& self) {
  TURNOUT_CHECK(self.numel() > 0, ErrorKind::InvalidArgument,
                "_local_scalar_dense(): the tensor has no element to read "
                "(sizes ", shapeString(self.sizes()),
                "); item() takes a one-element tensor");
  return visitDtype(self.scalar_type(), "item", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = *static_cast<const T*>(self.data_ptr());
    if constexpr (std::is_same_v<T, bool>) {
      return Scalar(v);
    } else if constexpr (std::is_integral_v<T>) {
      return Scalar(static_cast<int64_t>(v));
    } else {
      return Scalar(static_cast<double>(convertElement<double>(v)));
    }
  });
}

int64_t int_tensor(const Tensor& a) { return item(a).to<int64_t>(); }
double float_tensor(const Tensor& a) { return item(a).to<double>(); }

Scalar scalar_implicit(const Tensor& a) {
  TURNOUT_CHECK(a.defined() && a.dim() == 0, ErrorKind::InvalidArgument,
                "ScalarImplicit(): expected a 0-dim tensor, got one of sizes [",
                a.defined() ? absl::StrJoin(a.sizes(), ", ") : "undefined",
                "]");
  return item(a);
}

Tensor num_to_tensor(const Scalar& a) {
  // As TorchScript's scalar_to_tensor: Long, Double or Bool, on the CPU.
  return full({}, a, a.type());
}

// The metadata operators a Python tensor subclass answers in its handler
// (dispatch_sizes_strides_policy, dispatch_device, dispatch_layout): below
// the Python key they read the stored values (the *_default() readers), so
// a handler that passes the call on to them is not asked again (torch
// 1.13's ask the policy again and recurse).
std::vector<int64_t> size_default(const Tensor& self) {
  IntArrayRef s = self.unsafeGetTensorImpl()->sizes_default();
  return std::vector<int64_t>(s.begin(), s.end());
}
// `dim` of a tensor with `ndim` dimensions for size.int and sym_stride.int, as
// torch 1.13's Tensor.size(dim): a 0-dim tensor has none to read.
int64_t metadataDim(int64_t dim, size_t ndim) {
  TURNOUT_CHECK(ndim > 0, ErrorKind::Index, "Dimension specified as ", dim,
                " but tensor has no dimensions");
  return maybeWrapDim(dim, static_cast<int64_t>(ndim));
}
int64_t size_int(const Tensor& self, int64_t dim) {
  IntArrayRef s = self.unsafeGetTensorImpl()->sizes_default();
  return s[metadataDim(dim, s.size())];
}
int64_t dim_default(const Tensor& self) {
  return self.unsafeGetTensorImpl()->dim_default();
}
std::vector<int64_t> sym_stride_default(const Tensor& self) {
  self.unsafeGetTensorImpl()->checkStrided("sym_stride");
  IntArrayRef s = self.unsafeGetTensorImpl()->strides_default();
  return std::vector<int64_t>(s.begin(), s.end());
}
int64_t sym_stride_int(const Tensor& self, int64_t dim) {
  self.unsafeGetTensorImpl()->checkStrided("sym_stride.int");
  IntArrayRef s = self.unsafeGetTensorImpl()->strides_default();
  return s[metadataDim(dim, s.size())];
}
int64_t sym_numel(const Tensor& self) {
  return self.unsafeGetTensorImpl()->numel_default();
}
int64_t sym_storage_offset(const Tensor& self) {
  return self.unsafeGetTensorImpl()->storage_offset_default();
}
bool is_contiguous_memory_format(const Tensor& self,
                                 MemoryFormat memory_format) {
  if (memory_format == MemoryFormat::Contiguous) {
    return self.unsafeGetTensorImpl()->is_contiguous_default();
  }
  return isContiguousAs(self, memory_format);
}
Layout prim_layout(const Tensor& a) { return a.layout(); }

// ---- Lists (boxed: t[] is any list)
// -------------------------------------------------

int64_t listSize(const IValue& list, const char* op) {
  switch (list.tag()) {
    case IValue::Tag::IntList:
      return static_cast<int64_t>(list.toIntListRef().size());
    case IValue::Tag::DoubleList:
      return static_cast<int64_t>(list.toDoubleListRef().size());
    case IValue::Tag::BoolList:
      return static_cast<int64_t>(list.toBoolListRef().size());
    case IValue::Tag::TensorList:
      return static_cast<int64_t>(list.toTensorListRef().size());
    case IValue::Tag::GenericList:
      return static_cast<int64_t>(list.toListRef().size());
    default:
      break;
  }
  TURNOUT_CHECK(false, ErrorKind::Type, op, ": expected a list, got ",
                list.tagKind());
  __builtin_unreachable();
}

IValue listElement(const IValue& list, int64_t i) {
  switch (list.tag()) {
    case IValue::Tag::IntList:
      return IValue(list.toIntListRef()[i]);
    case IValue::Tag::DoubleList:
      return IValue(list.toDoubleListRef()[i]);
    case IValue::Tag::BoolList:
      return IValue(static_cast<bool>(list.toBoolListRef()[i]));
    case IValue::Tag::TensorList:
      return IValue(list.toTensorListRef()[i]);
    default:
      return list.toListRef()[i];
  }
}

void getitem_t(const OperatorHandle&, Stack* stack) {
  int64_t idx = stack->back().toInt();
  stack->pop_back();
  IValue list = std::move(stack->back());
  stack->pop_back();
  const int64_t n = listSize(list, "aten::__getitem__.t");
  const int64_t i = idx < 0 ? idx + n : idx;
  TURNOUT_CHECK(i >= 0 && i < n, ErrorKind::Index,
                "aten::__getitem__.t: list index out of range (index ", idx,
                ", list of length ", n, ")");
  stack->push_back(listElement(list, i));
}

void len_t(const OperatorHandle&, Stack* stack) {
  IValue list = std::move(stack->back());
  stack->pop_back();
  stack->push_back(IValue(listSize(list, "aten::len.t")));
}

}  // namespace

Scalar item(const Tensor& self) {
  static const auto op = Dispatcher::singleton()
                             .findSchemaOrThrow("aten::item", "")
                             .typed<Scalar(const Tensor&)>();
  return op.call(self);
}


}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.tagsFor(&turnout::atenTags);  // torch's tags (kernels/aten_tags.h)
  for (const char* op : {"add", "sub", "mul"}) {
    m.def(std::string(op) + ".int(int a, int b) -> int");
    m.def(std::string(op) + ".float(float a, float b) -> float");
  }
  m.def("div.int(int a, int b) -> float");
  m.def("div.float(float a, float b) -> float");
  m.def("floordiv.int(int a, int b) -> int");
  m.def("floordiv.float(float a, float b) -> float");
  m.def("neg.int(int a) -> int");
  m.def("neg.float(float a) -> float");
  for (const char* op : {"lt", "le", "gt", "ge", "eq", "ne"}) {
    m.def(std::string(op) + ".int(int a, int b) -> bool");
    m.def(std::string(op) + ".float(float a, float b) -> bool");
  }
  m.def("__getitem__.t(t[](a) list, int idx) -> t(*)");
  m.def("len.t(t[] a) -> int");
  m.def("Int.Tensor(Tensor a) -> int");
  m.def("Int.float(float a) -> int");
  m.def("Float.Tensor(Tensor a) -> float");
  m.def("Float.int(int a) -> float");
  m.def("ScalarImplicit(Tensor a) -> Scalar");
  m.def("item(Tensor self) -> Scalar");
  m.def("_local_scalar_dense(Tensor self) -> Scalar");
  m.def("size(Tensor self) -> int[]");
  m.def("size.int(Tensor self, int dim) -> int");
  m.def("dim(Tensor self) -> int");
  m.def("sym_size(Tensor self) -> SymInt[]");
  m.def("sym_size.int(Tensor self, int dim) -> SymInt");
  m.def("sym_stride(Tensor self) -> SymInt[]");
  m.def("sym_stride.int(Tensor self, int dim) -> SymInt");
  m.def("sym_numel(Tensor self) -> SymInt");
  m.def("sym_storage_offset(Tensor self) -> SymInt");
  m.def("is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) "
        "-> bool");
  m.def("__not__(bool self) -> bool");
  m.def("__and__.bool(bool a, bool b) -> bool");
  m.def("__or__.bool(bool a, bool b) -> bool");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using turnout::CppFunction;
  m.impl("add.int", TURNOUT_FN(turnout::add_int));
  m.impl("sub.int", TURNOUT_FN(turnout::sub_int));
  m.impl("mul.int", TURNOUT_FN(turnout::mul_int));
  m.impl("div.int", TURNOUT_FN(turnout::div_int));
  m.impl("floordiv.int", TURNOUT_FN(turnout::floordiv_int));
  m.impl("neg.int", TURNOUT_FN(turnout::neg_int));
  m.impl("lt.int", TURNOUT_FN(turnout::lt_int));
  m.impl("le.int", TURNOUT_FN(turnout::le_int));
  m.impl("gt.int", TURNOUT_FN(turnout::gt_int));
  m.impl("ge.int", TURNOUT_FN(turnout::ge_int));
  m.impl("eq.int", TURNOUT_FN(turnout::eq_int));
  m.impl("ne.int", TURNOUT_FN(turnout::ne_int));
  m.impl("add.float", TURNOUT_FN(turnout::add_float));
  m.impl("sub.float", TURNOUT_FN(turnout::sub_float));
  m.impl("mul.float", TURNOUT_FN(turnout::mul_float));
  m.impl("div.float", TURNOUT_FN(turnout::div_float));
  m.impl("floordiv.float", TURNOUT_FN(turnout::floordiv_float));
  m.impl("neg.float", TURNOUT_FN(turnout::neg_float));
  m.impl("lt.float", TURNOUT_FN(turnout::lt_float));
  m.impl("le.float", TURNOUT_FN(turnout::le_float));
  m.impl("gt.float", TURNOUT_FN(turnout::gt_float));
  m.impl("ge.float", TURNOUT_FN(turnout::ge_float));
  m.impl("eq.float", TURNOUT_FN(turnout::eq_float));
  m.impl("ne.float", TURNOUT_FN(turnout::ne_float));
  m.impl("__getitem__.t",
         CppFunction::makeFromBoxedFunction(&turnout::getitem_t));
  m.impl("len.t", CppFunction::makeFromBoxedFunction(&turnout::len_t));
  m.impl("Int.Tensor", TURNOUT_FN(turnout::int_tensor));
  m.impl("Int.float", TURNOUT_FN(turnout::int_float));
  m.impl("Float.Tensor", TURNOUT_FN(turnout::float_tensor));
  m.impl("Float.int", TURNOUT_FN(turnout::float_int));
  m.impl("ScalarImplicit", TURNOUT_FN(turnout::scalar_implicit));
  m.impl("size", TURNOUT_FN(turnout::size_default));
  m.impl("dim", TURNOUT_FN(turnout::dim_default));
  m.impl("sym_size", TURNOUT_FN(turnout::size_default));
  m.impl("sym_size.int", TURNOUT_FN(turnout::size_int));
  m.impl("sym_stride", TURNOUT_FN(turnout::sym_stride_default));
  m.impl("sym_stride.int", TURNOUT_FN(turnout::sym_stride_int));
  m.impl("sym_numel", TURNOUT_FN(turnout::sym_numel));
  m.impl("sym_storage_offset", TURNOUT_FN(turnout::sym_storage_offset));
  m.impl("is_contiguous.memory_format",
         TURNOUT_FN(turnout::is_contiguous_memory_format));
  m.impl("__not__", TURNOUT_FN(turnout::not_bool));
  m.impl("__and__.bool", TURNOUT_FN(turnout::and_bool));
  m.impl("__or__.bool", TURNOUT_FN(turnout::or_bool));
}

TURNOUT_LIBRARY_FRAGMENT(prim, m) {
  m.def("NumToTensor.Scalar(Scalar a) -> Tensor");
  m.def("layout(Tensor a) -> Layout");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("item", TURNOUT_FN(turnout::item_composite));
  // As torch 1.13's (sym_size.int stays explicit, as its is).
  m.impl("size.int", TURNOUT_FN(turnout::size_int));
}

TURNOUT_LIBRARY_IMPL(aten, CPU, m) {
  m.impl("_local_scalar_dense", TURNOUT_FN(turnout::local_scalar_dense_cpu));
}

TURNOUT_LIBRARY_IMPL(prim, CompositeExplicitAutograd, m) {
  m.impl("NumToTensor.Scalar", TURNOUT_FN(turnout::num_to_tensor));
  m.impl("layout", TURNOUT_FN(turnout::prim_layout));
}

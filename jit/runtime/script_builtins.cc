// TorchScript's builtins over lists, strings, optionals, scalars, tuples,
// ranges and tensor metadata: the aten:: and prim:: operators that scripted
// code prints (aten::append, aten::sort.str, aten::__contains__,
// aten::format, aten::percentFormat, aten::__is__,
// prim::unchecked_cast, aten::remainder.int, prim::TupleIndex, prim::dtype,
// aten::__range_length, aten::tensor, ...), with torch 1.13's schemas and
// Python's semantics:
//   - lists are shared objects: aten::append, _set_item, insert, pop, ...
//     change the list every alias sees (the caller's too), as TorchScript's;
//   - % and // floor (Python's), and division by zero raises;
//   - str() and format() print values as TorchScript does (floats as the IR
//     prints them: 1., 0.10000000000000001, 1e+20; strings inside lists
//     unquoted: [a, b]); `fmt % args` (percentFormat) takes torch 1.13's
//     conversions only (%s %d %i %f %F %e %E %c %%).
// All are registered at CompositeExplicitAutograd, as kernels/scalar_ops.cc's
// (an operator without tensor arguments dispatches to the Undefined entry,
// which that alias fills). List operators over `t[]` are boxed kernels that
// serve every list representation (IntList, DoubleList, BoolList, TensorList
// and GenericList).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/library.h"
#include "dispatcher/schema/function_schema.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/dtype_dispatch.h"
#include "kernels/factory.h"
#include "kernels/scalar_ops.h"

namespace turnout {
namespace {

IValue pop(Stack* s) {
  IValue v = std::move(s->back());
  s->pop_back();
  return v;
}

// ---- Lists -----------------------------------------------------------------

template <class T>
T fromIValue(const IValue& v) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return v.toInt();
  } else if constexpr (std::is_same_v<T, double>) {
    return v.toDouble();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.toBool();
  } else if constexpr (std::is_same_v<T, Tensor>) {
    return v.toTensor();
  } else {
    return v;
  }
}

// Calls f(elements) with the list's mutable element vector (int64_t, double,
// bool, Tensor or IValue elements). The list object is shared: a change is
// seen by every IValue that holds it.
template <class F>
decltype(auto) visitList(const IValue& list, const char* op, F&& f) {
  switch (list.tag()) {
    case IValue::Tag::IntList: return f(list.toIntList()->elements());
    case IValue::Tag::DoubleList: return f(list.toDoubleList()->elements());
    case IValue::Tag::BoolList: return f(list.toBoolList()->elements());
    case IValue::Tag::TensorList: return f(list.toTensorList()->elements());
    case IValue::Tag::GenericList: return f(list.toGenericList()->elements());
    default: break;
  }
  throw Error(ErrorKind::Type,
              std::string(op) + ": expected a list, got " + list.tagKind());
}

// Python's == between two elements of a list: by value for numbers, bools,
// strings, None and devices; tensors and containers by identity.
bool elementEquals(const IValue& a, const IValue& b) {
  if ((a.isInt() || a.isDouble() || a.isBool()) &&
      (b.isInt() || b.isDouble() || b.isBool())) {
    if (a.isDouble() || b.isDouble()) {
      return (a.isDouble() ? a.toDouble()
                           : static_cast<double>(a.isInt() ? a.toInt()
                                                           : a.toBool())) ==
             (b.isDouble() ? b.toDouble()
                           : static_cast<double>(b.isInt() ? b.toInt()
                                                           : b.toBool()));
    }
    return (a.isInt() ? a.toInt() : a.toBool()) ==
           (b.isInt() ? b.toInt() : b.toBool());
  }
  if (a.isString() && b.isString()) return a.toStringRef() == b.toStringRef();
  if (a.isList() && b.isList()) {
    std::vector<IValue> x = a.toList(), y = b.toList();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!elementEquals(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.isTuple() && b.isTuple()) {
    const auto& x = a.toTupleRef().elements();
    const auto& y = b.toTupleRef().elements();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (!elementEquals(x[i], y[i])) return false;
    }
    return true;
  }
  return a.isSameIdentity(b);
}

template <class T>
IValue boxElement(const T& v) {
  return IValue(v);
}

// A list index as Python reads it: negative counts from the end.
int64_t normalizeIndex(int64_t idx, int64_t n, const char* op,
                       const char* what) {
  const int64_t i = idx < 0 ? idx + n : idx;
  TURNOUT_CHECK(i >= 0 && i < n, ErrorKind::Index, op, ": ", what,
                " (index ", idx, ", list of length ", n, ")");
  return i;
}

// aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)
void append_t(const OperatorHandle&, Stack* s) {
  IValue el = pop(s);
  visitList(s->back(), "aten::append.t", [&](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    v.push_back(fromIValue<T>(el));
  });
}

// aten::_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)
void set_item_t(const OperatorHandle&, Stack* s) {
  IValue el = pop(s);
  const int64_t idx = pop(s).toInt();
  visitList(s->back(), "aten::_set_item.t", [&](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    const int64_t i =
        normalizeIndex(idx, static_cast<int64_t>(v.size()),
                       "aten::_set_item.t", "list assignment index out of range");
    v[i] = fromIValue<T>(el);
  });
}

// aten::insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()
void insert_t(const OperatorHandle&, Stack* s) {
  IValue el = pop(s);
  int64_t idx = pop(s).toInt();
  IValue list = pop(s);
  visitList(list, "aten::insert.t", [&](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    const int64_t n = static_cast<int64_t>(v.size());
    // Python clamps: insert(-100, x) prepends, insert(100, x) appends.
    if (idx < 0) idx = std::max<int64_t>(idx + n, 0);
    idx = std::min(idx, n);
    v.insert(v.begin() + idx, fromIValue<T>(el));
  });
}

// aten::pop.t(t[](a!) self, int idx=-1) -> t(*)
void pop_t(const OperatorHandle&, Stack* s) {
  const int64_t idx = pop(s).toInt();
  IValue list = pop(s);
  s->push_back(visitList(list, "aten::pop.t", [&](auto& v) {
    TURNOUT_CHECK(!v.empty(), ErrorKind::Index,
                  "aten::pop.t: pop from empty list");
    const int64_t i = normalizeIndex(idx, static_cast<int64_t>(v.size()),
                                     "aten::pop.t", "pop index out of range");
    IValue out = boxElement(v[i]);
    v.erase(v.begin() + i);
    return out;
  }));
}

// aten::clear.t(t[](a!) self) -> ()
void clear_t(const OperatorHandle&, Stack* s) {
  visitList(pop(s), "aten::clear.t", [](auto& v) { v.clear(); });
}

// aten::reverse.t(t[](a!) self) -> ()
void reverse_t(const OperatorHandle&, Stack* s) {
  visitList(pop(s), "aten::reverse.t",
            [](auto& v) { std::reverse(v.begin(), v.end()); });
}

// aten::extend.t(t[](a!) self, t[] other) -> ()
void extend_t(const OperatorHandle&, Stack* s) {
  std::vector<IValue> other = pop(s).toList();
  visitList(pop(s), "aten::extend.t", [&](auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    for (const IValue& e : other) v.push_back(fromIValue<T>(e));
  });
}

// A new list of the same representation holding `elements`.
IValue sameKindList(const IValue& like, std::vector<IValue> elements) {
  switch (like.tag()) {
    case IValue::Tag::IntList: {
      std::vector<int64_t> v;
      for (const IValue& e : elements) v.push_back(e.toInt());
      return IValue(std::move(v));
    }
    case IValue::Tag::DoubleList: {
      std::vector<double> v;
      for (const IValue& e : elements) v.push_back(e.toDouble());
      return IValue(std::move(v));
    }
    case IValue::Tag::BoolList: {
      std::vector<bool> v;
      for (const IValue& e : elements) v.push_back(e.toBool());
      return IValue(std::move(v));
    }
    case IValue::Tag::TensorList: {
      std::vector<Tensor> v;
      for (const IValue& e : elements) v.push_back(e.toTensor());
      return IValue(std::move(v));
    }
    default:
      return IValue(std::move(elements));
  }
}

// aten::list.t(t[] l) -> t[]  and aten::copy.t: a shallow copy.
void list_t(const OperatorHandle&, Stack* s) {
  IValue l = pop(s);
  s->push_back(sameKindList(l, l.toList()));
}

// aten::add.t(t[] a, t[] b) -> t[]: a new list.
void add_t(const OperatorHandle&, Stack* s) {
  IValue b = pop(s);
  IValue a = pop(s);
  std::vector<IValue> out = a.toList();
  for (IValue& e : b.toList()) out.push_back(std::move(e));
  s->push_back(sameKindList(a, std::move(out)));
}

// aten::__contains__.{int,float,str}_list(T[] l, T item) -> bool
void contains_list(const OperatorHandle&, Stack* s) {
  IValue item = pop(s);
  IValue l = pop(s);
  bool found = false;
  for (const IValue& e : l.toList()) {
    if (elementEquals(e, item)) {
      found = true;
      break;
    }
  }
  s->push_back(IValue(found));
}

// aten::index.list_T(T[] self, T el) -> int
void index_list(const OperatorHandle&, Stack* s) {
  IValue item = pop(s);
  IValue l = pop(s);
  std::vector<IValue> es = l.toList();
  for (size_t i = 0; i < es.size(); ++i) {
    if (elementEquals(es[i], item)) {
      s->push_back(IValue(static_cast<int64_t>(i)));
      return;
    }
  }
  throw Error(ErrorKind::InvalidArgument,
              "aten::index: 'list.index(x)': x not in list");
}

// aten::count.T(T[] self, T el) -> int
void count_list(const OperatorHandle&, Stack* s) {
  IValue item = pop(s);
  IValue l = pop(s);
  int64_t n = 0;
  for (const IValue& e : l.toList()) n += elementEquals(e, item) ? 1 : 0;
  s->push_back(IValue(n));
}

// The strings of a str[] for sort/sorted/remove, checked before anything
// changes (a failed call leaves the list as it was); null for an empty list
// that is not generic (one built from Python's [] may not be).
std::vector<IValue>* strElements(const IValue& l, const char* op) {
  return visitList(l, op, [&](auto& v) -> std::vector<IValue>* {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (std::is_same_v<T, IValue>) {
      for (const IValue& e : v) {
        TURNOUT_CHECK(e.isString(), ErrorKind::Type, op,
                      ": expected a list of str, found an element of type ",
                      e.tagKind());
      }
      return &v;
    } else {
      TURNOUT_CHECK(v.empty(), ErrorKind::Type, op,
                    ": expected a list of str, got ", l.tagKind());
      return nullptr;
    }
  });
}

// Sorts strings by their bytes, which for UTF-8 is Python's order (by code
// point). Stable both ways, as Python's sort(reverse=True).
void sortStrings(std::vector<IValue>& v, bool reverse) {
  auto less = [](const IValue& a, const IValue& b) {
    return a.toStringRef() < b.toStringRef();
  };
  if (reverse) {
    std::stable_sort(v.begin(), v.end(), [&](const IValue& a, const IValue& b) {
      return less(b, a);
    });
  } else {
    std::stable_sort(v.begin(), v.end(), less);
  }
}

// aten::sort.str(str[](a!) self, bool reverse=False) -> (): in place, seen
// by every alias of the list (list.sort()).
void sort_str(const OperatorHandle&, Stack* s) {
  const bool reverse = pop(s).toBool();
  IValue l = pop(s);
  if (std::vector<IValue>* v = strElements(l, "aten::sort.str")) {
    sortStrings(*v, reverse);
  }
}

// aten::sorted.str(str[](a) input) -> str[]: a sorted copy (sorted(l));
// torch 1.13 has no `reverse` here.
void sorted_str(const OperatorHandle&, Stack* s) {
  IValue l = pop(s);
  std::vector<IValue> copy;
  if (std::vector<IValue>* v = strElements(l, "aten::sorted.str")) copy = *v;
  sortStrings(copy, false);
  s->push_back(IValue(std::move(copy)));
}

// aten::remove.str(str[](a!) self, str el) -> (): drops the first element
// equal to `el`, or raises (list.remove(x)).
void remove_str(const OperatorHandle&, Stack* s) {
  IValue el = pop(s);
  IValue l = pop(s);
  std::vector<IValue>* v = strElements(l, "aten::remove.str");
  const std::string& x = el.toStringRef();
  auto it = v == nullptr
                ? std::vector<IValue>::iterator()
                : std::find_if(v->begin(), v->end(), [&](const IValue& e) {
                    return e.toStringRef() == x;
                  });
  TURNOUT_CHECK(v != nullptr && it != v->end(), ErrorKind::InvalidArgument,
                "aten::remove.str: list.remove(x): x not in list (x = \"", x,
                "\")");
  v->erase(it);
}

// prim::min.self_T / prim::max.self_T (T[] self) -> T
template <bool kMax>
void extreme_self(const OperatorHandle&, Stack* s) {
  IValue l = pop(s);
  s->push_back(visitList(l, kMax ? "prim::max" : "prim::min", [&](auto& v) {
    TURNOUT_CHECK(!v.empty(), ErrorKind::InvalidArgument,
                  kMax ? "prim::max" : "prim::min",
                  ": arg is an empty sequence");
    using T = typename std::decay_t<decltype(v)>::value_type;
    T best = v[0];
    for (size_t i = 1; i < v.size(); ++i) {
      const T x = v[i];
      if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                    std::is_same_v<T, bool>) {
        // NaN propagates, as torch's min/max of a list.
        if (kMax ? (x > best || std::isnan(static_cast<double>(x)))
                 : (x < best || std::isnan(static_cast<double>(x)))) {
          best = x;
        }
      } else {
        throw Error(ErrorKind::Type, "prim::min/max: a list of numbers or "
                                     "bools is expected");
      }
    }
    return IValue(best);
  }));
}

// prim::min.T_list / prim::max.T_list (T[] l, T[] r) -> T[]: the smaller /
// larger list in lexicographic order, as Python's min/max of two lists.
template <bool kMax>
void extreme_lists(const OperatorHandle&, Stack* s) {
  IValue r = pop(s);
  IValue l = pop(s);
  std::vector<IValue> a = l.toList(), b = r.toList();
  int cmp = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()) && cmp == 0; ++i) {
    const double x = a[i].isDouble() ? a[i].toDouble()
                     : a[i].isBool() ? a[i].toBool()
                                     : static_cast<double>(a[i].toInt());
    const double y = b[i].isDouble() ? b[i].toDouble()
                     : b[i].isBool() ? b[i].toBool()
                                     : static_cast<double>(b[i].toInt());
    cmp = x < y ? -1 : (x > y ? 1 : 0);
  }
  if (cmp == 0) cmp = a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
  // Ties pick the first, as Python.
  s->push_back(kMax ? (cmp >= 0 ? l : r) : (cmp <= 0 ? l : r));
}

// ---- Strings ---------------------------------------------------------------

// A value as TorchScript's str() and format() print it.
void appendStr(std::string& out, const IValue& v, const char* op) {
  switch (v.tag()) {
    case IValue::Tag::None: out += "None"; return;
    case IValue::Tag::Bool: out += v.toBool() ? "True" : "False"; return;
    case IValue::Tag::Int: out += std::to_string(v.toInt()); return;
    case IValue::Tag::Double: {
      // As the IR prints floats, but -0.0 prints as "0." (torch 1.13's
      // str(-0.0); its IR prints "-0.").
      const double d = v.toDouble();
      DefaultValue::fromDouble(d == 0 ? 0.0 : d).appendTo(out);
      return;
    }
    case IValue::Tag::String: out += v.toStringRef(); return;
    case IValue::Tag::Device: out += v.toDevice().str(); return;
    case IValue::Tag::Tuple: {
      const auto& es = v.toTupleRef().elements();
      out += '(';
      for (size_t i = 0; i < es.size(); ++i) {
        if (i > 0) out += ", ";
        appendStr(out, es[i], op);
      }
      out += ')';
      return;
    }
    case IValue::Tag::Dict: {
      // {a: 1, b: 2}: keys and values as str() prints them, as torch's.
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.toDictRef().entries()) {
        if (!first) out += ", ";
        first = false;
        appendStr(out, key, op);
        out += ": ";
        appendStr(out, value, op);
      }
      out += '}';
      return;
    }
    case IValue::Tag::Tensor:
      throw Error(ErrorKind::NotImplemented,
                  std::string(op) +
                      ": printing a Tensor as text is not supported; print "
                      "its values (x.tolist() in Python) instead");
    default:
      if (v.isList()) {
        std::vector<IValue> es = v.toList();
        out += '[';
        for (size_t i = 0; i < es.size(); ++i) {
          if (i > 0) out += ", ";
          appendStr(out, es[i], op);
        }
        out += ']';
        return;
      }
      out += v.tagKind();
  }
}

// aten::str(t elem) -> str
void str_(const OperatorHandle&, Stack* s) {
  IValue v = pop(s);
  std::string out;
  appendStr(out, v, "aten::str");
  s->push_back(IValue(std::move(out)));
}

// aten::format(str self, ...) -> str: each "{}" takes the next argument, as
// TorchScript's. Vararg: the interpreter pushes the node's input count
// after its inputs (interpreter.h).
void format_(const OperatorHandle&, Stack* s) {
  TURNOUT_CHECK(!s->empty() && s->back().isInt(), ErrorKind::InvalidArgument,
                "aten::format: called without its input count; a vararg "
                "operator is called by the graph interpreter, which pushes "
                "the count after the inputs");
  const int64_t count = pop(s).toInt();
  TURNOUT_CHECK(count >= 1 && static_cast<size_t>(count) <= s->size(),
                ErrorKind::InvalidArgument,
                "aten::format: expected the format string and its arguments "
                "on the stack");
  const size_t base = s->size() - static_cast<size_t>(count);
  const std::string& fmt = (*s)[base].toStringRef();
  std::string out;
  size_t pos = 0;
  for (size_t arg = base + 1; arg < s->size(); ++arg) {
    size_t at = fmt.find("{}", pos);
    TURNOUT_CHECK(at != std::string::npos, ErrorKind::InvalidArgument,
                  "aten::format: too many arguments for format string: ",
                  fmt);
    out.append(fmt, pos, at - pos);
    appendStr(out, (*s)[arg], "aten::format");
    pos = at + 2;
  }
  out.append(fmt, pos, std::string::npos);
  s->resize(base);
  s->push_back(IValue(std::move(out)));
}

// One conversion of aten::percentFormat: `key` (the byte after '%') applied
// to `v`.
void appendPercent(std::string& out, char key, const IValue& v) {
  constexpr const char* kOp = "aten::percentFormat";
  // torch 1.13 fails on a bool where it wants a number (an internal assert).
  const char* bool_hint =
      v.isBool() ? " (a bool is not a number here, as in torch 1.13; "
                   "convert it with int() first)"
                 : "";
  switch (key) {
    case 's':
      appendStr(out, v, kOp);
      return;
    case 'd':
    case 'i': {
      if (v.isInt()) {
        out += std::to_string(v.toInt());
        return;
      }
      TURNOUT_CHECK(v.isDouble(), ErrorKind::Type, kOp, ": %", key,
                    " requires a number for formatting, but got ", v.tagKind(),
                    bool_hint);
      // torch 1.13 converts the float to a 32-bit int: truncation inside
      // that range, a platform's undefined value outside it (and for nan
      // and inf), where turnout raises instead.
      const double x = v.toDouble();
      TURNOUT_CHECK(x > -2147483649.0 && x < 2147483648.0,
                    ErrorKind::InvalidArgument, kOp, ": %", key,
                    " of the float ", x,
                    ", outside the 32-bit int range torch 1.13 converts it "
                    "to (its result is undefined there); format int(x) "
                    "instead");
      out += std::to_string(static_cast<int64_t>(x));
      return;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E': {
      TURNOUT_CHECK(v.isInt() || v.isDouble(), ErrorKind::Type, kOp, ": %", key,
                    " requires a number for formatting, but got ", v.tagKind(),
                    bool_hint);
      // torch 1.13 rounds to a 32-bit float first (an int directly, not via
      // a double): "%f" % 123456789 is 123456792.000000, and a double past
      // the float range is inf. %F prints nan and inf in lower case, as %f.
      float x = 0;
      if (v.isInt()) {
        x = static_cast<float>(v.toInt());
      } else {
        // A double that rounds past FLT_MAX (from FLT_MAX + half an ulp on)
        // is inf, as IEEE converts it; spelled out, since C++ leaves the
        // conversion of an out-of-range value undefined.
        const double d = v.toDouble();
        x = std::fabs(d) >= 3.4028235677973366e38
                ? static_cast<float>(std::copysign(INFINITY, d))
                : static_cast<float>(d);
      }
      const char* spec = key == 'e' ? "%e" : key == 'E' ? "%E" : "%f";
      char buf[64];  // FLT_MAX with %f is 47 bytes
      const int n =
          std::snprintf(buf, sizeof buf, spec, static_cast<double>(x));
      TURNOUT_INTERNAL_ASSERT(n > 0 && static_cast<size_t>(n) < sizeof buf, kOp,
                              ": formatting ", x, " with ", spec, " gave ", n,
                              " bytes");
      out.append(buf, static_cast<size_t>(n));
      return;
    }
    case 'c':
      // An int's low byte (torch's char conversion: %c of 321 is 'A').
      if (v.isInt()) {
        out += static_cast<char>(static_cast<uint64_t>(v.toInt()) & 0xff);
        return;
      }
      TURNOUT_CHECK(
          v.isString() && v.toStringRef().size() == 1, ErrorKind::Type, kOp,
          ": %c requires an int or a one-byte string for "
          "formatting, but got ",
          v.isString() ? "a string of " +
                             std::to_string(v.toStringRef().size()) + " bytes"
                       : std::string(v.tagKind()));
      out += v.toStringRef();
      return;
    default:
      throw Error(ErrorKind::InvalidArgument,
                  std::string(kOp) + ": the specifier %" + key +
                      " is not supported in TorchScript format strings "
                      "(torch 1.13 takes %s, %d, %i, %f, %F, %e, %E, %c "
                      "and %%, without flags, width or precision)");
  }
}

// aten::percentFormat(str self, ...) -> str: `fmt % value`, as TorchScript
// prints and runs it: a tuple value gives one argument per element, any
// other value is the one argument. The conversions are torch 1.13's (see
// appendPercent); '%' at the end of the string, too few arguments and too
// many raise, as torch's, scanning left to right (so "%g" % () is "too
// few", not "not supported"). Vararg: the graph passes exactly two inputs.
void percentFormat_(const OperatorHandle&, Stack* s) {
  constexpr const char* kOp = "aten::percentFormat";
  TURNOUT_CHECK(!s->empty() && s->back().isInt(), ErrorKind::InvalidArgument,
                kOp,
                ": called without its input count; a vararg operator is "
                "called by the graph interpreter, which pushes the count "
                "after the inputs");
  const int64_t count = pop(s).toInt();
  TURNOUT_CHECK(count == 2 && s->size() >= 2, ErrorKind::InvalidArgument, kOp,
                ": expected two inputs, the format string and one "
                "value (a tuple for several values), found ",
                count);
  const size_t base = s->size() - 2;
  const std::string& fmt = (*s)[base].toStringRef();
  const IValue& value = (*s)[base + 1];
  const IValue* args = &value;
  size_t num_args = 1;
  if (value.isTuple()) {
    const std::vector<IValue>& es = value.toTupleRef().elements();
    args = es.data();
    num_args = es.size();
  }
  std::string out;
  size_t used = 0;
  size_t pos = 0;
  for (size_t at; (at = fmt.find('%', pos)) != std::string::npos;) {
    out.append(fmt, pos, at - pos);
    TURNOUT_CHECK(at + 1 < fmt.size(), ErrorKind::InvalidArgument, kOp,
                  ": incomplete format specifier: \"", fmt,
                  "\" ends with '%' (write %% for a percent sign)");
    const char key = fmt[at + 1];
    pos = at + 2;
    if (key == '%') {
      out += '%';
      continue;
    }
    TURNOUT_CHECK(used < num_args, ErrorKind::InvalidArgument, kOp,
                  ": too few arguments for format string \"", fmt, "\" (",
                  num_args, " given)");
    appendPercent(out, key, args[used++]);
  }
  out.append(fmt, pos, std::string::npos);
  TURNOUT_CHECK(used == num_args, ErrorKind::InvalidArgument, kOp,
                ": too many arguments for format string \"", fmt, "\" (",
                num_args, " given, it converts ", used, ")");
  s->resize(base);
  s->push_back(IValue(std::move(out)));
}

// aten::len.str(str s) -> int
int64_t len_str(std::string s) { return static_cast<int64_t>(s.size()); }
std::string add_str(std::string a, std::string b) { return a + b; }
bool eq_str(std::string a, std::string b) { return a == b; }
bool ne_str(std::string a, std::string b) { return a != b; }
bool lt_str(std::string a, std::string b) { return a < b; }
bool gt_str(std::string a, std::string b) { return a > b; }

// aten::warn(str message, int stacklevel=2) -> ()
void warn_(std::string message, int64_t stacklevel) {
  (void)stacklevel;
  ::turnout::warn(message);
}

// ---- Optionals and unions ----------------------------------------------------

void is_(const OperatorHandle&, Stack* s) {
  IValue b = pop(s);
  IValue a = pop(s);
  s->push_back(IValue(a.isSameIdentity(b)));
}
void isnot_(const OperatorHandle&, Stack* s) {
  IValue b = pop(s);
  IValue a = pop(s);
  s->push_back(IValue(!a.isSameIdentity(b)));
}
// prim::unchecked_cast(t x) -> t: the value itself (its static type changes).
void unchecked_cast(const OperatorHandle&, Stack*) {}

// ---- Scalars ---------------------------------------------------------------

int64_t checkedFloatToInt(double a, const char* op) {
  TURNOUT_CHECK(!std::isnan(a), ErrorKind::InvalidArgument, op,
                ": cannot convert float NaN to integer");
  TURNOUT_CHECK(!std::isinf(a), ErrorKind::InvalidArgument, op,
                ": cannot convert float infinity to integer");
  TURNOUT_CHECK(a >= -9223372036854775808.0 && a < 9223372036854775808.0,
                ErrorKind::InvalidArgument, op, ": ", a,
                " does not fit in a 64-bit int");
  return static_cast<int64_t>(a);
}

bool bool_tensor(const Tensor& a) {
  TURNOUT_CHECK(a.defined() && a.numel() == 1, ErrorKind::InvalidArgument,
                "aten::Bool.Tensor: Boolean value of Tensor with ",
                a.defined() ? a.numel() : 0,
                " values is ambiguous; reduce it first (any(), all())");
  return item(a).to<bool>();
}
bool bool_int(int64_t a) { return a != 0; }
bool bool_float(double a) { return a != 0; }
int64_t int_bool(bool a) { return a ? 1 : 0; }

int64_t remainder_int(int64_t a, int64_t b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::remainder.int: integer division or modulo by zero");
  if (b == -1) return 0;  // INT64_MIN % -1 overflows in C++
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double remainder_float(double a, double b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::remainder.float: float modulo by zero");
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  if (r == 0) r = std::copysign(0.0, b);
  return r;
}
double remainder_int_float(int64_t a, double b) {
  return remainder_float(static_cast<double>(a), b);
}
double remainder_float_int(double a, int64_t b) {
  return remainder_float(a, static_cast<double>(b));
}

double floordiv_float(double a, double b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::floordiv: float floor division by zero");
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  if (div - floor_div > 0.5) floor_div += 1.0;
  return floor_div;
}
double floordiv_int_float(int64_t a, double b) {
  return floordiv_float(static_cast<double>(a), b);
}
double floordiv_float_int(double a, int64_t b) {
  return floordiv_float(a, static_cast<double>(b));
}

int64_t floor_int(int64_t a) { return a; }
int64_t floor_float(double a) {
  return checkedFloatToInt(std::floor(a), "aten::floor.float");
}
int64_t ceil_int(int64_t a) { return a; }
int64_t ceil_float(double a) {
  return checkedFloatToInt(std::ceil(a), "aten::ceil.float");
}

int64_t abs_int(int64_t a) {
  return a < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a;
}
double abs_float(double a) { return std::fabs(a); }

double add_int_float(int64_t a, double b) { return static_cast<double>(a) + b; }
double add_float_int(double a, int64_t b) { return a + static_cast<double>(b); }
double sub_int_float(int64_t a, double b) { return static_cast<double>(a) - b; }
double sub_float_int(double a, int64_t b) { return a - static_cast<double>(b); }
double mul_int_float(int64_t a, double b) { return static_cast<double>(a) * b; }
double mul_float_int(double a, int64_t b) { return a * static_cast<double>(b); }
double div_int_float(int64_t a, double b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::div: float division by zero");
  return static_cast<double>(a) / b;
}
double div_float_int(double a, int64_t b) {
  TURNOUT_CHECK(b != 0, ErrorKind::InvalidArgument,
                "aten::div: float division by zero");
  return a / static_cast<double>(b);
}
bool lt_int_float(int64_t a, double b) { return static_cast<double>(a) < b; }
bool lt_float_int(double a, int64_t b) { return a < static_cast<double>(b); }
bool le_int_float(int64_t a, double b) { return static_cast<double>(a) <= b; }
bool le_float_int(double a, int64_t b) { return a <= static_cast<double>(b); }
bool gt_int_float(int64_t a, double b) { return static_cast<double>(a) > b; }
bool gt_float_int(double a, int64_t b) { return a > static_cast<double>(b); }
bool ge_int_float(int64_t a, double b) { return static_cast<double>(a) >= b; }
bool ge_float_int(double a, int64_t b) { return a >= static_cast<double>(b); }
bool eq_int_float(int64_t a, double b) { return static_cast<double>(a) == b; }
bool eq_float_int(double a, int64_t b) { return a == static_cast<double>(b); }
bool ne_int_float(int64_t a, double b) { return static_cast<double>(a) != b; }
bool ne_float_int(double a, int64_t b) { return a != static_cast<double>(b); }
bool eq_bool(bool a, bool b) { return a == b; }
bool ne_bool(bool a, bool b) { return a != b; }

double pow_float(double a, double b) { return std::pow(a, b); }
double pow_int(int64_t a, int64_t b) {
  return std::pow(static_cast<double>(a), static_cast<double>(b));
}
double pow_int_float(int64_t a, double b) {
  return std::pow(static_cast<double>(a), b);
}
double pow_float_int(double a, int64_t b) {
  return std::pow(a, static_cast<double>(b));
}

template <bool kMax>
int64_t extreme_int(int64_t a, int64_t b) {
  return kMax ? std::max(a, b) : std::min(a, b);
}
template <bool kMax>
double extreme_float(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return kMax ? std::max(a, b) : std::min(a, b);
}
template <bool kMax>
double extreme_int_float(int64_t a, double b) {
  return extreme_float<kMax>(static_cast<double>(a), b);
}
template <bool kMax>
double extreme_float_int(double a, int64_t b) {
  return extreme_float<kMax>(a, static_cast<double>(b));
}

// ---- Tuples ----------------------------------------------------------------

// prim::TupleIndex(Any tup, int i) -> Any
void tuple_index(const OperatorHandle&, Stack* s) {
  const int64_t idx = pop(s).toInt();
  IValue t = pop(s);
  TURNOUT_CHECK(t.isTuple(), ErrorKind::Type,
                "prim::TupleIndex: expected a tuple, got ", t.tagKind());
  const auto& es = t.toTupleRef().elements();
  const int64_t n = static_cast<int64_t>(es.size());
  const int64_t i = idx < 0 ? idx + n : idx;
  TURNOUT_CHECK(i >= 0 && i < n, ErrorKind::Index,
                "prim::TupleIndex: tuple index out of range (index ", idx,
                ", tuple of length ", n, ")");
  s->push_back(es[i]);
}

// ---- Tensor metadata ---------------------------------------------------------

Device device_(const Tensor& a) { return a.device(); }
bool is_cuda_(const Tensor& a) { return a.device().is_cuda(); }
// turnout has no nested tensors.
bool is_nested_(const Tensor&) { return false; }
bool requires_grad_(const Tensor& a) { return a.requires_grad(); }
bool is_floating_point_(const Tensor& a) {
  return isFloatingType(a.scalar_type());
}
bool is_grad_enabled_() { return autograd::GradMode::is_enabled(); }
// turnout has no autocast: never enabled.
bool is_autocast_enabled_() { return false; }

// aten::all.{int,float,bool}(T[] self) -> bool and aten::any.{...}: Python's
// all() and any() over a list (str elements: non-empty is true).
template <bool kAll>
void all_any_list(const OperatorHandle&, Stack* s) {
  const std::vector<IValue> l = pop(s).toList();
  bool out = kAll;
  for (const IValue& e : l) {
    const bool truth = e.isString() ? !e.toStringRef().empty()
                       : e.isDouble() ? e.toDouble() != 0.0
                       : e.isBool()   ? e.toBool()
                                      : e.toInt() != 0;
    if (truth != kAll) {
      out = !kAll;
      break;
    }
  }
  s->push_back(IValue(out));
}

// aten::eq.T_list(T[] a, T[] b) -> bool and ne: element-wise ==, as Python.
template <bool kEq>
void eq_list(const OperatorHandle&, Stack* s) {
  IValue b = pop(s);
  IValue a = pop(s);
  s->push_back(IValue(elementEquals(a, b) == kEq));
}

// aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]:
// Python's l[start:end:step], a new list.
void slice_t(const OperatorHandle&, Stack* s) {
  const int64_t step = pop(s).toInt();
  IValue end_v = pop(s);
  IValue start_v = pop(s);
  IValue l = pop(s);
  TURNOUT_CHECK(step != 0, ErrorKind::InvalidArgument,
                "aten::slice.t: slice step cannot be zero");
  const std::vector<IValue> in = l.toList();
  const int64_t n = static_cast<int64_t>(in.size());
  // Python's slice.indices().
  auto bound = [&](const IValue& v, int64_t dflt) {
    if (v.isNone()) return dflt;
    int64_t i = v.toInt();
    if (i < 0) i += n;
    if (step > 0) return std::min(std::max<int64_t>(i, 0), n);
    return std::min(std::max<int64_t>(i, -1), n - 1);
  };
  const int64_t b = bound(start_v, step > 0 ? 0 : n - 1);
  const int64_t e = bound(end_v, step > 0 ? n : -1);
  std::vector<IValue> out;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(in[i]);
  s->push_back(sameKindList(l, std::move(out)));
}
int64_t dtype_(const Tensor& a) { return static_cast<int64_t>(a.scalar_type()); }
int64_t numel_(const Tensor& a) { return a.numel(); }
// The stored value (below the Python key: a subclass that answers its
// strides is not asked again).
bool is_contiguous_(const Tensor& a) {
  return a.unsafeGetTensorImpl()->is_contiguous_default();
}

// ---- Ranges ------------------------------------------------------------------

int64_t range_length(int64_t lo, int64_t hi, int64_t step) {
  TURNOUT_CHECK(step != 0, ErrorKind::InvalidArgument,
                "aten::__range_length: range() arg 3 must not be zero");
  // In unsigned arithmetic: hi - lo may not fit in int64_t.
  if (step > 0 && lo < hi) {
    return static_cast<int64_t>(
        1 + (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) - 1) /
                static_cast<uint64_t>(step));
  }
  if (step < 0 && lo > hi) {
    return static_cast<int64_t>(
        1 + (static_cast<uint64_t>(lo) - static_cast<uint64_t>(hi) - 1) /
                (0 - static_cast<uint64_t>(step)));
  }
  return 0;
}
int64_t derive_index(int64_t index, int64_t start, int64_t step) {
  return static_cast<int64_t>(static_cast<uint64_t>(start) +
                              static_cast<uint64_t>(index) *
                                  static_cast<uint64_t>(step));
}

// ---- aten::tensor --------------------------------------------------------------

// The shape of nested lists and their leaves, flattened; checks that the
// lists are rectangular, as torch.tensor does.
void flatten(const IValue& v, size_t depth, std::vector<int64_t>& shape,
             std::vector<IValue>& leaves) {
  if (!v.isList()) {
    TURNOUT_CHECK(depth == shape.size(), ErrorKind::InvalidArgument,
                  "aten::tensor: expected a sequence at depth ", depth,
                  " (the lists are not rectangular)");
    TURNOUT_CHECK(v.isInt() || v.isDouble() || v.isBool(), ErrorKind::Type,
                  "aten::tensor: elements must be int, float or bool, not ",
                  v.tagKind());
    leaves.push_back(v);
    return;
  }
  std::vector<IValue> es = v.toList();
  if (depth == shape.size()) {
    TURNOUT_CHECK(leaves.empty(), ErrorKind::InvalidArgument,
                  "aten::tensor: expected a number at depth ", depth,
                  " (the lists are not rectangular)");
    shape.push_back(static_cast<int64_t>(es.size()));
  } else {
    TURNOUT_CHECK(shape[depth] == static_cast<int64_t>(es.size()),
                  ErrorKind::InvalidArgument,
                  "aten::tensor: expected sequence of length ", shape[depth],
                  " at dim ", depth, " (got ", es.size(), ")");
  }
  for (const IValue& e : es) flatten(e, depth + 1, shape, leaves);
}

Tensor makeTensor(const std::vector<int64_t>& shape,
                  const std::vector<IValue>& leaves, ScalarType inferred,
                  const IValue& dtype, const IValue& device,
                  bool requires_grad) {
  TensorOptions options;
  options = options.dtype(dtype.isNone()
                              ? inferred
                              : static_cast<ScalarType>(dtype.toInt()));
  Tensor cpu = empty(shape, options);
  visitDtype(cpu.scalar_type(), "aten::tensor", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(cpu.data_ptr());
    for (size_t i = 0; i < leaves.size(); ++i) {
      const IValue& l = leaves[i];
      if (l.isDouble()) {
        p[i] = convertElement<T>(l.toDouble());
      } else if (l.isInt()) {
        p[i] = convertElement<T>(l.toInt());
      } else {
        p[i] = convertElement<T>(l.toBool());
      }
    }
  });
  Tensor out = cpu;
  if (!device.isNone() && device.toDevice() != cpu.device()) {
    out = cpu.to(device.toDevice());
  }
  if (requires_grad) out.requires_grad_(true);
  return out;
}

// aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None,
//              bool requires_grad=False) -> Tensor
void tensor_list(const OperatorHandle&, Stack* s) {
  const bool requires_grad = pop(s).toBool();
  IValue device = pop(s);
  IValue dtype = pop(s);
  IValue data = pop(s);
  std::vector<int64_t> shape;
  std::vector<IValue> leaves;
  flatten(data, 0, shape, leaves);
  ScalarType inferred = ScalarType::Float;  // torch's default dtype
  bool any_double = false, all_bool = !leaves.empty();
  for (const IValue& l : leaves) {
    any_double = any_double || l.isDouble();
    all_bool = all_bool && l.isBool();
  }
  if (!any_double) {
    inferred = all_bool ? ScalarType::Bool : ScalarType::Long;
  }
  if (leaves.empty()) inferred = ScalarType::Float;
  s->push_back(IValue(
      makeTensor(shape, leaves, inferred, dtype, device, requires_grad)));
}

// aten::tensor.{int,float,bool}(T t, *, ...) -> Tensor: a 0-dim tensor.
void tensor_scalar(const OperatorHandle&, Stack* s) {
  const bool requires_grad = pop(s).toBool();
  IValue device = pop(s);
  IValue dtype = pop(s);
  IValue t = pop(s);
  ScalarType inferred = t.isDouble() ? ScalarType::Float
                        : t.isBool() ? ScalarType::Bool
                                     : ScalarType::Long;
  s->push_back(
      IValue(makeTensor({}, {t}, inferred, dtype, device, requires_grad)));
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  // Lists.
  m.def("append.t(t[](a!) self, t(c -> *) el) -> t[](a!)");
  m.def("_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)");
  m.def("insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()");
  m.def("pop.t(t[](a!) self, int idx=-1) -> t(*)");
  m.def("clear.t(t[](a!) self) -> ()");
  m.def("reverse.t(t[](a!) self) -> ()");
  m.def("extend.t(t[](a!) self, t[] other) -> ()");
  m.def("list.t(t[] l) -> t[]");
  m.def("copy.t(t[](a) self) -> t[]");
  m.def("add.t(t[] a, t[] b) -> t[]");
  m.def("__contains__.int_list(int[] l, int item) -> bool");
  m.def("__contains__.float_list(float[] l, float item) -> bool");
  m.def("__contains__.str_list(str[] l, str item) -> bool");
  for (const char* t : {"int", "float", "bool", "Tensor", "str"}) {
    m.def(std::string("index.list_") + t + "(" + t + "[] self, " + t +
          " el) -> int");
    m.def(std::string("count.") + t + "(" + t + "[] self, " + t +
          " el) -> int");
  }
  for (const char* t : {"int", "float", "bool"}) {
    m.def(std::string("all.") + t + "(" + t + "[] self) -> bool");
    m.def(std::string("any.") + t + "(" + t + "[] self) -> bool");
  }
  m.def("any.str(str[] self) -> bool");
  for (const char* t : {"int", "float", "bool", "str"}) {
    m.def(std::string("eq.") + t + "_list(" + t + "[] a, " + t +
          "[] b) -> bool");
    m.def(std::string("ne.") + t + "_list(" + t + "[] a, " + t +
          "[] b) -> bool");
  }
  m.def("sort.str(str[](a!) self, bool reverse=False) -> ()");
  m.def("sorted.str(str[](a) input) -> str[]");
  m.def("remove.str(str[](a!) self, str el) -> ()");
  m.def("slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]");
  // Tensor facts and grad mode.
  m.def("is_floating_point(Tensor self) -> bool");
  m.def("is_grad_enabled() -> bool");
  m.def("is_autocast_enabled() -> bool");
  // Strings.
  // find and the other str methods: str_builtins.cc.
  m.def("str(t elem) -> str");
  m.def("format(str self, ...) -> str");
  m.def("percentFormat(str self, ...) -> str");
  m.def("warn(str message, int stacklevel=2) -> ()");
  m.def("len.str(str s) -> int");
  m.def("add.str(str a, str b) -> str");
  m.def("eq.str(str a, str b) -> bool");
  m.def("ne.str(str a, str b) -> bool");
  m.def("lt.str(str a, str b) -> bool");
  m.def("gt.str(str a, str b) -> bool");
  // Optionals and unions.
  m.def("__is__(t1 self, t2 obj) -> bool");
  m.def("__isnot__(t1 self, t2 obj) -> bool");
  // Scalars.
  m.def("Bool.Tensor(Tensor a) -> bool");
  m.def("Bool.int(int a) -> bool");
  m.def("Bool.float(float a) -> bool");
  m.def("Int.bool(bool a) -> int");
  m.def("remainder.int(int a, int b) -> int");
  m.def("remainder.float(float a, float b) -> float");
  m.def("remainder.int_float(int a, float b) -> float");
  m.def("remainder.float_int(float a, int b) -> float");
  m.def("floordiv.int_float(int a, float b) -> float");
  m.def("floordiv.float_int(float a, int b) -> float");
  m.def("floor.int(int a) -> int");
  m.def("floor.float(float a) -> int");
  m.def("ceil.int(int a) -> int");
  m.def("ceil.float(float a) -> int");
  for (const char* op : {"add", "sub", "mul", "div"}) {
    m.def(std::string(op) + ".int_float(int a, float b) -> float");
    m.def(std::string(op) + ".float_int(float a, int b) -> float");
  }
  for (const char* op : {"lt", "le", "gt", "ge", "eq", "ne"}) {
    m.def(std::string(op) + ".int_float(int a, float b) -> bool");
    m.def(std::string(op) + ".float_int(float a, int b) -> bool");
  }
  m.def("eq.bool(bool a, bool b) -> bool");
  m.def("ne.bool(bool a, bool b) -> bool");
  m.def("pow.int(int a, int b) -> float");
  m.def("pow.float(float a, float b) -> float");
  m.def("pow.int_float(int a, float b) -> float");
  m.def("pow.float_int(float a, int b) -> float");
  // Tensor metadata.
  m.def("numel(Tensor self) -> int");
  m.def("is_contiguous(Tensor self) -> bool");
  // Ranges.
  m.def("__range_length(int lo, int hi, int step) -> int");
  m.def("__derive_index(int index, int start, int step) -> int");
  // aten::tensor.
  m.def("tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, "
        "bool requires_grad=False) -> Tensor");
  for (const char* t : {"int", "float", "bool"}) {
    m.def(std::string("tensor.") + t + "(" + t +
          " t, *, ScalarType? dtype=None, Device? device=None, bool "
          "requires_grad=False) -> Tensor");
  }
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using turnout::CppFunction;
  auto boxed = [](auto f) { return CppFunction::makeFromBoxedFunction(f); };
  m.impl("append.t", boxed(&turnout::append_t));
  m.impl("_set_item.t", boxed(&turnout::set_item_t));
  m.impl("insert.t", boxed(&turnout::insert_t));
  m.impl("pop.t", boxed(&turnout::pop_t));
  m.impl("clear.t", boxed(&turnout::clear_t));
  m.impl("reverse.t", boxed(&turnout::reverse_t));
  m.impl("extend.t", boxed(&turnout::extend_t));
  m.impl("list.t", boxed(&turnout::list_t));
  m.impl("copy.t", boxed(&turnout::list_t));
  m.impl("add.t", boxed(&turnout::add_t));
  for (const char* o : {"int_list", "float_list", "str_list"}) {
    m.impl(std::string("__contains__.") + o, boxed(&turnout::contains_list));
  }
  for (const char* t : {"int", "float", "bool", "Tensor", "str"}) {
    m.impl(std::string("index.list_") + t, boxed(&turnout::index_list));
    m.impl(std::string("count.") + t, boxed(&turnout::count_list));
  }
  m.impl("str", boxed(&turnout::str_));
  m.impl("format", boxed(&turnout::format_));
  m.impl("percentFormat", boxed(&turnout::percentFormat_));
  m.impl("warn", TURNOUT_FN(turnout::warn_));
  m.impl("len.str", TURNOUT_FN(turnout::len_str));
  m.impl("add.str", TURNOUT_FN(turnout::add_str));
  m.impl("eq.str", TURNOUT_FN(turnout::eq_str));
  m.impl("ne.str", TURNOUT_FN(turnout::ne_str));
  m.impl("lt.str", TURNOUT_FN(turnout::lt_str));
  m.impl("gt.str", TURNOUT_FN(turnout::gt_str));
  m.impl("__is__", boxed(&turnout::is_));
  m.impl("__isnot__", boxed(&turnout::isnot_));
  m.impl("Bool.Tensor", TURNOUT_FN(turnout::bool_tensor));
  m.impl("Bool.int", TURNOUT_FN(turnout::bool_int));
  m.impl("Bool.float", TURNOUT_FN(turnout::bool_float));
  m.impl("Int.bool", TURNOUT_FN(turnout::int_bool));
  m.impl("remainder.int", TURNOUT_FN(turnout::remainder_int));
  m.impl("remainder.float", TURNOUT_FN(turnout::remainder_float));
  m.impl("remainder.int_float", TURNOUT_FN(turnout::remainder_int_float));
  m.impl("remainder.float_int", TURNOUT_FN(turnout::remainder_float_int));
  m.impl("floordiv.int_float", TURNOUT_FN(turnout::floordiv_int_float));
  m.impl("floordiv.float_int", TURNOUT_FN(turnout::floordiv_float_int));
  m.impl("floor.int", TURNOUT_FN(turnout::floor_int));
  m.impl("floor.float", TURNOUT_FN(turnout::floor_float));
  m.impl("ceil.int", TURNOUT_FN(turnout::ceil_int));
  m.impl("ceil.float", TURNOUT_FN(turnout::ceil_float));
  m.impl("add.int_float", TURNOUT_FN(turnout::add_int_float));
  m.impl("add.float_int", TURNOUT_FN(turnout::add_float_int));
  m.impl("sub.int_float", TURNOUT_FN(turnout::sub_int_float));
  m.impl("sub.float_int", TURNOUT_FN(turnout::sub_float_int));
  m.impl("mul.int_float", TURNOUT_FN(turnout::mul_int_float));
  m.impl("mul.float_int", TURNOUT_FN(turnout::mul_float_int));
  m.impl("div.int_float", TURNOUT_FN(turnout::div_int_float));
  m.impl("div.float_int", TURNOUT_FN(turnout::div_float_int));
  m.impl("lt.int_float", TURNOUT_FN(turnout::lt_int_float));
  m.impl("lt.float_int", TURNOUT_FN(turnout::lt_float_int));
  m.impl("le.int_float", TURNOUT_FN(turnout::le_int_float));
  m.impl("le.float_int", TURNOUT_FN(turnout::le_float_int));
  m.impl("gt.int_float", TURNOUT_FN(turnout::gt_int_float));
  m.impl("gt.float_int", TURNOUT_FN(turnout::gt_float_int));
  m.impl("ge.int_float", TURNOUT_FN(turnout::ge_int_float));
  m.impl("ge.float_int", TURNOUT_FN(turnout::ge_float_int));
  m.impl("eq.int_float", TURNOUT_FN(turnout::eq_int_float));
  m.impl("eq.float_int", TURNOUT_FN(turnout::eq_float_int));
  m.impl("ne.int_float", TURNOUT_FN(turnout::ne_int_float));
  m.impl("ne.float_int", TURNOUT_FN(turnout::ne_float_int));
  m.impl("eq.bool", TURNOUT_FN(turnout::eq_bool));
  m.impl("ne.bool", TURNOUT_FN(turnout::ne_bool));
  m.impl("pow.int", TURNOUT_FN(turnout::pow_int));
  m.impl("pow.float", TURNOUT_FN(turnout::pow_float));
  m.impl("pow.int_float", TURNOUT_FN(turnout::pow_int_float));
  m.impl("pow.float_int", TURNOUT_FN(turnout::pow_float_int));
  for (const char* t : {"int", "float", "bool"}) {
    m.impl(std::string("all.") + t, boxed(&turnout::all_any_list<true>));
    m.impl(std::string("any.") + t, boxed(&turnout::all_any_list<false>));
  }
  m.impl("any.str", boxed(&turnout::all_any_list<false>));
  for (const char* t : {"int", "float", "bool", "str"}) {
    m.impl(std::string("eq.") + t + "_list", boxed(&turnout::eq_list<true>));
    m.impl(std::string("ne.") + t + "_list", boxed(&turnout::eq_list<false>));
  }
  m.impl("sort.str", boxed(&turnout::sort_str));
  m.impl("sorted.str", boxed(&turnout::sorted_str));
  m.impl("remove.str", boxed(&turnout::remove_str));
  m.impl("slice.t", boxed(&turnout::slice_t));
  m.impl("is_grad_enabled", TURNOUT_FN(turnout::is_grad_enabled_));
  m.impl("is_autocast_enabled", TURNOUT_FN(turnout::is_autocast_enabled_));
  m.impl("numel", TURNOUT_FN(turnout::numel_));
  m.impl("is_contiguous", TURNOUT_FN(turnout::is_contiguous_));
  m.impl("__range_length", TURNOUT_FN(turnout::range_length));
  m.impl("__derive_index", TURNOUT_FN(turnout::derive_index));
  m.impl("tensor", boxed(&turnout::tensor_list));
  for (const char* t : {"int", "float", "bool"}) {
    m.impl(std::string("tensor.") + t, boxed(&turnout::tensor_scalar));
  }
}

TURNOUT_LIBRARY_FRAGMENT(prim, m) {
  m.def("unchecked_cast(t x) -> t");
  m.def("TupleIndex(Any tup, int i) -> Any");
  m.def("device(Tensor a) -> Device");
  m.def("dtype(Tensor a) -> int");
  m.def("is_cuda(Tensor a) -> bool");
  m.def("is_nested(Tensor a) -> bool");
  m.def("requires_grad(Tensor a) -> bool");
  m.def("abs.int(int a) -> int");
  m.def("abs.float(float a) -> float");
  for (const char* op : {"min", "max"}) {
    const std::string o(op);
    m.def(o + ".int(int a, int b) -> int");
    m.def(o + ".float(float a, float b) -> float");
    m.def(o + ".int_float(int a, float b) -> float");
    m.def(o + ".float_int(float a, int b) -> float");
    m.def(o + ".int_list(int[] l, int[] r) -> int[]");
    m.def(o + ".self_int(int[] self) -> int");
    m.def(o + ".float_list(float[] l, float[] r) -> float[]");
    m.def(o + ".self_float(float[] self) -> float");
    m.def(o + ".bool_list(bool[] l, bool[] r) -> bool[]");
    m.def(o + ".self_bool(bool[] self) -> bool");
  }
}

// Composite-implicit, as torch 1.13's: a Python mode does not see it.
TURNOUT_LIBRARY_IMPL(aten, CompositeImplicitAutograd, m) {
  m.impl("is_floating_point", TURNOUT_FN(turnout::is_floating_point_));
}

TURNOUT_LIBRARY_IMPL(prim, CompositeExplicitAutograd, m) {
  using turnout::CppFunction;
  auto boxed = [](auto f) { return CppFunction::makeFromBoxedFunction(f); };
  m.impl("unchecked_cast", boxed(&turnout::unchecked_cast));
  m.impl("TupleIndex", boxed(&turnout::tuple_index));
  m.impl("device", TURNOUT_FN(turnout::device_));
  m.impl("dtype", TURNOUT_FN(turnout::dtype_));
  m.impl("is_cuda", TURNOUT_FN(turnout::is_cuda_));
  m.impl("is_nested", TURNOUT_FN(turnout::is_nested_));
  m.impl("requires_grad", TURNOUT_FN(turnout::requires_grad_));
  m.impl("abs.int", TURNOUT_FN(turnout::abs_int));
  m.impl("abs.float", TURNOUT_FN(turnout::abs_float));
  m.impl("min.int", TURNOUT_FN(turnout::extreme_int<false>));
  m.impl("max.int", TURNOUT_FN(turnout::extreme_int<true>));
  m.impl("min.float", TURNOUT_FN(turnout::extreme_float<false>));
  m.impl("max.float", TURNOUT_FN(turnout::extreme_float<true>));
  m.impl("min.int_float", TURNOUT_FN(turnout::extreme_int_float<false>));
  m.impl("max.int_float", TURNOUT_FN(turnout::extreme_int_float<true>));
  m.impl("min.float_int", TURNOUT_FN(turnout::extreme_float_int<false>));
  m.impl("max.float_int", TURNOUT_FN(turnout::extreme_float_int<true>));
  for (const char* t : {"int", "float", "bool"}) {
    m.impl(std::string("min.self_") + t,
           boxed(&turnout::extreme_self<false>));
    m.impl(std::string("max.self_") + t, boxed(&turnout::extreme_self<true>));
    m.impl(std::string("min.") + t + "_list",
           boxed(&turnout::extreme_lists<false>));
    m.impl(std::string("max.") + t + "_list",
           boxed(&turnout::extreme_lists<true>));
  }
}

// TorchScript's dict builtins with torch 1.13's schemas: aten::__getitem__
// (Dict_str, ...), _set_item, __contains__, len, keys, values, items, get,
// pop, popitem, setdefault, update, clear, copy, Delete and dict, each
// overloaded for the key types str, int, bool, float and Tensor (complex is
// left out: turnout has no complex scalar).
//
// Dicts are shared objects (ivalue::DictImpl): a mutation is seen through
// every alias, the caller's too, as TorchScript's. Iteration order is
// insertion order; `for k in d` is printed by torch as aten::keys, aten::len
// and aten::__getitem__ over the key list, so it needs nothing more.
// A missing key raises "KeyError: <key>" as torch's interpreter does (the
// interpreter adds the node's position). All are boxed kernels registered
// at CompositeExplicitAutograd, as script_builtins.cc's.
#include <cstdint>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/library.h"
#include "dispatcher/schema/function_schema.h"

namespace turnout {
namespace {

using ivalue::DictImpl;

IValue pop(Stack* s) {
  IValue v = std::move(s->back());
  s->pop_back();
  return v;
}

// The kinds of key the overloads are registered for.
struct KeyType {
  const char* name;       // schema spelling: str, int, bool, float, Tensor
  IValue::Tag tag;        // the key's IValue tag
  IValue::Tag list_tag;   // the list kind keys() makes
};
constexpr KeyType kKeyTypes[] = {
    {"str", IValue::Tag::String, IValue::Tag::GenericList},
    {"int", IValue::Tag::Int, IValue::Tag::IntList},
    {"bool", IValue::Tag::Bool, IValue::Tag::BoolList},
    {"float", IValue::Tag::Double, IValue::Tag::DoubleList},
    {"Tensor", IValue::Tag::Tensor, IValue::Tag::TensorList},
};

// A key as torch's KeyError prints it: strings bare, floats as the IR
// prints them, tensors as the IValue printer does.
std::string keyText(const IValue& key) {
  if (key.isString()) return key.toStringRef();
  if (key.isDouble()) {
    std::string out;
    DefaultValue::fromDouble(key.toDouble()).appendTo(out);
    return out;
  }
  std::ostringstream out;
  out << key;
  return out.str();
}

// The dict argument and its key, checked against the overload's key type
// (a graph that bypassed resolution, or a dict built elsewhere, gets a
// Type error rather than a silent miss).
intrusive_ptr<DictImpl> dictArg(const IValue& d, const char* op) {
  TURNOUT_CHECK(d.isDict(), ErrorKind::Type, op, ": expected a Dict, got ",
                d.tagKind());
  return d.toDict();
}

void checkKey(const IValue& key, IValue::Tag tag, const char* op) {
  TURNOUT_CHECK(key.tag() == tag, ErrorKind::Type, op, ": expected a ",
                IValue::tagName(tag), " key, got ", key.tagKind());
}

[[noreturn]] void keyError(const IValue& key) {
  throw Error(ErrorKind::Index, "KeyError: " + keyText(key));
}

// The kernels. Each overload's key tag is a template argument so that the
// one boxed function serves as a plain function pointer.

// aten::__getitem__.Dict_K(Dict(K, t) self, K key) -> t(*)
template <IValue::Tag kKey>
void getitem(const OperatorHandle&, Stack* s) {
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::__getitem__");
  checkKey(key, kKey, "aten::__getitem__");
  const IValue* v = d->find(key);
  if (v == nullptr) keyError(key);
  s->push_back(*v);
}

// aten::_set_item.K(Dict(K, t)(a!) l, K(b -> *) idx, t(c -> *) v) -> ()
template <IValue::Tag kKey>
void set_item(const OperatorHandle&, Stack* s) {
  IValue value = pop(s);
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::_set_item");
  checkKey(key, kKey, "aten::_set_item");
  d->insertOrAssign(std::move(key), std::move(value));
}

// aten::__contains__.K(Dict(K, t) dict, K key) -> bool
template <IValue::Tag kKey>
void contains(const OperatorHandle&, Stack* s) {
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::__contains__");
  checkKey(key, kKey, "aten::__contains__");
  s->push_back(IValue(d->contains(key)));
}

// aten::len.Dict_K(Dict(K, t) self) -> int
void len(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::len");
  s->push_back(IValue(static_cast<int64_t>(d->size())));
}

// aten::keys.K(Dict(K, t) self) -> K[](*): a new list, in insertion order.
void keys(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::keys");
  std::vector<IValue> out;
  out.reserve(d->size());
  for (const auto& e : d->entries()) out.push_back(e.first);
  s->push_back(IValue::makeList(d->keyListTag(), std::move(out)));
}

// aten::values.K(Dict(K, t) self) -> t[](*)
void values(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::values");
  std::vector<IValue> out;
  out.reserve(d->size());
  for (const auto& e : d->entries()) out.push_back(e.second);
  IValue::Tag tag = d->valueListTag();
  if (tag == IValue::Tag::GenericList && !out.empty()) {
    tag = IValue::listTagOf(out[0]);
    for (const IValue& v : out) {
      if (IValue::listTagOf(v) != tag) tag = IValue::Tag::GenericList;
    }
  }
  s->push_back(IValue::makeList(tag, std::move(out)));
}

// aten::items.K(Dict(K, t) self) -> ((K, t)[]): (key, value) tuples.
void items(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::items");
  std::vector<IValue> out;
  out.reserve(d->size());
  for (const auto& e : d->entries()) {
    out.push_back(IValue::makeTuple({e.first, e.second}));
  }
  s->push_back(IValue(std::move(out)));
}

// aten::get.K(Dict(K, t) self, K key) -> t(*)?  (None when absent)
template <IValue::Tag kKey>
void get(const OperatorHandle&, Stack* s) {
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::get");
  checkKey(key, kKey, "aten::get");
  const IValue* v = d->find(key);
  s->push_back(v == nullptr ? IValue() : *v);
}

// aten::get.default_K(Dict(K, t) self, K key, t default_value) -> t(*)
template <IValue::Tag kKey>
void get_default(const OperatorHandle&, Stack* s) {
  IValue fallback = pop(s);
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::get");
  checkKey(key, kKey, "aten::get");
  const IValue* v = d->find(key);
  s->push_back(v == nullptr ? std::move(fallback) : *v);
}

// aten::pop.Dict_K(Dict(K, t)(a!) self, K key) -> t(*)
template <IValue::Tag kKey>
void pop_key(const OperatorHandle&, Stack* s) {
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::pop");
  checkKey(key, kKey, "aten::pop");
  std::optional<IValue> v = d->erase(key);
  if (!v) keyError(key);
  s->push_back(std::move(*v));
}

// aten::pop.Dict_default_K(Dict(K, t)(a!) self, K key, t default_value)
template <IValue::Tag kKey>
void pop_default(const OperatorHandle&, Stack* s) {
  IValue fallback = pop(s);
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::pop");
  checkKey(key, kKey, "aten::pop");
  std::optional<IValue> v = d->erase(key);
  s->push_back(v ? std::move(*v) : std::move(fallback));
}

// aten::popitem.K(Dict(K, t)(a!) self) -> ((K, t)): the last entry.
void popitem(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::popitem");
  if (d->empty()) {
    throw Error(ErrorKind::Index, "popitem(): dictionary is empty");
  }
  IValue key = d->entries().back().first;
  IValue value = *d->erase(key);
  s->push_back(IValue::makeTuple({std::move(key), std::move(value)}));
}

// aten::Delete.Dict_K(Dict(K, t)(a!) self, K key) -> ()
template <IValue::Tag kKey>
void delete_key(const OperatorHandle&, Stack* s) {
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::Delete");
  checkKey(key, kKey, "aten::Delete");
  if (!d->erase(key)) keyError(key);
}

// aten::setdefault.K(Dict(K, t)(a!) self, K(b -> *) key,
//                    t(c -> *) default_value) -> t(*)
template <IValue::Tag kKey>
void setdefault(const OperatorHandle&, Stack* s) {
  IValue fallback = pop(s);
  IValue key = pop(s);
  auto d = dictArg(pop(s), "aten::setdefault");
  checkKey(key, kKey, "aten::setdefault");
  s->push_back(d->setDefault(std::move(key), std::move(fallback)));
}

// aten::update.K(Dict(K, t)(a!) self, Dict(K, t)(a!) to_add) -> ()
void update(const OperatorHandle&, Stack* s) {
  auto other = dictArg(pop(s), "aten::update");
  auto d = dictArg(pop(s), "aten::update");
  if (d.get() == other.get()) return;  // d.update(d)
  for (const auto& [key, value] : other->entries()) {
    d->insertOrAssign(key, value);
  }
}

// aten::clear.K(Dict(K, t)(a!) self) -> ()
void clear(const OperatorHandle&, Stack* s) {
  dictArg(pop(s), "aten::clear")->clear();
}

// aten::copy.Dict_K(Dict(K, t)(a) self) -> Dict(K, t), and
// aten::dict.Dict_K: a shallow copy.
void copy(const OperatorHandle&, Stack* s) {
  auto d = dictArg(pop(s), "aten::copy");
  s->push_back(IValue(d->copy()));
}

// aten::dict() -> Dict(str, Tensor): an empty dict.
void dict_empty(const OperatorHandle&, Stack* s) {
  s->push_back(IValue(
      DictImpl::create(IValue::Tag::GenericList, IValue::Tag::TensorList)));
}

// aten::dict.K((K, tVal)[] inputs) -> Dict(K, tVal): from (key, value)
// pairs; a later pair for a key replaces the value, as Python's.
template <IValue::Tag kKey, IValue::Tag kKeyList>
void dict_from_pairs(const OperatorHandle&, Stack* s) {
  std::vector<IValue> pairs = pop(s).toList();
  auto d = DictImpl::create(
      kKeyList, pairs.empty()
                    ? IValue::Tag::GenericList
                    : IValue::listTagOf(pairs[0].toTupleRef().elements().at(1)));
  for (size_t i = 0; i < pairs.size(); ++i) {
    TURNOUT_CHECK(pairs[i].isTuple() && pairs[i].toTupleRef().size() == 2,
                  ErrorKind::Type, "aten::dict: element ", i,
                  " is not a (key, value) pair");
    const auto& kv = pairs[i].toTupleRef().elements();
    checkKey(kv[0], kKey, "aten::dict");
    d->insertOrAssign(kv[0], kv[1]);
  }
  s->push_back(IValue(std::move(d)));
}

using Kernel = void (*)(const OperatorHandle&, Stack*);

struct KeyedKernels {
  Kernel getitem, set_item, contains, get, get_default, pop_key, pop_default,
      delete_key, setdefault, dict_from_pairs;
};

template <IValue::Tag kKey, IValue::Tag kKeyList>
constexpr KeyedKernels keyed() {
  return {&getitem<kKey>,     &set_item<kKey>,    &contains<kKey>,
          &get<kKey>,         &get_default<kKey>, &pop_key<kKey>,
          &pop_default<kKey>, &delete_key<kKey>,  &setdefault<kKey>,
          &dict_from_pairs<kKey, kKeyList>};
}

// In the order of kKeyTypes.
constexpr KeyedKernels kKeyed[] = {
    keyed<IValue::Tag::String, IValue::Tag::GenericList>(),
    keyed<IValue::Tag::Int, IValue::Tag::IntList>(),
    keyed<IValue::Tag::Bool, IValue::Tag::BoolList>(),
    keyed<IValue::Tag::Double, IValue::Tag::DoubleList>(),
    keyed<IValue::Tag::Tensor, IValue::Tag::TensorList>(),
};

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.def("dict() -> Dict(str, Tensor)");
  for (const turnout::KeyType& k : turnout::kKeyTypes) {
    const std::string K = k.name;
    const std::string D = "Dict(" + K + ", t)";
    m.def("__getitem__.Dict_" + K + "(" + D + " self, " + K +
          " key) -> t(*)");
    m.def("_set_item." + K + "(" + D + "(a!) l, " + K +
          "(b -> *) idx, t(c -> *) v) -> ()");
    m.def("__contains__." + K + "(" + D + " dict, " + K + " key) -> bool");
    m.def("len.Dict_" + K + "(" + D + " self) -> int");
    m.def("keys." + K + "(" + D + " self) -> " + K + "[](*)");
    m.def("values." + K + "(" + D + " self) -> t[](*)");
    m.def("items." + K + "(" + D + " self) -> ((" + K + ", t)[])");
    m.def("get." + K + "(" + D + " self, " + K + " key) -> t(*)?");
    m.def("get.default_" + K + "(" + D + " self, " + K +
          " key, t default_value) -> t(*)");
    m.def("pop.Dict_" + K + "(" + D + "(a!) self, " + K + " key) -> t(*)");
    m.def("pop.Dict_default_" + K + "(" + D + "(a!) self, " + K +
          " key, t default_value) -> t(*)");
    m.def("popitem." + K + "(" + D + "(a!) self) -> ((" + K + ", t))");
    m.def("Delete.Dict_" + K + "(" + D + "(a!) self, " + K + " key) -> ()");
    m.def("setdefault." + K + "(" + D + "(a!) self, " + K +
          "(b -> *) key, t(c -> *) default_value) -> t(*)");
    m.def("update." + K + "(" + D + "(a!) self, " + D +
          "(a!) to_add) -> ()");
    m.def("clear." + K + "(" + D + "(a!) self) -> ()");
    m.def("copy.Dict_" + K + "(" + D + "(a) self) -> " + D);
    m.def("dict." + K + "((" + K + ", tVal)[] inputs) -> Dict(" + K +
          ", tVal)");
    m.def("dict.Dict_" + K + "(" + D + "(a) self) -> " + D);
  }
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using turnout::CppFunction;
  auto boxed = [](auto f) { return CppFunction::makeFromBoxedFunction(f); };
  m.impl("dict", boxed(&turnout::dict_empty));
  for (size_t i = 0; i < std::size(turnout::kKeyTypes); ++i) {
    const std::string K = turnout::kKeyTypes[i].name;
    const turnout::KeyedKernels& k = turnout::kKeyed[i];
    m.impl("__getitem__.Dict_" + K, boxed(k.getitem));
    m.impl("_set_item." + K, boxed(k.set_item));
    m.impl("__contains__." + K, boxed(k.contains));
    m.impl("len.Dict_" + K, boxed(&turnout::len));
    m.impl("keys." + K, boxed(&turnout::keys));
    m.impl("values." + K, boxed(&turnout::values));
    m.impl("items." + K, boxed(&turnout::items));
    m.impl("get." + K, boxed(k.get));
    m.impl("get.default_" + K, boxed(k.get_default));
    m.impl("pop.Dict_" + K, boxed(k.pop_key));
    m.impl("pop.Dict_default_" + K, boxed(k.pop_default));
    m.impl("popitem." + K, boxed(&turnout::popitem));
    m.impl("Delete.Dict_" + K, boxed(k.delete_key));
    m.impl("setdefault." + K, boxed(k.setdefault));
    m.impl("update." + K, boxed(&turnout::update));
    m.impl("clear." + K, boxed(&turnout::clear));
    m.impl("copy.Dict_" + K, boxed(&turnout::copy));
    m.impl("dict." + K, boxed(k.dict_from_pairs));
    m.impl("dict.Dict_" + K, boxed(&turnout::copy));
  }
}

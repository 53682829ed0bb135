#include "dispatcher/core/ivalue.h"

#include <cstdio>
#include <functional>

namespace turnout {

using ivalue::ConstantString;
using ivalue::DictImpl;
using ivalue::FutureHandle;
using ivalue::ListImpl;
using ivalue::Tuple;

// ---- Construction of counted payloads
// ------------------------------------------

IValue::IValue(std::string s)
    : IValue(Tag::String, ConstantString::create(std::move(s)).release()) {}
IValue::IValue(std::string_view s) : IValue(std::string(s)) {}
IValue::IValue(const char* s) : IValue(std::string(s)) {}

namespace {

// Checks before the IValue exists: a throw from a delegating constructor's
// body would run the destructor on the null pointer.
template <class T>
IntrusivePtrTarget* adopt(intrusive_ptr<T> p, const char* what) {
  TURNOUT_CHECK(p.defined(), ErrorKind::InvalidArgument, "IValue(): null ",
                what, " pointer");
  return p.release();
}

template <class T>
IntrusivePtrTarget* newList(std::vector<T> v) {
  return make_intrusive<ListImpl<T>>(std::move(v)).release();
}

}  // namespace

IValue::IValue(intrusive_ptr<ConstantString> s)
    : IValue(Tag::String, adopt(std::move(s), "string")) {}

IValue::IValue(std::vector<int64_t> v)
    : IValue(Tag::IntList, newList(std::move(v))) {}
IValue::IValue(IntArrayRef v)
    : IValue(std::vector<int64_t>(v.begin(), v.end())) {}
IValue::IValue(std::vector<double> v)
    : IValue(Tag::DoubleList, newList(std::move(v))) {}
IValue::IValue(std::vector<bool> v)
    : IValue(Tag::BoolList, newList(std::move(v))) {}
IValue::IValue(std::vector<Tensor> v)
    : IValue(Tag::TensorList, newList(std::move(v))) {}
IValue::IValue(std::vector<IValue> v)
    : IValue(Tag::GenericList, newList(std::move(v))) {}

IValue::IValue(intrusive_ptr<ListImpl<int64_t>> list)
    : IValue(Tag::IntList, adopt(std::move(list), "list")) {}
IValue::IValue(intrusive_ptr<ListImpl<double>> list)
    : IValue(Tag::DoubleList, adopt(std::move(list), "list")) {}
IValue::IValue(intrusive_ptr<ListImpl<bool>> list)
    : IValue(Tag::BoolList, adopt(std::move(list), "list")) {}
IValue::IValue(intrusive_ptr<ListImpl<Tensor>> list)
    : IValue(Tag::TensorList, adopt(std::move(list), "list")) {}
IValue::IValue(intrusive_ptr<ListImpl<IValue>> list)
    : IValue(Tag::GenericList, adopt(std::move(list), "list")) {}

IValue::Tag IValue::listTagOf(const IValue& element) {
  switch (element.tag()) {
    case Tag::Int: return Tag::IntList;
    case Tag::Double: return Tag::DoubleList;
    case Tag::Bool: return Tag::BoolList;
    case Tag::Tensor: return Tag::TensorList;
    default: return Tag::GenericList;
  }
}

namespace {

template <class T, class Get>
std::vector<T> unboxAll(const std::vector<IValue>& elements, Get get) {
  std::vector<T> v;
  v.reserve(elements.size());
  for (const IValue& e : elements) v.push_back(get(e));
  return v;
}

}  // namespace

IValue IValue::makeList(Tag tag, std::vector<IValue> elements) {
  switch (tag) {
    case Tag::IntList:
      return IValue(unboxAll<int64_t>(
          elements, [](const IValue& e) { return e.toInt(); }));
    case Tag::DoubleList:
      return IValue(unboxAll<double>(
          elements, [](const IValue& e) { return e.toDouble(); }));
    case Tag::BoolList:
      return IValue(unboxAll<bool>(
          elements, [](const IValue& e) { return e.toBool(); }));
    case Tag::TensorList:
      return IValue(unboxAll<Tensor>(
          elements, [](const IValue& e) { return e.toTensor(); }));
    default:
      return IValue(std::move(elements));
  }
}

IValue IValue::makeTuple(std::vector<IValue> elements) {
  return IValue(Tuple::create(std::move(elements)));
}

IValue::IValue(intrusive_ptr<Tuple> tuple)
    : IValue(Tag::Tuple, adopt(std::move(tuple), "tuple")) {}

IValue::IValue(intrusive_ptr<DictImpl> dict)
    : IValue(Tag::Dict, adopt(std::move(dict), "dict")) {}

namespace {
IntrusivePtrTarget* newFutureHandle(std::shared_ptr<jit::Future> future) {
  TURNOUT_CHECK(future != nullptr, ErrorKind::InvalidArgument,
                "IValue(): null future pointer");
  return make_intrusive<FutureHandle>(std::move(future)).release();
}
}  // namespace

IValue::IValue(std::shared_ptr<jit::Future> future)
    : IValue(Tag::Future, newFutureHandle(std::move(future))) {}

// ---- Accessors
// -----------------------------------------------------------------

Scalar IValue::toScalar() const {
  switch (tag_) {
    case Tag::Int:
      return Scalar(payload_.u.as_int);
    case Tag::Double:
      return Scalar(payload_.u.as_double);
    case Tag::Bool:
      return Scalar(payload_.u.as_bool);
    default:
      throwWrongTag("Scalar");
  }
}

ScalarType IValue::toScalarType() const {
  if (tag_ != Tag::Int) throwWrongTag("ScalarType (an Int)");
  const int64_t v = payload_.u.as_int;
  TURNOUT_CHECK(isValidScalarType(v), ErrorKind::InvalidArgument,
                "toScalarType(): ", v, " is not a ScalarType");
  return static_cast<ScalarType>(v);
}

Layout IValue::toLayout() const {
  if (tag_ != Tag::Int) throwWrongTag("Layout (an Int)");
  const int64_t v = payload_.u.as_int;
  TURNOUT_CHECK(isValidLayout(v), ErrorKind::InvalidArgument, "toLayout(): ", v,
                " is not a Layout");
  return static_cast<Layout>(v);
}

MemoryFormat IValue::toMemoryFormat() const {
  if (tag_ != Tag::Int) throwWrongTag("MemoryFormat (an Int)");
  const int64_t v = payload_.u.as_int;
  TURNOUT_CHECK(isValidMemoryFormat(v), ErrorKind::InvalidArgument,
                "toMemoryFormat(): ", v, " is not a MemoryFormat");
  return static_cast<MemoryFormat>(v);
}

const std::string& IValue::toStringRef() const {
  return counted<ConstantString>(Tag::String, "String").string();
}

intrusive_ptr<ConstantString> IValue::toString() const {
  return countedPtr<ConstantString>(Tag::String, "String");
}

const std::vector<int64_t>& IValue::toIntListRef() const {
  return counted<ListImpl<int64_t>>(Tag::IntList, "IntList").elements();
}
const std::vector<double>& IValue::toDoubleListRef() const {
  return counted<ListImpl<double>>(Tag::DoubleList, "DoubleList").elements();
}
const std::vector<bool>& IValue::toBoolListRef() const {
  return counted<ListImpl<bool>>(Tag::BoolList, "BoolList").elements();
}
const std::vector<Tensor>& IValue::toTensorListRef() const {
  return counted<ListImpl<Tensor>>(Tag::TensorList, "TensorList").elements();
}
const std::vector<IValue>& IValue::toListRef() const {
  return counted<ListImpl<IValue>>(Tag::GenericList, "GenericList").elements();
}

intrusive_ptr<ListImpl<int64_t>> IValue::toIntList() const {
  return countedPtr<ListImpl<int64_t>>(Tag::IntList, "IntList");
}
intrusive_ptr<ListImpl<double>> IValue::toDoubleList() const {
  return countedPtr<ListImpl<double>>(Tag::DoubleList, "DoubleList");
}
intrusive_ptr<ListImpl<bool>> IValue::toBoolList() const {
  return countedPtr<ListImpl<bool>>(Tag::BoolList, "BoolList");
}
intrusive_ptr<ListImpl<Tensor>> IValue::toTensorList() const {
  return countedPtr<ListImpl<Tensor>>(Tag::TensorList, "TensorList");
}
intrusive_ptr<ListImpl<IValue>> IValue::toGenericList() const {
  return countedPtr<ListImpl<IValue>>(Tag::GenericList, "GenericList");
}

namespace {

template <class T>
std::vector<IValue> boxAll(const std::vector<T>& elements) {
  std::vector<IValue> result;
  result.reserve(elements.size());
  for (const auto& e : elements) result.emplace_back(static_cast<T>(e));
  return result;
}

}  // namespace

std::vector<IValue> IValue::toList() const {
  switch (tag_) {
    case Tag::IntList:
      return boxAll(toIntListRef());
    case Tag::DoubleList:
      return boxAll(toDoubleListRef());
    case Tag::BoolList:
      return boxAll(toBoolListRef());
    case Tag::TensorList:
      return boxAll(toTensorListRef());
    case Tag::GenericList:
      return toListRef();
    default:
      throwWrongTag("List");
  }
}

const Tuple& IValue::toTupleRef() const {
  return counted<Tuple>(Tag::Tuple, "Tuple");
}

intrusive_ptr<Tuple> IValue::toTuple() const {
  return countedPtr<Tuple>(Tag::Tuple, "Tuple");
}

const DictImpl& IValue::toDictRef() const {
  return counted<DictImpl>(Tag::Dict, "Dict");
}

intrusive_ptr<DictImpl> IValue::toDict() const {
  return countedPtr<DictImpl>(Tag::Dict, "Dict");
}

const std::shared_ptr<jit::Future>& IValue::toFuture() const {
  return counted<FutureHandle>(Tag::Future, "Future").future();
}

// ---- Dict
// ----------------------------------------------------------------------

namespace ivalue {

bool DictImpl::isKey(const IValue& key) noexcept {
  switch (key.tag()) {
    case IValue::Tag::String:
    case IValue::Tag::Int:
    case IValue::Tag::Double:
    case IValue::Tag::Bool:
      return true;
    case IValue::Tag::Tensor:
      return key.toTensor().defined();
    default:
      return false;
  }
}

size_t DictImpl::KeyHash::operator()(const IValue& key) const noexcept {
  switch (key.tag()) {
    case IValue::Tag::String:
      return std::hash<std::string>()(key.toStringRef());
    case IValue::Tag::Int:
      return std::hash<int64_t>()(key.toInt());
    case IValue::Tag::Double:
      return std::hash<double>()(key.toDouble());  // 0.0 and -0.0 alike
    case IValue::Tag::Bool:
      return std::hash<bool>()(key.toBool());
    case IValue::Tag::Tensor:
      return std::hash<const void*>()(key.toTensor().unsafeGetTensorImpl());
    default:
      return 0;
  }
}

bool DictImpl::KeyEqual::operator()(const IValue& a,
                                    const IValue& b) const noexcept {
  return a.tag() == b.tag() && a.isSameIdentity(b);
}

namespace {
void checkKey(const IValue& key) {
  TURNOUT_CHECK(DictImpl::isKey(key), ErrorKind::Type,
                "a dict key must be a str, int, float, bool or (defined) "
                "Tensor, got ",
                key.tagKind());
}
}  // namespace

const IValue* DictImpl::find(const IValue& key) const {
  checkKey(key);
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

void DictImpl::insertOrAssign(IValue key, IValue value) {
  checkKey(key);
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  entries_.emplace_back(key, std::move(value));
  try {
    index_.emplace(std::move(key), entries_.size() - 1);
  } catch (...) {
    entries_.pop_back();  // no half-changed dict
    throw;
  }
}

IValue DictImpl::setDefault(IValue key, IValue value) {
  if (const IValue* found = find(key)) return *found;
  insertOrAssign(std::move(key), value);
  return value;
}

std::optional<IValue> DictImpl::erase(const IValue& key) {
  checkKey(key);
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  const size_t at = it->second;
  IValue value = std::move(entries_[at].second);
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(at));
  for (auto& [k, position] : index_) {
    if (position > at) --position;
  }
  return value;
}

void DictImpl::clear() {
  index_.clear();
  entries_.clear();
}

intrusive_ptr<DictImpl> DictImpl::copy() const {
  auto out = create(key_list_tag_, value_list_tag_);
  out->entries_ = entries_;
  out->index_ = index_;
  return out;
}

void DictImpl::checkInvariants() const {
  TURNOUT_INTERNAL_ASSERT(index_.size() == entries_.size(), "dict index has ",
                          index_.size(), " keys for ", entries_.size(),
                          " entries");
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto it = index_.find(entries_[i].first);
    TURNOUT_INTERNAL_ASSERT(it != index_.end() && it->second == i,
                            "dict entry ", i, " is not indexed at its place");
  }
}

}  // namespace ivalue

// ---- Inspection
// ----------------------------------------------------------------

const char* IValue::tagName(Tag tag) noexcept {
  switch (tag) {
    case Tag::None:
      return "None";
    case Tag::Tensor:
      return "Tensor";
    case Tag::Double:
      return "Double";
    case Tag::Int:
      return "Int";
    case Tag::Bool:
      return "Bool";
    case Tag::String:
      return "String";
    case Tag::Device:
      return "Device";
    case Tag::IntList:
      return "IntList";
    case Tag::DoubleList:
      return "DoubleList";
    case Tag::BoolList:
      return "BoolList";
    case Tag::TensorList:
      return "TensorList";
    case Tag::GenericList:
      return "GenericList";
    case Tag::Tuple:
      return "Tuple";
    case Tag::Dict:
      return "Dict";
    case Tag::Future:
      return "Future";
  }
  return "InvalidTag";
}

uint64_t IValue::use_count() const noexcept {
  if (tag_ == Tag::Tensor) return payload_.as_tensor.use_count();
  if (isCountedTag(tag_)) return payload_.u.as_intrusive_ptr->refcount();
  return 0;
}

void IValue::throwWrongTag(const char* expected) const {
  TURNOUT_CHECK(false, ErrorKind::Type, "Expected ", expected, " but got ",
                tagKind());
  __builtin_unreachable();
}

bool IValue::isSameIdentity(const IValue& other) const {
  const bool this_none =
      isNone() || (isTensor() && !payload_.as_tensor.defined());
  const bool other_none =
      other.isNone() ||
      (other.isTensor() && !other.payload_.as_tensor.defined());
  if (this_none || other_none) return this_none && other_none;
  if (tag_ != other.tag_) return false;
  switch (tag_) {
    case Tag::Tensor:
      return payload_.as_tensor.is_same(other.payload_.as_tensor);
    case Tag::Int:
    case Tag::Double:
    case Tag::Bool:
    case Tag::Device:
    case Tag::String:
      return *this == other;
    default:
      return payload_.u.as_intrusive_ptr == other.payload_.u.as_intrusive_ptr;
  }
}

bool operator==(const IValue& a, const IValue& b) {
  using Tag = IValue::Tag;
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case Tag::None:
      return true;
    case Tag::Tensor:
      return a.toTensor().is_same(b.toTensor());
    case Tag::Double:
      return a.toDouble() == b.toDouble();
    case Tag::Int:
      return a.toInt() == b.toInt();
    case Tag::Bool:
      return a.toBool() == b.toBool();
    case Tag::String:
      return a.toStringRef() == b.toStringRef();
    case Tag::Device:
      return a.toDevice() == b.toDevice();
    case Tag::IntList:
      return a.toIntListRef() == b.toIntListRef();
    case Tag::DoubleList:
      return a.toDoubleListRef() == b.toDoubleListRef();
    case Tag::BoolList:
      return a.toBoolListRef() == b.toBoolListRef();
    case Tag::TensorList: {
      const std::vector<Tensor>& x = a.toTensorListRef();
      const std::vector<Tensor>& y = b.toTensorListRef();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!x[i].is_same(y[i])) return false;
      }
      return true;
    }
    case Tag::GenericList:
      return a.toListRef() == b.toListRef();
    case Tag::Tuple:
      return a.toTupleRef().elements() == b.toTupleRef().elements();
    case Tag::Dict: {
      const DictImpl& x = a.toDictRef();
      const DictImpl& y = b.toDictRef();
      if (x.size() != y.size()) return false;
      for (const auto& [key, value] : x.entries()) {
        const IValue* other = y.find(key);
        if (other == nullptr || !(*other == value)) return false;
      }
      return true;
    }
    case Tag::Future:
      return a.toFuture() == b.toFuture();
  }
  return false;
}

// ---- Printing
// ------------------------------------------------------------------

namespace {

void printQuoted(std::ostream& out, const std::string& s) {
  out << '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\t':
        out << "\\t";
        break;
      case '\r':
        out << "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\x%02x", c);
          out << buffer;
        } else {
          out << c;
        }
    }
  }
  out << '"';
}

template <class T, class Print>
void printSequence(std::ostream& out, const std::vector<T>& elements,
                   const char* open, const char* close, Print print) {
  out << open;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out << ", ";
    print(elements[i]);
  }
  out << close;
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const IValue& v) {
  using Tag = IValue::Tag;
  switch (v.tag()) {
    case Tag::None:
      return out << "None";
    case Tag::Tensor:
      return out << v.toTensor();
    case Tag::Double:
      return out << detail::formatDouble(v.toDouble());
    case Tag::Int:
      return out << v.toInt();
    case Tag::Bool:
      return out << (v.toBool() ? "True" : "False");
    case Tag::String:
      printQuoted(out, v.toStringRef());
      return out;
    case Tag::Device:
      return out << v.toDevice();
    case Tag::IntList:
      printSequence(out, v.toIntListRef(), "[", "]",
                    [&](int64_t e) { out << e; });
      return out;
    case Tag::DoubleList:
      printSequence(out, v.toDoubleListRef(), "[", "]",
                    [&](double e) { out << detail::formatDouble(e); });
      return out;
    case Tag::BoolList:
      printSequence(out, v.toBoolListRef(), "[", "]",
                    [&](bool e) { out << (e ? "True" : "False"); });
      return out;
    case Tag::TensorList:
      printSequence(out, v.toTensorListRef(), "[", "]",
                    [&](const Tensor& e) { out << e; });
      return out;
    case Tag::GenericList:
      printSequence(out, v.toListRef(), "[", "]",
                    [&](const IValue& e) { out << e; });
      return out;
    case Tag::Tuple: {
      const std::vector<IValue>& elements = v.toTupleRef().elements();
      // Python's spelling of a 1-tuple: (x,)
      printSequence(out, elements, "(", elements.size() == 1 ? ",)" : ")",
                    [&](const IValue& e) { out << e; });
      return out;
    }
    case Tag::Dict:
      printSequence(out, v.toDictRef().entries(), "{", "}",
                    [&](const DictImpl::Entry& e) {
                      out << e.first << ": " << e.second;
                    });
      return out;
    case Tag::Future:
      return out << "Future";
  }
  return out << "<invalid IValue>";
}

std::ostream& operator<<(std::ostream& out, IValue::Tag tag) {
  return out << IValue::tagName(tag);
}

}  // namespace turnout

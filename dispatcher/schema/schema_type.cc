#include "dispatcher/schema/schema_type.h"

#include <algorithm>
#include <array>
#include <utility>

#include "dispatcher/core/error.h"

namespace turnout {
namespace {

using Kind = SchemaType::Kind;

constexpr size_t kNumLeafKinds = static_cast<size_t>(Kind::Var);

struct KindInfo {
  const char* enumerator;     // "Int"
  std::string_view spelling;  // "int"; empty for non-leaf kinds.
};

// Indexed by Kind; the static_assert below keeps it in step with the enum.
constexpr KindInfo kKindInfo[] = {
    {"Tensor", "Tensor"},
    {"Int", "int"},
    {"SymInt", "SymInt"},
    {"Float", "float"},
    {"Bool", "bool"},
    {"Str", "str"},
    {"Scalar", "Scalar"},
    {"ScalarType", "ScalarType"},
    {"Layout", "Layout"},
    {"MemoryFormat", "MemoryFormat"},
    {"Device", "Device"},
    {"Generator", "Generator"},
    {"Dimname", "Dimname"},
    {"Storage", "Storage"},
    {"Stream", "Stream"},
    {"QScheme", "QScheme"},
    {"Complex", "complex"},
    {"Number", "number"},
    {"Any", "Any"},
    {"AnyEnum", "AnyEnumType"},
    {"AnyClass", "AnyClassType"},
    {"None", "NoneType"},
    {"Var", {}},
    {"List", {}},
    {"Optional", {}},
    {"Dict", {}},
    {"Future", {}},
    {"RRef", {}},
    {"Tuple", {}},
};
static_assert(sizeof(kKindInfo) / sizeof(kKindInfo[0]) ==
                  static_cast<size_t>(Kind::Tuple) + 1,
              "kKindInfo must list every SchemaType::Kind");

SchemaTypePtr make(Kind kind, std::vector<SchemaTypePtr> contained) {
  if (kind != Kind::List && kind != Kind::Optional) {
    int nesting = 0;
    for (const SchemaTypePtr& c : contained) {
      nesting = std::max(nesting, c->nesting());
    }
    TURNOUT_CHECK(nesting < SchemaType::kMaxNesting,
                  ErrorKind::InvalidArgument, "a ", toString(kind),
                  " type would nest Dict, Future, RRef and tuple types more "
                  "than ",
                  SchemaType::kMaxNesting,
                  " deep; flatten the type (PyTorch's schemas nest at most 3 "
                  "deep)");
  }
  return std::make_shared<const SchemaType>(
      SchemaType::PrivateTag{}, kind, std::string(), std::move(contained));
}

// The shared singletons: every leaf type, and the containers the dispatcher's
// schemas use most, so that parsing "Tensor?[]" allocates nothing.
struct Singletons {
  std::array<SchemaTypePtr, kNumLeafKinds> leaf;
  std::array<SchemaTypePtr, kNumLeafKinds> list_of;           // T[]
  std::array<SchemaTypePtr, kNumLeafKinds> optional_of;       // T?
  std::array<SchemaTypePtr, kNumLeafKinds> optional_list_of;  // T[]?
  SchemaTypePtr optional_tensor_list;                         // Tensor?[]

  Singletons() {
    for (size_t i = 0; i < kNumLeafKinds; ++i) {
      leaf[i] = make(static_cast<Kind>(i), {});
      list_of[i] = make(Kind::List, {leaf[i]});
      optional_of[i] = make(Kind::Optional, {leaf[i]});
      optional_list_of[i] = make(Kind::Optional, {list_of[i]});
    }
    optional_tensor_list =
        make(Kind::List, {optional_of[static_cast<size_t>(Kind::Tensor)]});
  }
};

const Singletons& singletons() {
  static const Singletons* s = new Singletons();  // Never destroyed.
  return *s;
}

// The index of `type` when it is a leaf singleton, else -1.
int leafIndex(const SchemaTypePtr& type) {
  return type && type->isLeaf() ? static_cast<int>(type->kind()) : -1;
}

void checkElement(const SchemaTypePtr& element, const char* what) {
  TURNOUT_INTERNAL_ASSERT(element != nullptr, "SchemaType::", what,
                          "() was given a null element type");
}

}  // namespace

SchemaType::SchemaType(PrivateTag, Kind kind, std::string var_name,
                       std::vector<SchemaTypePtr> contained)
    : kind_(kind),
      var_name_(std::move(var_name)),
      contained_(std::move(contained)) {
  for (const SchemaTypePtr& c : contained_) {
    nesting_ = std::max(nesting_, c->nesting_);
  }
  if (kind_ != Kind::List && kind_ != Kind::Optional && !contained_.empty()) {
    ++nesting_;
  }
  if (kind_ == Kind::Tuple && contained_.empty()) nesting_ = 1;
}

SchemaType::~SchemaType() {
  // A type owned only by this one dies with it: take its elements first,
  // so that a chain such as int[][]...[] is freed by this loop and not by
  // a recursion as deep as the chain.
  std::vector<SchemaTypePtr> pending = std::move(contained_);
  while (!pending.empty()) {
    SchemaTypePtr t = std::move(pending.back());
    pending.pop_back();
    if (t.use_count() == 1) {
      auto& inner = const_cast<SchemaType&>(*t).contained_;
      for (SchemaTypePtr& c : inner) pending.push_back(std::move(c));
      inner.clear();
    }
  }
}

const SchemaTypePtr& SchemaType::get(Kind kind) {
  TURNOUT_INTERNAL_ASSERT(static_cast<size_t>(kind) < kNumLeafKinds,
                          "SchemaType::get() takes a leaf kind, not ",
                          turnout::toString(kind));
  return singletons().leaf[static_cast<size_t>(kind)];
}

SchemaTypePtr SchemaType::var(std::string name) {
  TURNOUT_INTERNAL_ASSERT(!name.empty(), "a type variable needs a name");
  return std::make_shared<const SchemaType>(
      PrivateTag{}, Kind::Var, std::move(name), std::vector<SchemaTypePtr>());
}

SchemaTypePtr SchemaType::list(SchemaTypePtr element) {
  checkElement(element, "list");
  const Singletons& s = singletons();
  int leaf = leafIndex(element);
  if (leaf >= 0) return s.list_of[leaf];
  if (element == s.optional_of[static_cast<size_t>(Kind::Tensor)]) {
    return s.optional_tensor_list;
  }
  return make(Kind::List, {std::move(element)});
}

SchemaTypePtr SchemaType::optional(SchemaTypePtr element) {
  checkElement(element, "optional");
  // T?? is T?, as in torch 1.13 (which prints f(int?? x) as f(int? x)).
  if (element->kind() == Kind::Optional) return element;
  const Singletons& s = singletons();
  int leaf = leafIndex(element);
  if (leaf >= 0) return s.optional_of[leaf];
  if (element->kind() == Kind::List) {
    int inner = leafIndex(element->contained_[0]);
    if (inner >= 0 && element == s.list_of[inner]) {
      return s.optional_list_of[inner];
    }
  }
  return make(Kind::Optional, {std::move(element)});
}

SchemaTypePtr SchemaType::dict(SchemaTypePtr key, SchemaTypePtr value) {
  checkElement(key, "dict");
  checkElement(value, "dict");
  return make(Kind::Dict, {std::move(key), std::move(value)});
}

SchemaTypePtr SchemaType::future(SchemaTypePtr element) {
  checkElement(element, "future");
  return make(Kind::Future, {std::move(element)});
}

SchemaTypePtr SchemaType::rref(SchemaTypePtr element) {
  checkElement(element, "rref");
  return make(Kind::RRef, {std::move(element)});
}

SchemaTypePtr SchemaType::tuple(std::vector<SchemaTypePtr> elements) {
  for (const SchemaTypePtr& e : elements) checkElement(e, "tuple");
  return make(Kind::Tuple, std::move(elements));
}

const SchemaTypePtr& SchemaType::elementType() const {
  TURNOUT_INTERNAL_ASSERT(kind_ == Kind::List || kind_ == Kind::Optional ||
                              kind_ == Kind::Future || kind_ == Kind::RRef,
                          "elementType() of a ", turnout::toString(kind_),
                          " type");
  return contained_[0];
}

const SchemaTypePtr& SchemaType::keyType() const {
  TURNOUT_INTERNAL_ASSERT(kind_ == Kind::Dict, "keyType() of a ",
                          turnout::toString(kind_), " type");
  return contained_[0];
}

const SchemaTypePtr& SchemaType::valueType() const {
  TURNOUT_INTERNAL_ASSERT(kind_ == Kind::Dict, "valueType() of a ",
                          turnout::toString(kind_), " type");
  return contained_[1];
}

const std::string& SchemaType::varName() const {
  TURNOUT_INTERNAL_ASSERT(kind_ == Kind::Var, "varName() of a ",
                          turnout::toString(kind_), " type");
  return var_name_;
}

bool SchemaType::isTensorList() const {
  return kind_ == Kind::List && contained_[0]->isTensor();
}

bool SchemaType::isOptionalTensor() const {
  return kind_ == Kind::Optional && contained_[0]->isTensor();
}

bool SchemaType::isOptionalTensorList() const {
  return kind_ == Kind::List && contained_[0]->isOptionalTensor();
}

bool SchemaType::containsTensor() const {
  const SchemaType* t = this;
  while (t->contained_.size() == 1 && t->kind_ != Kind::Tuple) {
    t = t->contained_[0].get();
  }
  if (t->isTensor()) return true;
  for (const SchemaTypePtr& c : t->contained_) {
    if (c->containsTensor()) return true;
  }
  return false;
}

void SchemaType::appendTo(std::string& out) const {
  // A run of List and Optional suffixes prints in a loop: its innermost
  // type first, then the suffixes from the inside out.
  const SchemaType* base = this;
  size_t suffixes = 0;
  while (base->kind_ == Kind::List || base->kind_ == Kind::Optional) {
    base = base->contained_[0].get();
    ++suffixes;
  }
  base->appendBase(out);
  if (suffixes == 0) return;
  std::string tail;
  for (const SchemaType* t = this; t != base; t = t->contained_[0].get()) {
    // Reversed below: the outermost suffix goes last.
    tail += t->kind_ == Kind::List ? "][" : "?";
  }
  std::reverse(tail.begin(), tail.end());
  out += tail;
}

void SchemaType::appendBase(std::string& out) const {
  if (isLeaf()) {
    out += kKindInfo[static_cast<size_t>(kind_)].spelling;
    return;
  }
  switch (kind_) {
    case Kind::Var:
      out += var_name_;
      return;
    case Kind::Dict:
      out += "Dict(";
      contained_[0]->appendTo(out);
      out += ", ";
      contained_[1]->appendTo(out);
      out += ')';
      return;
    case Kind::Future:
    case Kind::RRef:
      out += kind_ == Kind::Future ? "Future(" : "RRef(";
      contained_[0]->appendTo(out);
      out += ')';
      return;
    case Kind::Tuple:
      out += '(';
      for (size_t i = 0; i < contained_.size(); ++i) {
        if (i > 0) out += ", ";
        contained_[i]->appendTo(out);
      }
      out += ')';
      return;
    default:
      TURNOUT_INTERNAL_ASSERT(false, "unhandled kind ",
                              turnout::toString(kind_));
  }
}

std::string SchemaType::toString() const {
  std::string out;
  appendTo(out);
  return out;
}

bool operator==(const SchemaType& a, const SchemaType& b) {
  // Types with one element (lists, optionals, futures) compare in a loop;
  // only Dict and tuple elements recurse, at most kMaxNesting deep.
  const SchemaType* x = &a;
  const SchemaType* y = &b;
  for (;;) {
    if (x == y) return true;
    if (x->kind_ != y->kind_ || x->var_name_ != y->var_name_ ||
        x->contained_.size() != y->contained_.size()) {
      return false;
    }
    if (x->contained_.size() != 1 || x->kind_ == SchemaType::Kind::Tuple) {
      break;
    }
    x = x->contained_[0].get();
    y = y->contained_[0].get();
  }
  for (size_t i = 0; i < x->contained_.size(); ++i) {
    if (*x->contained_[i] != *y->contained_[i]) return false;
  }
  return true;
}

const char* toString(SchemaType::Kind kind) {
  size_t i = static_cast<size_t>(kind);
  return i < sizeof(kKindInfo) / sizeof(kKindInfo[0]) ? kKindInfo[i].enumerator
                                                      : "Unknown";
}

std::ostream& operator<<(std::ostream& out, const SchemaType& type) {
  return out << type.toString();
}

namespace detail {

std::optional<SchemaType::Kind> leafKindFromSpelling(
    std::string_view spelling) {
  if (spelling == "None") return Kind::None;
  for (size_t i = 0; i < kNumLeafKinds; ++i) {
    if (spelling == kKindInfo[i].spelling) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace turnout

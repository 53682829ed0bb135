#include "dispatcher/schema/schema_type.h"

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
      contained_(std::move(contained)) {}

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
  if (isTensor()) return true;
  for (const SchemaTypePtr& c : contained_) {
    if (c->containsTensor()) return true;
  }
  return false;
}

void SchemaType::appendTo(std::string& out) const {
  if (isLeaf()) {
    out += kKindInfo[static_cast<size_t>(kind_)].spelling;
    return;
  }
  switch (kind_) {
    case Kind::Var:
      out += var_name_;
      return;
    case Kind::List:
      contained_[0]->appendTo(out);
      out += "[]";
      return;
    case Kind::Optional:
      contained_[0]->appendTo(out);
      out += '?';
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
  if (&a == &b) return true;
  if (a.kind_ != b.kind_ || a.var_name_ != b.var_name_ ||
      a.contained_.size() != b.contained_.size()) {
    return false;
  }
  for (size_t i = 0; i < a.contained_.size(); ++i) {
    if (*a.contained_[i] != *b.contained_[i]) return false;
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

#include "jit/ir/type.h"

#include <algorithm>
#include <utility>

#include "dispatcher/core/error.h"

namespace turnout {
namespace jit {
namespace {

using Kind = SchemaType::Kind;

void appendDims(std::string& out,
                const std::vector<std::optional<int64_t>>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += dims[i] ? std::to_string(*dims[i]) : "*";
  }
}

bool isIntLike(Kind k) {
  // ScalarType, Layout and MemoryFormat travel as ints in graphs, as in
  // TorchScript.
  return k == Kind::Int || k == Kind::SymInt || k == Kind::ScalarType ||
         k == Kind::Layout || k == Kind::MemoryFormat;
}

}  // namespace

bool operator==(const TensorRefinement& a, const TensorRefinement& b) {
  return a.dtype == b.dtype && a.sizes == b.sizes && a.strides == b.strides &&
         a.requires_grad == b.requires_grad && a.device == b.device;
}

Type::Type() : type_(SchemaType::get(Kind::Tensor)) {}

Type::Type(SchemaTypePtr type) : type_(std::move(type)) {
  TURNOUT_INTERNAL_ASSERT(type_ != nullptr, "Type(): null schema type");
}

Type Type::of(SchemaType::Kind kind) { return Type(SchemaType::get(kind)); }

Type Type::tensor(TensorRefinement refinement) {
  Type t;
  t.refinement_ =
      std::make_shared<const TensorRefinement>(std::move(refinement));
  return t;
}

Type Type::tuple(std::vector<Type> elements) {
  std::vector<SchemaTypePtr> schema;
  bool plain = true;
  for (const Type& e : elements) {
    schema.push_back(e.type_);
    if (e.refinement_ != nullptr || e.special_ != Special::None ||
        e.contained_ != nullptr) {
      plain = false;
    }
  }
  Type t(SchemaType::tuple(std::move(schema)));
  if (!plain) {
    t.contained_ =
        std::make_shared<const std::vector<Type>>(std::move(elements));
  }
  return t;
}

Type Type::unionOf(std::vector<Type> members) {
  TURNOUT_INTERNAL_ASSERT(members.size() >= 2,
                          "Type::unionOf(): a union needs two members");
  Type t(SchemaType::get(Kind::Any));
  t.special_ = Special::Union;
  t.contained_ = std::make_shared<const std::vector<Type>>(std::move(members));
  return t;
}

Type Type::function() {
  Type t(SchemaType::get(Kind::Any));
  t.special_ = Special::Function;
  return t;
}

Type Type::classType(std::string qualified_name) {
  TURNOUT_INTERNAL_ASSERT(!qualified_name.empty(),
                          "Type::classType(): empty class name");
  Type t(SchemaType::get(Kind::Any));
  t.special_ = Special::Class;
  t.class_name_ = std::make_shared<const std::string>(std::move(qualified_name));
  return t;
}

const std::string& Type::className() const {
  static const std::string kEmpty;
  return class_name_ != nullptr ? *class_name_ : kEmpty;
}

Type Type::unrefined() const {
  if (contained_ == nullptr) {
    Type t(type_);
    t.special_ = special_;
    t.class_name_ = class_name_;
    return t;
  }
  std::vector<Type> elements;
  for (const Type& e : *contained_) elements.push_back(e.unrefined());
  if (special_ == Special::Union) return unionOf(std::move(elements));
  return tuple(std::move(elements));
}

std::vector<Type> Type::containedTypes() const {
  if (contained_ != nullptr) return *contained_;
  std::vector<Type> out;
  if (type_->kind() == Kind::Tuple) {
    for (const SchemaTypePtr& e : type_->containedTypes()) out.emplace_back(e);
  }
  return out;
}

std::string graphTypeString(const SchemaType& type) {
  // List and optional suffixes are peeled in a loop (they nest without
  // bound); the other containers recurse, at most kMaxNesting deep.
  const SchemaType* t = &type;
  std::string suffix;
  while (t->kind() == Kind::List || t->kind() == Kind::Optional) {
    suffix.insert(0, t->kind() == Kind::List ? "[]" : "?");
    t = t->elementType().get();
  }
  std::string out;
  switch (t->kind()) {
    case Kind::Future:
      out = "Future[" + graphTypeString(*t->elementType()) + "]";
      break;
    case Kind::Dict:
      out = "Dict(" + graphTypeString(*t->keyType()) + ", " +
            graphTypeString(*t->valueType()) + ")";
      break;
    case Kind::Tuple: {
      out = "(";
      const auto& es = t->containedTypes();
      for (size_t i = 0; i < es.size(); ++i) {
        if (i > 0) out += ", ";
        out += graphTypeString(*es[i]);
      }
      out += ")";
      break;
    }
    default:
      out = t->toString();
  }
  return out + suffix;
}

std::string Type::toString() const {
  if (special_ == Special::Function) return "Function";
  if (special_ == Special::Class) return *class_name_;
  if (contained_ != nullptr) {
    std::string out = special_ == Special::Union ? "Union(" : "(";
    for (size_t i = 0; i < contained_->size(); ++i) {
      if (i > 0) out += ", ";
      out += (*contained_)[i].toString();
    }
    return out + ")";
  }
  if (refinement_ == nullptr) return graphTypeString(*type_);
  const TensorRefinement& r = *refinement_;
  std::string out = r.dtype ? turnout::toString(*r.dtype) : "Tensor";
  out += '(';
  bool first = true;
  auto sep = [&] {
    if (!first) out += ", ";
    first = false;
  };
  if (r.sizes && !r.sizes->empty()) {
    sep();
    appendDims(out, *r.sizes);
  }
  if (r.strides && !r.strides->empty()) {
    sep();
    out += "strides=[";
    appendDims(out, *r.strides);
    out += ']';
  }
  if (r.requires_grad) {
    sep();
    out += *r.requires_grad ? "requires_grad=1" : "requires_grad=0";
  }
  if (r.device) {
    sep();
    out += "device=" + r.device->str();
  }
  out += ')';
  return out;
}

bool operator==(const Type& a, const Type& b) {
  if (*a.type_ != *b.type_ || a.special_ != b.special_) return false;
  if (a.className() != b.className()) return false;
  if ((a.contained_ == nullptr) != (b.contained_ == nullptr)) return false;
  if (a.contained_ != nullptr && *a.contained_ != *b.contained_) return false;
  if ((a.refinement_ == nullptr) != (b.refinement_ == nullptr)) return false;
  return a.refinement_ == nullptr || *a.refinement_ == *b.refinement_;
}

int matchScore(const SchemaType& actual_type, const SchemaType& formal_type) {
  // Types with one element (lists, optionals, futures) are followed in a
  // loop, as they may nest without bound; Dict and tuple elements recurse,
  // at most SchemaType::kMaxNesting deep.
  const SchemaType* actual = &actual_type;
  const SchemaType* formal = &formal_type;
  int extra = 0;  // conversions counted on the way down
  for (;;) {
    const Kind f = formal->kind();
    const Kind a = actual->kind();
    switch (f) {
      case Kind::Var:
      case Kind::Any:
        return extra;
      case Kind::Optional:
        if (a == Kind::None) return extra + 1;
        if (a == Kind::Optional) {
          actual = actual->elementType().get();
        } else {
          ++extra;
        }
        formal = formal->elementType().get();
        continue;
      case Kind::Scalar:
      case Kind::Number:
        if (a == f) return extra;
        if (a == Kind::Int || a == Kind::Float || a == Kind::Bool ||
            a == Kind::Complex || a == Kind::Scalar || a == Kind::Number) {
          return extra + 1;
        }
        return -1;
      case Kind::List:
      case Kind::Future:
      case Kind::RRef:
        if (a != f) return -1;
        actual = actual->elementType().get();
        formal = formal->elementType().get();
        continue;
      case Kind::Dict: {
        if (a != f) return -1;
        int k = matchScore(*actual->keyType(), *formal->keyType());
        int v = matchScore(*actual->valueType(), *formal->valueType());
        return k < 0 || v < 0 ? -1 : extra + k + v;
      }
      case Kind::Tuple: {
        if (a != f) return -1;
        const auto& ae = actual->containedTypes();
        const auto& fe = formal->containedTypes();
        if (ae.size() != fe.size()) return -1;
        int total = extra;
        for (size_t i = 0; i < ae.size(); ++i) {
          int s = matchScore(*ae[i], *fe[i]);
          if (s < 0) return -1;
          total += s;
        }
        return total;
      }
      default:
        if (a == f) return extra;
        if (isIntLike(f) && isIntLike(a)) {
          return extra + (a == Kind::Int ? 0 : 1);
        }
        return -1;
    }
  }
}

int matchScore(const Type& actual, const SchemaType& formal) {
  if (!actual.isUnion()) return matchScore(*actual.schemaType(), formal);
  if (formal.kind() == Kind::Any || formal.kind() == Kind::Var) return 0;
  int worst = 0;
  for (const Type& m : actual.containedTypes()) {
    int s = matchScore(m, formal);
    if (s < 0) return -1;
    worst = std::max(worst, s);
  }
  return worst;
}

}  // namespace jit
}  // namespace turnout

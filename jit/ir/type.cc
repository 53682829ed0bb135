#include "jit/ir/type.h"

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

std::string Type::toString() const {
  if (refinement_ == nullptr) return type_->toString();
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
  if (*a.type_ != *b.type_) return false;
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

}  // namespace jit
}  // namespace turnout

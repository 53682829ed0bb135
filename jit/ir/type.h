// Type: the type of a graph Value -- a schema type (dispatcher/schema/schema_type.h)
// plus, for tensors, the refinements TorchScript's profiling and tracing add
// (dtype, sizes, strides, requires_grad, device).
//
//   Type t = Type::of(SchemaType::Kind::Int);             // "int"
//   Type l = Type(SchemaType::list(t.schemaType()));      // "int[]"
//   TensorRefinement r;
//   r.dtype = ScalarType::Float;
//   r.sizes = {{3, 4}};
//   r.strides = {{4, 1}};
//   r.requires_grad = false;
//   r.device = Device("cpu");
//   Type::tensor(r).toString();  // "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)"
//
// The graph layer reuses the schema language's types rather than keeping a
// second type system: a Value typed `int[]` matches a schema argument `int[]`
// by structural equality. Only tensors carry extra facts.
//
// Thread safety: immutable value type; share and read from any thread.
#ifndef TURNOUT_JIT_IR_TYPE_H_
#define TURNOUT_JIT_IR_TYPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/device.h"
#include "dispatcher/core/scalar_type.h"
#include "dispatcher/schema/schema_type.h"

namespace turnout {
namespace jit {

/// What is known about a tensor beyond "Tensor". Each field is optional:
/// unset means unknown. A size or stride that is nullopt inside a known-rank
/// vector prints as `*`.
struct TensorRefinement {
  std::optional<ScalarType> dtype;
  std::optional<std::vector<std::optional<int64_t>>> sizes;
  std::optional<std::vector<std::optional<int64_t>>> strides;
  std::optional<bool> requires_grad;
  std::optional<Device> device;

  friend bool operator==(const TensorRefinement& a, const TensorRefinement& b);
  friend bool operator!=(const TensorRefinement& a,
                         const TensorRefinement& b) {
    return !(a == b);
  }
};

/// A Value's type.
///
/// Besides a schema type, a Type may be one of the graph-only types torch
/// prints: a union (`Union(Tensor, int)`, whose schema type is Any) or a
/// function (`Function`, the type of a `prim::Constant[name="f"]()` that
/// `prim::CallFunction` calls; schema type Any). Tuples keep their
/// elements' graph types, so a tuple of refined tensors prints as torch
/// prints it: `(Float(3, strides=[1], requires_grad=0, device=cpu), int)`.
/// A class type (`__torch__.MyModule`, the type of a scripted module's
/// `self` and of the submodules `prim::GetAttr` reads) is known by its
/// qualified name only; it has schema type Any. turnout holds no module
/// objects: `lowerGraph` (passes/lower_graph.h) turns such a graph into one
/// that takes the attributes as inputs.
class Type {
 public:
  /// What a Type is beyond its schema type.
  enum class Special : uint8_t { None, Union, Function, Class };

  /// Tensor, unrefined.
  Type();
  /// Any schema type. Precondition: `type` is not null.
  explicit Type(SchemaTypePtr type);
  /// The leaf type of `kind` (Tensor, int, float, bool, str, NoneType,
  /// Device, ...).
  static Type of(SchemaType::Kind kind);
  /// A refined tensor type.
  static Type tensor(TensorRefinement refinement);
  /// A tuple of graph types (refined tensors, unions, ... kept).
  static Type tuple(std::vector<Type> elements);
  /// `Union(T1, T2, ...)`. Precondition: at least two members.
  static Type unionOf(std::vector<Type> members);
  /// `Function`: the type of a function constant.
  static Type function();
  /// A class type, by its qualified name (`__torch__.M`,
  /// `__torch__.torch.nn.modules.linear.Linear`). Precondition: `name` is
  /// not empty.
  static Type classType(std::string qualified_name);

  const SchemaTypePtr& schemaType() const { return type_; }
  SchemaType::Kind kind() const { return type_->kind(); }
  bool isTensor() const { return type_->kind() == SchemaType::Kind::Tensor; }
  /// The refinement of a refined tensor type, else null.
  const TensorRefinement* refinement() const { return refinement_.get(); }
  /// The same type without tensor refinements (at the top and inside
  /// tuples and unions).
  Type unrefined() const;

  Special special() const { return special_; }
  bool isUnion() const { return special_ == Special::Union; }
  bool isFunction() const { return special_ == Special::Function; }
  bool isClass() const { return special_ == Special::Class; }
  /// The qualified name of a class type; empty for other types.
  const std::string& className() const;
  /// The members of a union, or the element types of a tuple (with their
  /// refinements); empty for other types.
  std::vector<Type> containedTypes() const;

  /// As PyTorch 1.13 prints a graph value's type: "Tensor", "int[]",
  /// "(Tensor, bool)", "int?", "NoneType", "Device",
  /// "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)".
  std::string toString() const;

  /// Same schema type and same refinement.
  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  SchemaTypePtr type_;
  std::shared_ptr<const TensorRefinement> refinement_;
  Special special_ = Special::None;
  // Union members, or a tuple's elements when one of them is more than its
  // schema type (refined, a union, a function); else null.
  std::shared_ptr<const std::vector<Type>> contained_;
  // A class type's qualified name; else null.
  std::shared_ptr<const std::string> class_name_;
};

/// How well a value of type `actual` fits a schema argument of type
/// `formal`: 0 for an exact fit, a positive number of implicit conversions
/// (int -> Scalar, None -> T?, ...), or -1 when it does not fit. Type
/// variables fit anything (they are not bound consistently across
/// arguments).
int matchScore(const SchemaType& actual, const SchemaType& formal);

/// As matchScore, for graph types: a union fits a formal when each of its
/// members does (the worst member's score).
int matchScore(const Type& actual, const SchemaType& formal);

/// A schema type as torch 1.13 prints it in a graph: as its schema text,
/// but `Future[T]` for a future.
std::string graphTypeString(const SchemaType& type);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_TYPE_H_

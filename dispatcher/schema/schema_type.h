// SchemaType: the types of the schema language ("Tensor?", "int[]",
// "Dict(str, t)", ...) as an immutable tree shared through SchemaTypePtr.
//
//   SchemaTypePtr t = SchemaType::list(
//       SchemaType::optional(SchemaType::get(SchemaType::Kind::Tensor)));
//   t->toString();              // "Tensor?[]"
//   t->isOptionalTensorList();  // true
//   *t == *parseSchema("f(Tensor?[] x) -> ()").arguments()[0].type();  // true
//
// Types print exactly as PyTorch 1.13 prints them (`str(type)`), with one
// deliberate difference: Dimname keeps its own name, where PyTorch's parser
// turns it into `str`.
//
// Limits: List and Optional suffixes may nest without bound (torch 1.13
// parses `int` followed by 100,000 `[]`): every function here walks such a
// chain in a loop. The other containers (Dict, Future, RRef, Tuple) may nest
// at most kMaxNesting deep; a factory asked for more throws
// Error(InvalidArgument). So code that recurses only into those containers
// and loops over List/Optional chains recurses at most kMaxNesting deep.
//
// Invariants: a node never changes after construction. Leaf kinds (Tensor,
// int, ...) exist once each, so `get(kind)` never allocates; so do the common
// containers of a leaf (`Tensor?`, `int[]`, `Tensor?[]`, `int[]?`).
//
// Thread safety: immutable; share and read from any thread.
#ifndef TURNOUT_DISPATCHER_SCHEMA_SCHEMA_TYPE_H_
#define TURNOUT_DISPATCHER_SCHEMA_SCHEMA_TYPE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace turnout {

class SchemaType;

/// Types are shared, immutable trees.
using SchemaTypePtr = std::shared_ptr<const SchemaType>;

/// One type of the schema language.
class SchemaType {
 public:
  /// What a type is. The comment gives each leaf kind's spelling.
  enum class Kind : uint8_t {
    Tensor,        // Tensor
    Int,           // int
    SymInt,        // SymInt
    Float,         // float
    Bool,          // bool
    Str,           // str
    Scalar,        // Scalar
    ScalarType,    // ScalarType
    Layout,        // Layout
    MemoryFormat,  // MemoryFormat
    Device,        // Device
    Generator,     // Generator
    Dimname,       // Dimname
    Storage,       // Storage
    Stream,        // Stream
    QScheme,       // QScheme
    Complex,       // complex
    Number,        // number
    Any,           // Any
    AnyEnum,       // AnyEnumType
    AnyClass,      // AnyClassType
    None,          // NoneType (the parser also reads "None")
    // Type variable such as t, t1, tVal: any lowercase name that is not a
    // type, as in c10.
    Var,
    List,      // T[]
    Optional,  // T?
    Dict,      // Dict(K, V)
    Future,    // Future(T)
    RRef,      // RRef(T)
    Tuple,     // (T1, T2, ...)
  };

  /// How deep Dict, Future, RRef and Tuple may nest in one type (List and
  /// Optional do not count). PyTorch's own schemas nest at most 3 deep.
  static constexpr int kMaxNesting = 256;

  // Construction. Types are built only through these factories. The
  // container factories throw Error(InvalidArgument) when the result would
  // nest deeper than kMaxNesting.

  /// The type of a leaf kind (Tensor through None). Never allocates.
  /// Precondition: `kind` is a leaf kind, i.e. not Var or a container.
  static const SchemaTypePtr& get(Kind kind);
  /// A type variable, e.g. var("t"). Precondition: `name` is not empty.
  static SchemaTypePtr var(std::string name);
  /// T[].
  static SchemaTypePtr list(SchemaTypePtr element);
  /// T?. An optional of an optional is that optional (T?? is T?), as in
  /// torch 1.13.
  static SchemaTypePtr optional(SchemaTypePtr element);
  /// Dict(K, V).
  static SchemaTypePtr dict(SchemaTypePtr key, SchemaTypePtr value);
  /// Future(T).
  static SchemaTypePtr future(SchemaTypePtr element);
  /// RRef(T).
  static SchemaTypePtr rref(SchemaTypePtr element);
  /// (T1, T2, ...); may be empty.
  static SchemaTypePtr tuple(std::vector<SchemaTypePtr> elements);

  // Inspection.

  Kind kind() const { return kind_; }
  /// True for Tensor through None: kinds without a name or contained types.
  bool isLeaf() const { return kind_ < Kind::Var; }
  /// Element types: one for List, Optional, Future and RRef; key and value
  /// for Dict; the elements of a Tuple; none for leaves and Var.
  const std::vector<SchemaTypePtr>& containedTypes() const {
    return contained_;
  }
  /// The element of a List, Optional, Future or RRef (precondition).
  const SchemaTypePtr& elementType() const;
  /// Key and value of a Dict (precondition).
  const SchemaTypePtr& keyType() const;
  const SchemaTypePtr& valueType() const;
  /// Name of a type variable (precondition: kind() == Var).
  const std::string& varName() const;
  /// How deep Dict, Future, RRef and Tuple nest in this type: 0 for a leaf,
  /// a variable, or lists and optionals of those; 1 for Dict(str, int[]).
  int nesting() const { return nesting_; }

  // Predicates the dispatcher uses to find the arguments that carry
  // dispatch keys.

  /// Tensor.
  bool isTensor() const { return kind_ == Kind::Tensor; }
  /// Tensor[].
  bool isTensorList() const;
  /// Tensor?.
  bool isOptionalTensor() const;
  /// Tensor?[].
  bool isOptionalTensorList() const;
  /// True when a Tensor occurs anywhere in the type, e.g. Dict(str, Tensor[]).
  bool containsTensor() const;

  // Printing.

  /// As PyTorch 1.13's str(): "Tensor?", "int[]", "Tensor?[]",
  /// "Dict(str, t)", "(str, t)", "Future(t)".
  std::string toString() const;
  /// Appends toString() to `out`.
  void appendTo(std::string& out) const;

  /// Structural equality: same kind, same variable name, equal elements.
  friend bool operator==(const SchemaType& a, const SchemaType& b);
  friend bool operator!=(const SchemaType& a, const SchemaType& b) {
    return !(a == b);
  }

  // Public for std::make_shared only; use the factories.
  struct PrivateTag {};
  SchemaType(PrivateTag, Kind kind, std::string var_name,
             std::vector<SchemaTypePtr> contained);
  // Frees a long chain of sole-owned elements in a loop, not recursively.
  ~SchemaType();

 private:
  // Appends a type that is not a List or Optional.
  void appendBase(std::string& out) const;

  Kind kind_;
  int nesting_ = 0;                       // See nesting().
  std::string var_name_;                  // Var only.
  std::vector<SchemaTypePtr> contained_;  // See containedTypes().
};

/// The enumerator's name, e.g. "Tensor", "SymInt", "Var", "Optional".
const char* toString(SchemaType::Kind kind);

std::ostream& operator<<(std::ostream& out, const SchemaType& type);

// Implementation details.
namespace detail {

/// The leaf kind spelled `spelling` in a schema ("int", "Tensor", "None",
/// "NoneType", ...), or nullopt.
std::optional<SchemaType::Kind> leafKindFromSpelling(std::string_view spelling);

}  // namespace detail
}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_SCHEMA_SCHEMA_TYPE_H_

// The graph IR: Graph, Block, Node and Value, in TorchScript's shape.
//
//   Graph g;
//   Value* x = g.addInput("x");                       // %x : Tensor
//   Value* one = g.insertConstant(IValue(1));         // prim::Constant[value=1]
//   Node* add = g.insertNode(g.create("aten::add", {x, x, one}));
//   g.registerOutput(add->output());
//   g.lint();                                         // invariants hold
//   std::cout << g;                                   // TorchScript's text form
//
// A Graph owns every Node, Value and Block it creates. A Block is a list of
// Nodes between its param node (whose outputs are the block's inputs) and
// its return node (whose inputs are the block's outputs). A Node holds
// input Values, defines output Values, and may own nested Blocks (prim::If
// has two, prim::Loop one). Values are in SSA form: each is defined once.
//
// Invariants (lint() checks every one of them):
//   - every Value is defined before each of its uses, in the same block or
//     in an enclosing one (defs dominate uses across blocks);
//   - use lists are exact: `v->uses()` holds {n, i} iff n->input(i) == v;
//   - node lists are consistently linked and each node knows its block;
//   - every Value has a unique debug name;
//   - prim::If has two blocks whose output counts equal the node's, and
//     prim::Loop one block with 1 + carried inputs and outputs;
//   - blocks nest at most kMaxBlockNesting deep;
//   - every value is used as its user expects (see lint()).
//
// Thread safety: none. A Graph is built and changed by one thread; a fully
// built graph may be read (printed, compiled) from many.
#ifndef TURNOUT_JIT_IR_IR_H_
#define TURNOUT_JIT_IR_IR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/schema/function_schema.h"
#include "jit/ir/type.h"

namespace turnout {
namespace jit {

class Block;
class CompilationUnit;
class Graph;
class Node;
class Value;

/// Kinds of the nodes the graph layer itself understands.
namespace prim {
inline constexpr std::string_view kParam = "prim::Param";
inline constexpr std::string_view kReturn = "prim::Return";
inline constexpr std::string_view kConstant = "prim::Constant";
inline constexpr std::string_view kListConstruct = "prim::ListConstruct";
/// A new dict from its inputs taken in (key, value) pairs, in that order;
/// its output is a Dict(K, V).
inline constexpr std::string_view kDictConstruct = "prim::DictConstruct";
inline constexpr std::string_view kListUnpack = "prim::ListUnpack";
inline constexpr std::string_view kTupleConstruct = "prim::TupleConstruct";
inline constexpr std::string_view kTupleUnpack = "prim::TupleUnpack";
inline constexpr std::string_view kIf = "prim::If";
inline constexpr std::string_view kLoop = "prim::Loop";
inline constexpr std::string_view kRaiseException = "prim::RaiseException";
inline constexpr std::string_view kUninitialized = "prim::Uninitialized";
/// Runs its one block (or its Subgraph, see kSubgraph) on the inter-op
/// pool; its output is a Future[T].
inline constexpr std::string_view kFork = "prim::fork";
/// Waits for a Future (made by a prim::fork, possibly stored in a list or
/// passed in) and yields its value. Spelled
/// with the aten namespace, as TorchScript does; the interpreter runs it.
inline constexpr std::string_view kWait = "aten::wait";
/// Calls the graph function its first input names (a Function constant,
/// `prim::Constant[name="f"]()`) on the other inputs; the function is
/// looked up in the graph's CompilationUnit.
inline constexpr std::string_view kCallFunction = "prim::CallFunction";
/// Whether its input's runtime value is one of the types of its `types`
/// attribute: `%b : bool = prim::isinstance[types=[int, float]](%x)`.
inline constexpr std::string_view kIsInstance = "prim::isinstance";
/// Reads attribute `name` of its one input, a module object (a class type,
/// `%w : Tensor = prim::GetAttr[name="weight"](%self)`), as scripted
/// modules' graphs do. turnout holds no module objects, so such a graph
/// parses, prints and passes lint but does not run: `lowerGraph`
/// (passes/lower_graph.h) replaces the reads by graph inputs.
inline constexpr std::string_view kGetAttr = "prim::GetAttr";
/// The attribute of a prim::fork whose body is a graph of its own rather
/// than a block (as torch 1.13 prints forks: `prim::fork_0(%x)` and, after
/// the graph, `with prim::fork_0 = graph(%x.1 : Tensor): ...`).
inline constexpr std::string_view kSubgraph = "Subgraph";
}  // namespace prim

/// The type of a tuple constant's value (`(float, str)` for (2.5, "s")), or
/// of an element of one; nullopt for what a tuple constant cannot hold
/// (only None, bool, int, float, str and such tuples).
std::optional<Type> tupleConstantType(const IValue& v);

/// True for the kinds above that the interpreter runs itself rather than
/// through the dispatcher.
bool isInterpreterPrim(std::string_view kind);

/// How deep blocks may nest in a graph (a prim::If in a prim::If is 2 deep).
/// The parser, lint(), the printer, copy(), the passes and the interpreter
/// recurse once per level, so a deeper graph is refused (with
/// Error(InvalidArgument)) before they start. TorchScript code nests a few
/// levels; generated code a few dozen.
inline constexpr size_t kMaxBlockNesting = 1000;

/// Throws Error(InvalidArgument) when blocks nest deeper than
/// kMaxBlockNesting in `g`, naming `what` (the operation refused), the depth
/// and the node that opens the first block too many. Walks the graph in a
/// loop (no recursion); O(nodes).
void checkBlockNesting(const Graph& g, std::string_view what);

/// One use of a Value: input `offset` of `user`.
struct Use {
  Node* user;
  size_t offset;
  friend bool operator==(const Use& a, const Use& b) {
    return a.user == b.user && a.offset == b.offset;
  }
};

/// A node attribute value. prim::Constant keeps its value in attribute
/// "value" as PyTorch does: bools as Int, Device as Str, tensors as Tensor,
/// tuples as an IValue (a Tuple: `value=(2.5, "s")`); a None constant has
/// no attribute, a Function constant has `name="f"`. prim::isinstance
/// keeps the types it tests in `types=[int, float]` (a vector of Type); a
/// prim::fork printed as torch prints it keeps its body in `Subgraph` (a
/// graph, shared and never changed once parsed).
using AttributeValue =
    std::variant<int64_t, double, std::string, Tensor, std::vector<int64_t>,
                 std::vector<double>, IValue, std::vector<Type>,
                 std::shared_ptr<const Graph>>;

/// An SSA value: an output of a Node (or an input of a Block, which is an
/// output of the block's param node).
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  /// The node that defines this value.
  Node* node() const { return node_; }
  /// Which output of node() this is.
  size_t offset() const { return offset_; }
  Graph* owningGraph() const;

  const Type& type() const { return type_; }
  Value* setType(Type type) {
    type_ = std::move(type);
    return this;
  }

  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }

  /// The name printed after '%': "x.1", "7". Unique within the graph.
  const std::string& debugName() const { return name_; }
  /// Renames this value. When another value holds `name`, that one is
  /// renamed to a fresh "name.N" first, as TorchScript does. Throws
  /// Error(InvalidArgument) for an empty name or one with characters a
  /// name may not hold (letters, digits, '_' and '.').
  Value* setDebugName(const std::string& name);

  /// Makes every user of this value use `v` instead.
  void replaceAllUsesWith(Value* v);
  /// The same, only for users after `node` (in program order, including
  /// users in blocks nested in later nodes). Precondition: `node` is in
  /// the block that defines this value.
  void replaceAllUsesAfterNodeWith(const Node* node, Value* v);

 private:
  friend class Block;
  friend class Graph;
  friend class Node;
  Value(Node* node, size_t offset, Type type)
      : node_(node), offset_(offset), type_(std::move(type)) {}

  Node* node_;
  size_t offset_;
  Type type_;
  std::vector<Use> uses_;
  std::string name_;
};

/// An operation: its kind ("aten::add", "prim::If"), inputs, outputs,
/// attributes, nested blocks and source location.
class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// "aten::add", "prim::Constant", ... without the overload name.
  const std::string& kind() const { return kind_; }
  bool is(std::string_view kind) const { return kind_ == kind; }
  Graph* owningGraph() const { return graph_; }
  /// The block whose list holds this node; null until it is inserted.
  Block* owningBlock() const { return owning_block_; }

  // Inputs.
  const std::vector<Value*>& inputs() const { return inputs_; }
  Value* input(size_t i) const;
  Value* addInput(Value* v);
  Value* insertInput(size_t i, Value* v);
  void replaceInput(size_t i, Value* v);
  /// Replaces every occurrence of `from` among the inputs.
  void replaceInputWith(Value* from, Value* to);
  void removeInput(size_t i);
  void removeAllInputs();

  // Outputs.
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* output(size_t i) const;
  /// The only output. Precondition: exactly one.
  Value* output() const;
  Value* addOutput(Type type = Type());
  /// Precondition: output `i` has no uses.
  void eraseOutput(size_t i);

  // Blocks.
  const std::vector<Block*>& blocks() const { return blocks_; }
  Block* addBlock();
  void eraseBlock(size_t i);

  // Position. Inserting moves nothing else; a node is in at most one list.
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  bool inBlockList() const { return next_ != nullptr; }
  /// Inserts this (not yet in a list) before / after `n`.
  Node* insertBefore(Node* n);
  Node* insertAfter(Node* n);
  /// Moves this (in a list) before / after `n`.
  void moveBefore(Node* n);
  void moveAfter(Node* n);
  /// True when this comes before `n` in the same block. O(block length).
  bool isBefore(const Node* n) const;
  /// Unlinks this from its block, drops its inputs' uses, and frees it
  /// with its blocks. Precondition: no output has uses.
  void destroy();
  /// Replaces every use of output i with other->output(i), for all i.
  /// Precondition: same number of outputs.
  void replaceAllUsesWith(Node* other);

  // Attributes, in insertion order.
  bool hasAttribute(std::string_view name) const;
  /// Throws Error(InvalidArgument) when there is none named `name`.
  const AttributeValue& attribute(std::string_view name) const;
  Node* setAttribute(std::string name, AttributeValue value);
  const std::vector<std::pair<std::string, AttributeValue>>& attributes()
      const {
    return attributes_;
  }

  /// The module scope torch's tracer records ("__module.l1", nested scopes
  /// joined by "/"): printed as ", scope: ..." after the inputs; may be
  /// empty. Kept for the text form only.
  const std::string& scope() const { return scope_; }
  Node* setScope(std::string scope) {
    scope_ = std::move(scope);
    return this;
  }

  /// "model.py:5:8": printed as a trailing "# ..." comment; may be empty.
  const std::string& sourceLocation() const { return source_location_; }
  Node* setSourceLocation(std::string location) {
    source_location_ = std::move(location);
    return this;
  }

  // The resolved operator (not for interpreter prims).
  const std::optional<OperatorHandle>& op() const { return op_; }
  /// The schema of the resolved operator, or null.
  const FunctionSchema* maybeSchema() const;
  /// Records the operator this node calls. `print_overload`: print the name
  /// with its overload ("aten::add.Tensor"), as it was written.
  void setOp(OperatorHandle op, bool print_overload = false);
  bool printsOverload() const { return print_overload_; }

  /// This node on one line, as the printer writes it (blocks left out).
  std::string toString() const;

 private:
  friend class Block;
  friend class Graph;
  Node(Graph* graph, std::string kind);
  ~Node();
  void unlink();
  void dropInput(size_t i);  // removes the use of input i

  std::string kind_;
  Graph* graph_;
  Block* owning_block_ = nullptr;
  Node* next_ = nullptr;
  Node* prev_ = nullptr;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Block*> blocks_;
  std::vector<std::pair<std::string, AttributeValue>> attributes_;
  std::string scope_;
  std::string source_location_;
  std::optional<OperatorHandle> op_;
  bool print_overload_ = false;
};

/// A list of nodes with inputs and outputs: a graph's body, or a branch or
/// body of a control-flow node.
class Block {
 public:
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Graph* owningGraph() const { return graph_; }
  /// The node owning this block; null for a graph's top block.
  Node* owningNode() const { return owning_node_; }

  const std::vector<Value*>& inputs() const { return param_->outputs(); }
  const std::vector<Value*>& outputs() const { return return_->inputs(); }
  Value* addInput(const std::string& name = "", Type type = Type());
  Value* insertInput(size_t i, const std::string& name = "",
                     Type type = Type());
  /// Precondition: input `i` has no uses.
  void eraseInput(size_t i);
  size_t registerOutput(Value* v);
  void insertOutput(size_t i, Value* v);
  void eraseOutput(size_t i);

  Node* paramNode() const { return param_; }
  Node* returnNode() const { return return_; }

  /// The nodes between param and return, in order.
  class NodeIterator {
   public:
    explicit NodeIterator(Node* n) : n_(n) {}
    Node* operator*() const { return n_; }
    NodeIterator& operator++() {
      n_ = n_->next();
      return *this;
    }
    bool operator!=(const NodeIterator& o) const { return n_ != o.n_; }

   private:
    Node* n_;
  };
  struct NodeRange {
    Node* first;
    Node* last;  // one past the end: the return node
    NodeIterator begin() const { return NodeIterator(first); }
    NodeIterator end() const { return NodeIterator(last); }
  };
  NodeRange nodes() const { return {param_->next(), return_}; }
  bool empty() const { return param_->next() == return_; }

  Node* appendNode(Node* n) { return n->insertBefore(return_); }
  Node* prependNode(Node* n) { return n->insertAfter(param_); }

  /// Clones `src`'s inputs, nodes and outputs into this (empty) block;
  /// `env` maps values defined outside `src` to values visible here and
  /// is extended with every value the clone defines. Throws
  /// Error(InvalidArgument) when blocks nest in `src` deeper than
  /// kMaxBlockNesting.
  void cloneFrom(const Block* src,
                 std::unordered_map<const Value*, Value*>& env);

 private:
  friend class Graph;
  friend class Node;
  // cloneFrom without the depth check (done once, at the top).
  void cloneFromUnchecked(const Block* src,
                          std::unordered_map<const Value*, Value*>& env);
  Block(Graph* graph, Node* owning_node);
  ~Block();

  Graph* graph_;
  Node* owning_node_;
  Node* param_;
  Node* return_;
};

/// A graph: the top block, the insertion point, and the ownership of every
/// node, value and block.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() const { return block_; }
  const std::vector<Value*>& inputs() const { return block_->inputs(); }
  const std::vector<Value*>& outputs() const { return block_->outputs(); }
  Value* addInput(const std::string& name = "", Type type = Type()) {
    return block_->addInput(name, std::move(type));
  }
  size_t registerOutput(Value* v) { return block_->registerOutput(v); }

  // Node creation. create() makes a node that is in no list yet;
  // insertNode() puts it at the insertion point.

  /// A node of `kind` with `inputs` and `num_outputs` outputs typed Tensor.
  Node* create(std::string kind, const std::vector<Value*>& inputs = {},
               size_t num_outputs = 1);
  /// A copy of `n` (kind, attributes, operator, source location, output
  /// types and nested blocks) whose inputs are `value_map(input)`. Throws
  /// Error(InvalidArgument) when blocks nest in `n` deeper than
  /// kMaxBlockNesting.
  Node* createClone(const Node* n,
                    std::unordered_map<const Value*, Value*>& env);
  /// Inserts `n` at the insertion point and returns it.
  Node* insertNode(Node* n);
  /// A prim::Constant holding `value` (None, bool, int, float, str,
  /// Device, Tensor, or an int/float list), inserted at the insertion
  /// point; its output. Throws Error(Type) for other values.
  Value* insertConstant(const IValue& value);

  // The insertion point: new nodes go before insertPoint().
  Node* insertPoint() const { return insert_before_; }
  /// Insert before `n`.
  void setInsertPoint(Node* n);
  /// Insert at the end of `b`.
  void setInsertPoint(Block* b) { setInsertPoint(b->returnNode()); }

  /// A deep copy with the same names, types and structure (and the same
  /// compilation unit).
  std::unique_ptr<Graph> copy() const;

  /// The compilation unit whose functions this graph's Function constants
  /// name (prim::CallFunction); null when none was set or it is gone. The
  /// graph does not keep the unit alive (the unit owns its graphs).
  std::shared_ptr<const CompilationUnit> compilationUnit() const {
    return compilation_unit_.lock();
  }
  void setCompilationUnit(std::weak_ptr<const CompilationUnit> unit) {
    compilation_unit_ = std::move(unit);
  }

  /// Checks the invariants listed at the top of this file; throws
  /// Error(Internal) naming the first one broken and where. A graph that is
  /// well formed but that a user wrote wrong throws Error(InvalidArgument)
  /// naming the node (its text and source location): blocks nested deeper
  /// than kMaxBlockNesting; an operator node whose input and output counts
  /// differ from its schema's; an input whose type does not fit the
  /// schema's argument (matchScore() < 0: Tensor refinements, None and T
  /// for T?, int/float/bool for Scalar and number, int for ScalarType and
  /// its kin all fit), or an output whose type is neither a subtype nor a
  /// supertype of the schema's return, type variables bound by the inputs;
  /// and for the interpreter's prims: a prim::If or prim::Loop condition
  /// that is not a bool, a trip count that is not an int, loop-carried and
  /// branch values that do not fit the node's types, a list or tuple built
  /// from or unpacked into values of other types or counts, an exception
  /// message that is not a str, a prim::fork whose output is not a
  /// Future of its block's result, an aten::wait of a non-Future.
  /// So a graph that lints runs the same in the interpreter and after the
  /// graph executor's passes.
  void lint() const;

  /// TorchScript's text form; see printer.h.
  std::string toString() const;

  /// How many nodes, values and blocks have been freed so far. A holder of
  /// a raw Node* or Value* (the Python wrappers) that saw this count when
  /// it took the pointer knows the pointer is still valid while the count
  /// is unchanged.
  uint64_t numFreed() const { return num_freed_; }

 private:
  friend class Block;
  friend class Node;
  friend class Value;
  // createClone without the depth check (done once, at the top).
  Node* createCloneUnchecked(const Node* n,
                             std::unordered_map<const Value*, Value*>& env);
  Value* newValue(Node* node, size_t offset, Type type);
  void freeValue(Value* v);
  Block* newBlock(Node* owning_node);
  void freeBlock(Block* b);
  void freeNode(Node* n);
  // A fresh numeric name: the smallest counter value not already taken.
  std::string freshName();

  Block* block_;
  Node* insert_before_;
  std::unordered_set<Node*> all_nodes_;
  std::unordered_set<Value*> all_values_;
  std::unordered_set<Block*> all_blocks_;
  std::unordered_map<std::string, Value*> names_;
  size_t next_name_ = 0;
  uint64_t num_freed_ = 0;
  std::weak_ptr<const CompilationUnit> compilation_unit_;
};

std::ostream& operator<<(std::ostream& out, const Graph& g);

/// The constant a prim::Constant node's output holds, built from its
/// attribute and its output type; nullopt for any other node and for a
/// Function constant (its value is a graph, not an IValue).
std::optional<IValue> toIValue(const Value* v);

/// Sets the insertion point for its lifetime, restoring the old one after.
class WithInsertPoint {
 public:
  explicit WithInsertPoint(Node* n)
      : graph_(n->owningGraph()), prev_(graph_->insertPoint()) {
    graph_->setInsertPoint(n);
  }
  explicit WithInsertPoint(Block* b)
      : WithInsertPoint(b->returnNode()) {}
  ~WithInsertPoint() { graph_->setInsertPoint(prev_); }
  WithInsertPoint(const WithInsertPoint&) = delete;
  WithInsertPoint& operator=(const WithInsertPoint&) = delete;

 private:
  Graph* graph_;
  Node* prev_;
};

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_IR_IR_H_

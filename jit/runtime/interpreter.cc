#include "jit/runtime/interpreter.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "dispatcher/core/error.h"
#include "jit/ir/compilation_unit.h"
#include "jit/runtime/future.h"

namespace turnout {
namespace jit {

const char* toString(OpCode op) {
  switch (op) {
    case OpCode::Load: return "Load";
    case OpCode::Move: return "Move";
    case OpCode::LoadConst: return "LoadConst";
    case OpCode::LoadListConst: return "LoadListConst";
    case OpCode::Store: return "Store";
    case OpCode::Drop: return "Drop";
    case OpCode::Call: return "Call";
    case OpCode::Jump: return "Jump";
    case OpCode::JumpIfFalse: return "JumpIfFalse";
    case OpCode::LoopTest: return "LoopTest";
    case OpCode::Increment: return "Increment";
    case OpCode::ListConstruct: return "ListConstruct";
    case OpCode::DictConstruct: return "DictConstruct";
    case OpCode::ListUnpack: return "ListUnpack";
    case OpCode::TupleConstruct: return "TupleConstruct";
    case OpCode::TupleUnpack: return "TupleUnpack";
    case OpCode::Raise: return "Raise";
    case OpCode::Uninitialized: return "Uninitialized";
    case OpCode::Fork: return "Fork";
    case OpCode::Wait: return "Wait";
    case OpCode::CallFunction: return "CallFunction";
    case OpCode::IsInstance: return "IsInstance";
    case OpCode::CallUnboxed: return "CallUnboxed";
    case OpCode::Ret: return "Ret";
  }
  return "?";
}

namespace {

// DictConstruct's a: the input count in the low bits, then the key's and
// the value's ListKind, 4 bits each.
constexpr uint32_t kDictCountBits = 24;

// The list tag of a ListKind (what a dict's keys() / values() make).
IValue::Tag listTag(ListKind kind) {
  switch (kind) {
    case ListKind::Int: return IValue::Tag::IntList;
    case ListKind::Double: return IValue::Tag::DoubleList;
    case ListKind::Bool: return IValue::Tag::BoolList;
    case ListKind::Tensor: return IValue::Tag::TensorList;
    default: return IValue::Tag::GenericList;
  }
}

}  // namespace

// Lays a graph out as instructions. Registers: one per value, plus three
// consecutive ones (cond, counter, max trip count) per prim::Loop.
class CodeBuilder {
 public:
  CodeBuilder(const Graph& g, Code& code) : g_(g), code_(code) {}

  void build() {
    indexBlock(g_.block(), 0);
    for (Value* v : g_.inputs()) {
      code_.input_registers_.push_back(reg(v));
    }
    code_.num_inputs_ = g_.inputs().size();
    code_.num_outputs_ = g_.outputs().size();
    emitBlockNodes(g_.block());
    pushInputs(g_.block()->returnNode());
    emit(OpCode::Ret);
    code_.num_registers_ = next_register_;
  }

 private:
  // Numbers the nodes: position_ within their block, pre_ in program order
  // over the whole graph (a node, then what its blocks hold: end_ is the
  // last number inside it), and each block's loop depth.
  void indexBlock(const Block* b, int loop_depth) {
    block_loop_depth_[b] = loop_depth;
    std::vector<const Node*>& order = block_nodes_[b];
    int i = 0;
    for (const Node* n : b->nodes()) {
      order.push_back(n);
      position_[n] = i++;
      pre_[n] = next_pre_++;
      for (const Block* sub : n->blocks()) {
        indexBlock(sub, loop_depth + (n->is(prim::kLoop) ? 1 : 0));
      }
      end_[n] = next_pre_ - 1;
    }
    const Node* ret = b->returnNode();
    order.push_back(ret);
    position_[ret] = i;
    pre_[ret] = end_[ret] = next_pre_++;
  }

  uint32_t reg(const Value* v) {
    auto it = registers_.find(v);
    if (it != registers_.end()) return it->second;
    uint32_t r = next_register_++;
    registers_[v] = r;
    return r;
  }

  size_t emit(OpCode op, uint32_t a = 0, uint32_t b = 0) {
    code_.instructions_.push_back({op, a, b});
    return code_.instructions_.size() - 1;
  }

  size_t here() const { return code_.instructions_.size(); }

  [[noreturn]] void fail(const Node* n, const std::string& why) {
    std::string where = n->sourceLocation().empty()
                            ? std::string()
                            : " at " + n->sourceLocation();
    throw Error(ErrorKind::InvalidArgument,
                "cannot compile the graph" + where + ": " + why +
                    "\n  in: " + n->toString());
  }

  uint32_t info(const Node* n, std::string op_name) {
    std::string where = n->sourceLocation().empty()
                            ? std::string(" (no source location)")
                            : " at " + n->sourceLocation();
    code_.node_info_.push_back(
        {op_name, op_name + " failed" + where + "\n  in: " + n->toString()});
    return static_cast<uint32_t>(code_.node_info_.size() - 1);
  }

  // The node of `b` that contains `n` (n itself when it is in b), or null;
  // O(log(length of b)) by the program-order numbers.
  const Node* anchor(const Node* n, const Block* b) const {
    if (n->owningBlock() == b) return n;
    const std::vector<const Node*>& order = block_nodes_.at(b);
    const int p = pre_.at(n);
    auto it = std::upper_bound(
        order.begin(), order.end(), p,
        [this](int x, const Node* m) { return x < pre_.at(m); });
    if (it == order.begin()) return nullptr;
    const Node* a = *(it - 1);
    return p <= end_.at(a) ? a : nullptr;
  }

  // Whether a prim::Loop lies between `n` and `b` (n in a loop body that b
  // is outside of).
  bool crossesLoop(const Node* n, const Block* b) const {
    return block_loop_depth_.at(n->owningBlock()) > block_loop_depth_.at(b);
  }

  // What isLastUse needs to know about all the uses of a value, computed
  // once per value (so that compiling is not quadratic in its uses).
  struct UseSummary {
    bool all_anchored = true;       // every use lies in the defining block
    const Node* last = nullptr;     // the latest node of that block with a use
    size_t uses_in_last = 0;        // uses inside `last` (itself or nested)
    size_t max_direct_offset = 0;   // largest offset among last's own inputs
    bool nested_in_last = false;    // a use inside last's blocks
  };

  const UseSummary& summaryOf(const Value* v) {
    auto it = summaries_.find(v);
    if (it != summaries_.end()) return it->second;
    UseSummary s;
    const Block* def_block = v->node()->owningBlock();
    int last_pos = -1;
    for (const Use& u : v->uses()) {
      const Node* a = anchor(u.user, def_block);
      if (a == nullptr) {
        s.all_anchored = false;
        break;
      }
      const int p = position_.at(a);
      if (p > last_pos) {
        last_pos = p;
        s = UseSummary{true, a, 0, 0, false};
      }
      if (a != s.last) continue;
      ++s.uses_in_last;
      if (u.user == a) {
        s.max_direct_offset = std::max(s.max_direct_offset, u.offset);
      } else {
        s.nested_in_last = true;
      }
    }
    return summaries_.emplace(v, s).first->second;
  }

  // Whether input `offset` of `user` is the last use of its value on every
  // path, so that the register can be moved from instead of copied: its
  // node in the defining block is the last one with a use, no loop lies
  // between, and within that node it is the only use (or, when the user
  // is that node, its last occurrence among the inputs and no use is
  // nested in its blocks).
  bool isLastUse(const Node* user, size_t offset) {
    const Value* v = user->inputs()[offset];
    const Block* def_block = v->node()->owningBlock();
    const Node* a = anchor(user, def_block);
    if (a == nullptr || crossesLoop(user, def_block)) return false;
    const UseSummary& s = summaryOf(v);
    if (!s.all_anchored || s.last != a) return false;
    if (a == user) return !s.nested_in_last && s.max_direct_offset == offset;
    return s.uses_in_last == 1;
  }

  void pushInputs(const Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      // Left on the stack by the node before (forwardsOutput).
      if (i == 0 && forwarded_.count(n->inputs()[0]) != 0) continue;
      emit(isLastUse(n, i) ? OpCode::Move : OpCode::Load,
           reg(n->inputs()[i]));
    }
  }

  // The kinds emitNode handles itself; every other node is an operator
  // call.
  static bool isPrim(const std::string& k) {
    return k == prim::kConstant || k == prim::kIf || k == prim::kLoop ||
           k == prim::kListConstruct || k == prim::kTupleConstruct ||
           k == prim::kDictConstruct || k == prim::kListUnpack || k == prim::kTupleUnpack ||
           k == prim::kRaiseException || k == prim::kFork ||
           k == prim::kWait || k == prim::kUninitialized ||
           k == prim::kCallFunction || k == prim::kIsInstance ||
           k == prim::kGetAttr;
  }

  // Whether the one output of the operator call `n` can stay on the stack
  // as the first input of the next node: that node is an operator call
  // and the only user. Saves a Store and a Move per link of a chain.
  static bool forwardsOutput(const Node* n) {
    if (n->outputs().size() != 1) return false;
    const std::vector<Use>& uses = n->output()->uses();
    if (uses.size() != 1) return false;
    const Node* user = uses[0].user;
    return user == n->next() && uses[0].offset == 0 &&
           !isPrim(user->kind()) && user->op();
  }

  // Emits CallUnboxed for an aten operator `(Tensor, Tensor[, Scalar]) ->
  // Tensor` whose kernels take `const Tensor&` (the typed handle checks the
  // C++ signature); false, emitting nothing, for any other operator.
  bool emitUnboxedCall(const Node* n) {
    std::optional<TensorPairCall> pair = TensorPairCall::make(*n->op());
    if (!pair) return false;
    Code::UnboxedCall call(*n->op(), *std::move(pair));
    call.num_inputs = static_cast<uint32_t>(call.pair.num_arguments());
    for (size_t i = 0; i < call.num_inputs; ++i) {
      if (i == 0 && forwarded_.count(n->inputs()[0]) != 0) {
        call.in[0] = Code::UnboxedCall::kStackTop;
        continue;
      }
      call.in[i] = reg(n->inputs()[i]);
      call.clear[i] = isLastUse(n, i);
    }
    code_.unboxed_.push_back(std::move(call));
    emit(OpCode::CallUnboxed,
         static_cast<uint32_t>(code_.unboxed_.size() - 1),
         info(n, toString(n->op()->operator_name())));
    return true;
  }

  // Pops the node's outputs (pushed in order) into their registers.
  void storeOutputs(const std::vector<Value*>& outs) {
    for (size_t i = outs.size(); i-- > 0;) {
      if (outs[i]->hasUses()) {
        emit(OpCode::Store, reg(outs[i]));
      } else {
        emit(OpCode::Drop);
      }
    }
  }

  void emitBlockNodes(const Block* b) {
    for (const Node* n : b->nodes()) emitNode(n);
  }

  static ListKind listKind(const Type& t) {
    if (t.kind() != SchemaType::Kind::List) return ListKind::Generic;
    return elementListKind(*t.schemaType()->elementType());
  }

  // The list representation for elements of type `e`.
  static ListKind elementListKind(const SchemaType& e) {
    switch (e.kind()) {
      case SchemaType::Kind::Int: return ListKind::Int;
      case SchemaType::Kind::Float: return ListKind::Double;
      case SchemaType::Kind::Bool: return ListKind::Bool;
      case SchemaType::Kind::Tensor: return ListKind::Tensor;
      default: return ListKind::Generic;
    }
  }

  void emitNode(const Node* n) {
    const std::string& k = n->kind();
    if (k == prim::kConstant) {
      if (n->outputs().size() == 1 && n->output()->type().isFunction()) {
        // Called by name: prim::CallFunction compiles the callee itself.
        checkFunctionUses(n);
        return;
      }
      std::optional<IValue> v;
      try {
        v = toIValue(n->output());
      } catch (const Error& e) {
        fail(n, "malformed constant: " + e.message());
      }
      if (!n->output()->hasUses()) return;
      const bool list = v->isList();
      code_.constants_.push_back(std::move(*v));
      emit(list ? OpCode::LoadListConst : OpCode::LoadConst,
           static_cast<uint32_t>(code_.constants_.size() - 1));
      emit(OpCode::Store, reg(n->output()));
    } else if (k == prim::kIf) {
      emitIf(n);
    } else if (k == prim::kLoop) {
      emitLoop(n);
    } else if (k == prim::kListConstruct) {
      if (n->outputs().size() != 1) fail(n, "ListConstruct has one output");
      pushInputs(n);
      emit(OpCode::ListConstruct, static_cast<uint32_t>(n->inputs().size()),
           static_cast<uint32_t>(listKind(n->output()->type())));
      storeOutputs(n->outputs());
    } else if (k == prim::kDictConstruct) {
      emitDictConstruct(n);
    } else if (k == prim::kTupleConstruct) {
      if (n->outputs().size() != 1) fail(n, "TupleConstruct has one output");
      pushInputs(n);
      emit(OpCode::TupleConstruct, static_cast<uint32_t>(n->inputs().size()));
      storeOutputs(n->outputs());
    } else if (k == prim::kListUnpack || k == prim::kTupleUnpack) {
      if (n->inputs().size() != 1) fail(n, k + " takes one input");
      pushInputs(n);
      emit(k == prim::kListUnpack ? OpCode::ListUnpack : OpCode::TupleUnpack,
           static_cast<uint32_t>(n->outputs().size()), info(n, k));
      storeOutputs(n->outputs());
    } else if (k == prim::kRaiseException) {
      if (n->inputs().empty() || n->inputs().size() > 2) {
        fail(n, "prim::RaiseException takes (str message[, str? class])");
      }
      pushInputs(n);
      emit(OpCode::Raise, static_cast<uint32_t>(n->inputs().size()),
           info(n, k));
      storeOutputs(n->outputs());
    } else if (k == prim::kFork) {
      emitFork(n);
    } else if (k == prim::kWait) {
      if (n->inputs().size() != 1 || n->outputs().size() != 1) {
        fail(n, "aten::wait takes one Future and has one output");
      }
      if (n->inputs()[0]->type().kind() != SchemaType::Kind::Future) {
        fail(n, "aten::wait takes a Future, not %" +
                    n->inputs()[0]->debugName() + " : " +
                    n->inputs()[0]->type().toString());
      }
      pushInputs(n);
      emit(OpCode::Wait, 0, info(n, k));
      storeOutputs(n->outputs());
    } else if (k == prim::kCallFunction) {
      emitCallFunction(n);
    } else if (k == prim::kIsInstance) {
      emitIsInstance(n);
    } else if (k == prim::kGetAttr) {
      fail(n, "prim::GetAttr reads an attribute of a module object, and "
              "turnout holds none: lower the graph first (Python: "
              "turnout.jit.passes.lower_graph(graph, module); C++: "
              "lowerGraph), which makes the attributes graph inputs");
    } else if (k == prim::kUninitialized) {
      if (n->outputs().size() != 1) fail(n, "Uninitialized has one output");
      emit(OpCode::Uninitialized);
      storeOutputs(n->outputs());
    } else {
      if (!n->op()) {
        fail(n, "no registered operator resolves " + k +
                    " (register it, or name a registered overload)");
      }
      const FunctionSchema& s = n->op()->schema();
      if (!s.is_vararg() && n->inputs().size() != s.arguments().size()) {
        fail(n, "the node has " + std::to_string(n->inputs().size()) +
                    " inputs but " + toString(s) + " takes " +
                    std::to_string(s.arguments().size()));
      }
      if (!s.is_varret() && n->outputs().size() != s.returns().size()) {
        fail(n, "the node has " + std::to_string(n->outputs().size()) +
                    " outputs but " + toString(s) + " returns " +
                    std::to_string(s.returns().size()));
      }
      if (!emitUnboxedCall(n)) {
        pushInputs(n);
        if (s.is_vararg()) {
          // A vararg kernel learns how many inputs are its own from the
          // count pushed after them (aten::format).
          code_.constants_.push_back(
              IValue(static_cast<int64_t>(n->inputs().size())));
          emit(OpCode::LoadConst,
               static_cast<uint32_t>(code_.constants_.size() - 1));
        }
        code_.ops_.push_back(*n->op());
        emit(OpCode::Call, static_cast<uint32_t>(code_.ops_.size() - 1),
             info(n, toString(n->op()->operator_name())));
      }
      if (forwardsOutput(n)) {
        forwarded_.insert(n->output());
      } else {
        storeOutputs(n->outputs());
      }
    }
  }

  // The values a block uses but does not define, in order of first use.
  static void collectFreeValues(const Block* b,
                                std::unordered_set<const Value*>& defined,
                                std::vector<Value*>& free) {
    for (const Value* v : b->inputs()) defined.insert(v);
    auto use = [&](Value* v) {
      if (defined.count(v) == 0 &&
          std::find(free.begin(), free.end(), v) == free.end()) {
        free.push_back(v);
      }
    };
    for (const Node* n : b->nodes()) {
      for (Value* v : n->inputs()) use(v);
      for (const Block* sub : n->blocks()) {
        collectFreeValues(sub, defined, free);
      }
      for (const Value* v : n->outputs()) defined.insert(v);
    }
    for (Value* v : b->outputs()) use(v);
  }

  // A prim::fork: its block becomes a graph of its own, taking the values
  // the block uses from outside and then the block's inputs, compiled
  // into a Code that FORK runs on the inter-op pool.
  void emitFork(const Node* n) {
    if (n->hasAttribute(prim::kSubgraph)) {
      emitSubgraphFork(n);
      return;
    }
    if (n->blocks().size() != 1 || n->outputs().size() != 1 ||
        n->blocks()[0]->inputs().size() != n->inputs().size() ||
        n->blocks()[0]->outputs().size() != 1) {
      fail(n, "prim::fork needs one output and one block taking the node's "
              "inputs and returning one value");
    }
    const Block* body = n->blocks()[0];
    std::unordered_set<const Value*> defined;
    std::vector<Value*> free;
    collectFreeValues(body, defined, free);
    Graph sub;
    std::unordered_map<const Value*, Value*> env;
    for (Value* v : free) env[v] = sub.addInput("", v->type());
    sub.block()->cloneFrom(body, env);
    std::shared_ptr<const Code> code;
    try {
      code = std::make_shared<const Code>(sub);
    } catch (const Error& e) {
      fail(n, "cannot compile the forked block: " + e.message());
    }
    for (Value* v : free) emit(OpCode::Load, reg(v));
    pushInputs(n);
    const auto slot = static_cast<uint32_t>(code_.forks_.size());
    code_.forks_.push_back(std::move(code));
    emit(OpCode::Fork, slot, info(n, std::string(prim::kFork)));
    storeOutputs(n->outputs());
  }

  // The emitters below are not inlined: emitNode recurses once per nested
  // block (through emitIf and emitLoop), so its frame must stay small.

  [[gnu::noinline]] void checkFunctionUses(const Node* n) {
    for (const Use& u : n->output()->uses()) {
      if (!u.user->is(prim::kCallFunction) || u.offset != 0) {
        fail(n, "a Function may only be called by prim::CallFunction (as its "
                "first input), not used by " + u.user->kind());
      }
    }
  }

  [[gnu::noinline]] void emitIsInstance(const Node* n) {
    if (n->inputs().size() != 1 || n->outputs().size() != 1 ||
        !n->hasAttribute("types") ||
        !std::holds_alternative<std::vector<Type>>(n->attribute("types"))) {
      fail(n, "prim::isinstance takes one input, has one output and a "
              "types=[...] attribute");
    }
    std::vector<SchemaTypePtr> types;
    for (const Type& t : std::get<std::vector<Type>>(n->attribute("types"))) {
      types.push_back(t.schemaType());
    }
    pushInputs(n);
    code_.instance_types_.push_back(std::move(types));
    emit(OpCode::IsInstance,
         static_cast<uint32_t>(code_.instance_types_.size() - 1));
    storeOutputs(n->outputs());
  }

  // A prim::CallFunction: the callee, found in the graph's compilation
  // unit, is compiled now into a Code of its own; its inputs (all but the
  // Function constant) go on the stack and CALL_FUNCTION runs it there.
  [[gnu::noinline]] void emitCallFunction(const Node* n) {
    std::shared_ptr<const Graph> callee;
    try {
      callee = resolveCallee(n);
    } catch (const Error& e) {
      fail(n, e.message());
    }
    // A function that calls itself, directly or not, would compile forever
    // (TorchScript refuses recursion too).
    thread_local std::vector<const Graph*> compiling;
    if (std::find(compiling.begin(), compiling.end(), callee.get()) !=
        compiling.end()) {
      fail(n, "recursive calls are not supported: function '" +
                  std::get<std::string>(
                      n->inputs()[0]->node()->attribute("name")) +
                  "' calls itself");
    }
    compiling.push_back(callee.get());
    std::shared_ptr<const Code> code;
    try {
      code = std::make_shared<const Code>(*callee);
    } catch (const Error& e) {
      compiling.pop_back();
      fail(n, "cannot compile function '" +
                  std::get<std::string>(
                      n->inputs()[0]->node()->attribute("name")) +
                  "': " + e.message());
    }
    compiling.pop_back();
    for (size_t i = 1; i < n->inputs().size(); ++i) {
      emit(isLastUse(n, i) ? OpCode::Move : OpCode::Load,
           reg(n->inputs()[i]));
    }
    code_.functions_.push_back(std::move(code));
    emit(OpCode::CallFunction,
         static_cast<uint32_t>(code_.functions_.size() - 1),
         info(n, std::string(prim::kCallFunction)));
    storeOutputs(n->outputs());
  }

  // A prim::fork whose body is a graph of its own (torch's prim::fork_N):
  // that graph, compiled, runs on the node's inputs.
  [[gnu::noinline]] void emitSubgraphFork(const Node* n) {
    const auto* g = std::get_if<std::shared_ptr<const Graph>>(
        &n->attribute(prim::kSubgraph));
    if (g == nullptr || *g == nullptr || n->outputs().size() != 1 ||
        (*g)->inputs().size() != n->inputs().size() ||
        (*g)->outputs().size() != 1) {
      fail(n, "prim::fork's Subgraph must take the node's inputs and "
              "return one value");
    }
    std::shared_ptr<const Code> code;
    try {
      code = std::make_shared<const Code>(**g);
    } catch (const Error& e) {
      fail(n, "cannot compile the forked subgraph: " + e.message());
    }
    pushInputs(n);
    const auto slot = static_cast<uint32_t>(code_.forks_.size());
    code_.forks_.push_back(std::move(code));
    emit(OpCode::Fork, slot, info(n, std::string(prim::kFork)));
    storeOutputs(n->outputs());
  }

  // prim::DictConstruct(k0, v0, k1, v1, ...): a new dict whose key and
  // value list kinds (what keys() and values() make) come from the
  // output's Dict(K, V) type.
  void emitDictConstruct(const Node* n) {
    if (n->outputs().size() != 1) fail(n, "DictConstruct has one output");
    const SchemaType& t = *n->output()->type().schemaType();
    if (t.kind() != SchemaType::Kind::Dict) {
      fail(n, "prim::DictConstruct's output must be a Dict, not %" +
                  n->output()->debugName() + " : " +
                  n->output()->type().toString());
    }
    if (n->inputs().size() % 2 != 0) {
      fail(n, "prim::DictConstruct takes keys and values in pairs (k0, v0, "
              "k1, v1, ...); it has " +
                  std::to_string(n->inputs().size()) + " inputs");
    }
    if (n->inputs().size() >= (size_t{1} << kDictCountBits)) {
      fail(n, "prim::DictConstruct has too many inputs");
    }
    const auto key_kind =
        static_cast<uint32_t>(elementListKind(*t.containedTypes()[0]));
    const auto value_kind =
        static_cast<uint32_t>(elementListKind(*t.containedTypes()[1]));
    pushInputs(n);
    emit(OpCode::DictConstruct,
         static_cast<uint32_t>(n->inputs().size()) |
             (key_kind << kDictCountBits) |
             (value_kind << (kDictCountBits + 4)),
         info(n, std::string(prim::kDictConstruct)));
    storeOutputs(n->outputs());
  }

  void emitIf(const Node* n) {
    pushInputs(n);
    size_t jump_else = emit(OpCode::JumpIfFalse);
    emitBlockNodes(n->blocks()[0]);
    pushInputs(n->blocks()[0]->returnNode());
    storeOutputs(n->outputs());
    size_t jump_end = emit(OpCode::Jump);
    code_.instructions_[jump_else].a = static_cast<uint32_t>(here());
    emitBlockNodes(n->blocks()[1]);
    pushInputs(n->blocks()[1]->returnNode());
    storeOutputs(n->outputs());
    code_.instructions_[jump_end].a = static_cast<uint32_t>(here());
  }

  void emitLoop(const Node* n) {
    const Block* body = n->blocks()[0];
    const uint32_t cond = next_register_;
    const uint32_t counter = cond + 1;
    const uint32_t max_trip = cond + 2;
    next_register_ += 3;
    // Entry: (max, cond, carried...) -> registers.
    pushInputs(n);
    for (size_t i = n->inputs().size() - 1; i >= 2; --i) {
      emit(OpCode::Store, reg(body->inputs()[i - 1]));
    }
    emit(OpCode::Store, cond);
    emit(OpCode::Store, max_trip);
    code_.constants_.push_back(IValue(int64_t{0}));
    emit(OpCode::LoadConst, static_cast<uint32_t>(code_.constants_.size() - 1));
    emit(OpCode::Store, counter);
    // Each iteration.
    const size_t top = emit(OpCode::LoopTest, 0, cond);
    if (body->inputs()[0]->hasUses()) {
      emit(OpCode::Load, counter);
      emit(OpCode::Store, reg(body->inputs()[0]));
    }
    emitBlockNodes(body);
    pushInputs(body->returnNode());
    for (size_t i = body->outputs().size() - 1; i >= 1; --i) {
      emit(OpCode::Store, reg(body->inputs()[i]));
    }
    emit(OpCode::Store, cond);
    emit(OpCode::Increment, counter);
    emit(OpCode::Jump, static_cast<uint32_t>(top));
    code_.instructions_[top].a = static_cast<uint32_t>(here());
    // Exit: the carried values are the outputs.
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      if (!n->outputs()[i]->hasUses()) continue;
      emit(OpCode::Move, reg(body->inputs()[i + 1]));
      emit(OpCode::Store, reg(n->outputs()[i]));
    }
  }

  const Graph& g_;
  Code& code_;
  std::unordered_map<const Value*, uint32_t> registers_;
  std::unordered_map<const Node*, int> position_;
  std::unordered_map<const Node*, int> pre_;
  std::unordered_map<const Node*, int> end_;
  std::unordered_map<const Block*, std::vector<const Node*>> block_nodes_;
  std::unordered_map<const Block*, int> block_loop_depth_;
  std::unordered_map<const Value*, UseSummary> summaries_;
  int next_pre_ = 0;
  // Outputs left on the stack for the next node (forwardsOutput).
  std::unordered_set<const Value*> forwarded_;
  uint32_t next_register_ = 0;
};

Code::Code(const Graph& graph) {
  graph.lint();
  CodeBuilder(graph, *this).build();
}

void Code::rethrow(const Error& e, uint32_t info) const {
  // withPrefix keeps the error's fix-it (the bindings spell it for Python).
  throw e.withPrefix(node_info_[info].context + "\n");
}

namespace {

template <class T>
IValue popList(Stack& stack, size_t n, T (IValue::*get)() const) {
  std::vector<T> elements;
  elements.reserve(n);
  for (size_t i = stack.size() - n; i < stack.size(); ++i) {
    elements.push_back((stack[i].*get)());
  }
  stack.resize(stack.size() - n);
  return IValue(std::move(elements));
}

// Whether `v` is a value of `type`, as prim::isinstance asks: by the
// value's tag, and the elements of lists and tuples. An empty generic list
// is a list of anything.
bool isInstance(const IValue& v, const SchemaType& type) {
  using K = SchemaType::Kind;
  switch (type.kind()) {
    case K::Any: return true;
    case K::Tensor: return v.isTensor();
    case K::Int: return v.isInt();
    case K::Float: return v.isDouble();
    case K::Bool: return v.isBool();
    case K::Str: return v.isString();
    case K::None: return v.isNone();
    case K::Device: return v.isDevice();
    case K::Number: case K::Scalar:
      return v.isInt() || v.isDouble() || v.isBool();
    case K::Optional:
      return v.isNone() || isInstance(v, *type.elementType());
    case K::List: {
      const SchemaType& e = *type.elementType();
      switch (v.tag()) {
        case IValue::Tag::IntList: return e.kind() == K::Int;
        case IValue::Tag::DoubleList: return e.kind() == K::Float;
        case IValue::Tag::BoolList: return e.kind() == K::Bool;
        case IValue::Tag::TensorList: return e.kind() == K::Tensor;
        case IValue::Tag::GenericList:
          for (const IValue& x : v.toListRef()) {
            if (!isInstance(x, e)) return false;
          }
          return true;
        default: return false;
      }
    }
    case K::Tuple: {
      if (!v.isTuple()) return false;
      const auto& es = v.toTupleRef().elements();
      const auto& ts = type.containedTypes();
      if (es.size() != ts.size()) return false;
      for (size_t i = 0; i < es.size(); ++i) {
        if (!isInstance(es[i], *ts[i])) return false;
      }
      return true;
    }
    case K::Dict: {
      if (!v.isDict()) return false;
      const auto& ts = type.containedTypes();
      for (const auto& [key, value] : v.toDictRef().entries()) {
        if (!isInstance(key, *ts[0]) || !isInstance(value, *ts[1])) {
          return false;
        }
      }
      return true;
    }
    case K::Future:
      return v.isFuture();
    default:
      return false;
  }
}

ErrorKind kindOfPythonClass(const std::string& cls) {
  if (cls == "builtins.TypeError") return ErrorKind::Type;
  if (cls == "builtins.IndexError") return ErrorKind::Index;
  if (cls == "builtins.NotImplementedError") return ErrorKind::NotImplemented;
  return ErrorKind::InvalidArgument;
}

}  // namespace

void Code::run(Stack& stack) const {
  TURNOUT_CHECK(stack.size() >= num_inputs_, ErrorKind::InvalidArgument,
                "Code::run(): the graph takes ", num_inputs_,
                " inputs but the stack holds ", stack.size(), " values");
  const size_t base = stack.size() - num_inputs_;
  absl::InlinedVector<IValue, 32> regs(num_registers_);
  for (size_t i = 0; i < num_inputs_; ++i) {
    regs[input_registers_[i]] = std::move(stack[base + i]);
  }
  stack.resize(base);
  const Instruction* code = instructions_.data();
  size_t pc = 0;
  try {
    for (;;) {
      const Instruction& ins = code[pc++];
      switch (ins.op) {
        case OpCode::Load:
          stack.push_back(regs[ins.a]);
          break;
        case OpCode::Move:
          stack.push_back(std::move(regs[ins.a]));
          break;
        case OpCode::LoadConst:
          stack.push_back(constants_[ins.a]);
          break;
        case OpCode::LoadListConst: {
          const IValue& c = constants_[ins.a];
          switch (c.tag()) {
            case IValue::Tag::IntList:
              stack.emplace_back(c.toIntVector());
              break;
            case IValue::Tag::DoubleList:
              stack.emplace_back(c.toDoubleVector());
              break;
            case IValue::Tag::BoolList:
              stack.emplace_back(c.toBoolVector());
              break;
            case IValue::Tag::TensorList:
              stack.emplace_back(c.toTensorVector());
              break;
            default:
              stack.emplace_back(c.toListRef());
          }
          break;
        }
        case OpCode::Store:
          regs[ins.a] = std::move(stack.back());
          stack.pop_back();
          break;
        case OpCode::Drop:
          stack.pop_back();
          break;
        case OpCode::Call:
          try {
            ops_[ins.a].callBoxed(&stack);
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        case OpCode::CallUnboxed:
          try {
            callUnboxed(unboxed_[ins.a], regs.data(), stack);
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        case OpCode::Jump:
          pc = ins.a;
          break;
        case OpCode::JumpIfFalse: {
          bool c = stack.back().toBool();
          stack.pop_back();
          if (!c) pc = ins.a;
          break;
        }
        case OpCode::LoopTest:
          if (!(regs[ins.b].toBool() &&
                regs[ins.b + 1].toInt() < regs[ins.b + 2].toInt())) {
            pc = ins.a;
          }
          break;
        case OpCode::Increment:
          regs[ins.a] = IValue(regs[ins.a].toInt() + 1);
          break;
        case OpCode::ListConstruct: {
          IValue list;
          switch (static_cast<ListKind>(ins.b)) {
            case ListKind::Int:
              list = popList<int64_t>(stack, ins.a, &IValue::toInt);
              break;
            case ListKind::Double:
              list = popList<double>(stack, ins.a, &IValue::toDouble);
              break;
            case ListKind::Bool:
              list = popList<bool>(stack, ins.a, &IValue::toBool);
              break;
            case ListKind::Tensor: {
              std::vector<Tensor> ts;
              ts.reserve(ins.a);
              for (size_t i = stack.size() - ins.a; i < stack.size(); ++i) {
                ts.push_back(std::move(stack[i]).toTensor());
              }
              stack.resize(stack.size() - ins.a);
              list = IValue(std::move(ts));
              break;
            }
            case ListKind::Generic: {
              std::vector<IValue> vs(
                  std::make_move_iterator(stack.end() - ins.a),
                  std::make_move_iterator(stack.end()));
              stack.resize(stack.size() - ins.a);
              list = IValue(std::move(vs));
              break;
            }
          }
          stack.push_back(std::move(list));
          break;
        }
        case OpCode::DictConstruct: {
          const uint32_t count = ins.a & ((1u << kDictCountBits) - 1);
          auto d = ivalue::DictImpl::create(
              listTag(static_cast<ListKind>((ins.a >> kDictCountBits) & 15)),
              listTag(
                  static_cast<ListKind>((ins.a >> (kDictCountBits + 4)) & 15)));
          const size_t first = stack.size() - count;
          try {
            for (size_t i = first; i < stack.size(); i += 2) {
              d->insertOrAssign(std::move(stack[i]), std::move(stack[i + 1]));
            }
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          stack.resize(first);
          stack.push_back(IValue(std::move(d)));
          break;
        }
        case OpCode::ListUnpack: {
          IValue list = std::move(stack.back());
          stack.pop_back();
          try {
            TURNOUT_CHECK(list.isList(), ErrorKind::Type,
                          "expected a list to unpack but got a ",
                          list.tagKind());
            std::vector<IValue> elements = list.toList();
            TURNOUT_CHECK(elements.size() == ins.a, ErrorKind::InvalidArgument,
                          "expected a list of ", ins.a,
                          " elements to unpack but got ", elements.size());
            for (IValue& e : elements) stack.push_back(std::move(e));
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        }
        case OpCode::TupleConstruct: {
          std::vector<IValue> vs(std::make_move_iterator(stack.end() - ins.a),
                                 std::make_move_iterator(stack.end()));
          stack.resize(stack.size() - ins.a);
          stack.push_back(IValue::makeTuple(std::move(vs)));
          break;
        }
        case OpCode::TupleUnpack: {
          IValue t = std::move(stack.back());
          stack.pop_back();
          try {
            TURNOUT_CHECK(t.isTuple(), ErrorKind::Type,
                          "expected a tuple to unpack but got a ", t.tagKind());
            const auto& elements = t.toTupleRef().elements();
            TURNOUT_CHECK(elements.size() == ins.a, ErrorKind::InvalidArgument,
                          "expected a tuple of ", ins.a,
                          " elements to unpack but got ", elements.size());
            for (const IValue& e : elements) stack.push_back(e);
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        }
        case OpCode::Raise: {
          std::string cls;
          if (ins.a == 2) {
            IValue c = std::move(stack.back());
            stack.pop_back();
            if (c.isString()) cls = c.toStringRef();
          }
          IValue msg = std::move(stack.back());
          stack.pop_back();
          std::string text = msg.isString() ? msg.toStringRef()
                                            : std::string(msg.tagKind());
          std::string shown = cls.empty() ? "Exception" : cls;
          if (shown.rfind("builtins.", 0) == 0) shown = shown.substr(9);
          throw Error(kindOfPythonClass(cls),
                      "the graph raised " + shown + ": " + text + "\n" +
                          node_info_[ins.b].context);
        }
        case OpCode::Uninitialized:
          stack.emplace_back();
          break;
        case OpCode::Fork: {
          std::shared_ptr<const Code> sub = forks_[ins.a];
          const size_t n = sub->numInputs();
          Stack args(std::make_move_iterator(stack.end() - n),
                     std::make_move_iterator(stack.end()));
          stack.resize(stack.size() - n);
          stack.push_back(IValue(fork([sub, args = std::move(args)]() mutable {
            sub->run(args);
            return std::move(args[0]);
          })));
          break;
        }
        case OpCode::Wait: {
          IValue f = std::move(stack.back());
          stack.pop_back();
          try {
            const std::shared_ptr<Future>& future = f.toFuture();
            future->wait();
            stack.push_back(future->value());
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        }
        case OpCode::CallFunction:
          try {
            functions_[ins.a]->run(stack);
          } catch (const Error& e) {
            rethrow(e, ins.b);
          }
          break;
        case OpCode::IsInstance: {
          bool r = false;
          for (const SchemaTypePtr& t : instance_types_[ins.a]) {
            if (isInstance(stack.back(), *t)) {
              r = true;
              break;
            }
          }
          stack.back() = IValue(r);
          break;
        }
        case OpCode::Ret:
          return;
      }
    }
  } catch (...) {
    stack.resize(base);
    throw;
  }
}

void Code::callUnboxed(const UnboxedCall& call, IValue* regs,
                       Stack& stack) const {
  const bool from_stack = call.in[0] == UnboxedCall::kStackTop;
  const IValue& a = from_stack ? stack.back() : regs[call.in[0]];
  const IValue& b = regs[call.in[1]];
  const bool scalar = call.num_inputs == 3;
  if (__builtin_expect(!a.isTensor() || !b.isTensor() ||
                           (scalar && !regs[call.in[2]].isScalar()),
                       0)) {
    // A value of another kind where the schema wants a tensor or a
    // number: the boxed call, whose argument checks say what is wrong.
    if (!from_stack) stack.push_back(a);
    stack.push_back(b);
    if (scalar) stack.push_back(regs[call.in[2]]);
    call.op.callBoxed(&stack);
  } else {
    Tensor out =
        scalar ? call.pair.call(a.toTensor(), b.toTensor(),
                                regs[call.in[2]].toScalar())
               : call.pair.call(a.toTensor(), b.toTensor());
    if (from_stack) {
      stack.back() = IValue(std::move(out));
    } else {
      stack.emplace_back(std::move(out));
    }
  }
  for (uint32_t i = 0; i < call.num_inputs; ++i) {
    if (call.clear[i]) regs[call.in[i]] = IValue();
  }
}

std::string Code::dump() const {
  std::string out;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const Instruction& ins = instructions_[i];
    out += std::to_string(i) + " " + toString(ins.op);
    switch (ins.op) {
      case OpCode::Call:
        out += " " + node_info_[ins.b].op_name;
        break;
      case OpCode::CallUnboxed: {
        // The inputs: a register ("!" at its last use) or the stack top.
        const UnboxedCall& call = unboxed_[ins.a];
        out += " " + node_info_[ins.b].op_name;
        for (uint32_t k = 0; k < call.num_inputs; ++k) {
          out += call.in[k] == UnboxedCall::kStackTop
                     ? std::string(" top")
                     : " " + std::to_string(call.in[k]) +
                           (call.clear[k] ? "!" : "");
        }
        break;
      }
      case OpCode::LoopTest:
        out += " " + std::to_string(ins.a) + " " + std::to_string(ins.b);
        break;
      case OpCode::Drop:
      case OpCode::Uninitialized:
      case OpCode::Ret:
        break;
      default:
        out += " " + std::to_string(ins.a);
    }
    out += '\n';
  }
  return out;
}

}  // namespace jit
}  // namespace turnout

// The interpreter: a Graph compiled once into a flat instruction sequence
// over numbered registers, run with one boxed Stack.
//
//   std::unique_ptr<Graph> g = parseIR(text);
//   Code code(*g);                    // compile: resolve, number, lay out
//   Stack stack{IValue(x), IValue(y)};
//   code.run(stack);                  // inputs in, outputs out
//   Tensor r = stack[0].toTensor();
//
// Every value of the graph gets a register. Running moves values between
// registers and the stack: LOAD copies a register onto the stack, MOVE
// moves it (at a value's last use), STORE pops into a register, CALL runs
// an operator through its OperatorHandle (resolved at compile time) on the
// top of the stack, JUMP / JUMP_IF_FALSE / LOOP_TEST implement prim::If and
// prim::Loop, and the list, tuple, raise and uninitialized instructions
// implement the prims of ir.h. An operator's output whose only use is the
// first input of the next operator call stays on the stack (no STORE, no
// MOVE), so a chain of calls runs as CALL, pushes of the other inputs,
// CALL, ... FORK compiles a prim::fork's block into a
// Code of its own and runs it on the inter-op pool (future.h) with the
// caller's thread-local dispatch state; FORK pushes its Future as a value
// (an IValue holding it): it may be stored in a list, passed to a callee
// or waited on by aten::wait, which pops a Future and pushes its value.
// CALL_UNBOXED runs an aten operator `(Tensor, Tensor[, Scalar]) -> Tensor`
// (add, sub, mul, div, matmul, ...) through its typed handle, reading its
// inputs in their registers or on top of the stack: the copies onto the
// stack and their reference counts (a locked instruction each) are saved,
// and a register at its last use is cleared after the call, as MOVE would.
// DICT_CONSTRUCT builds a dict (ivalue::DictImpl) from key/value pairs. CALL_FUNCTION runs the Code
// of a prim::CallFunction's callee (compiled with the caller, from the
// graph's CompilationUnit: compilation_unit.h) on the stack; IS_INSTANCE
// tests a value against prim::isinstance's types. Nothing is looked up by name
// while running,
// and nothing is allocated but the frame's registers (inline for small
// graphs) and what kernels, lists and tuples allocate themselves.
//
// An operator whose schema ends with `...` (aten::format(str self, ...))
// gets the node's input count pushed after its inputs: its boxed kernel pops
// the count, then that many inputs.
//
// Errors: a failing operator's Error is rethrown with the same kind, its
// message prefixed by the operator, the node's text and its source
// location:
//   aten::div.Tensor failed at model.py:5:8
//     in: %y : Tensor = aten::div(%x, %z) # model.py:5:8
//   <the kernel's message>
//
// Thread safety: a Code is immutable once compiled; run() keeps its state
// in a frame of its own, so many threads may run one Code at once.
#ifndef TURNOUT_JIT_RUNTIME_INTERPRETER_H_
#define TURNOUT_JIT_RUNTIME_INTERPRETER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dispatcher/core/ivalue.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/stack.h"
#include "dispatcher/tensor_pair_call.h"
#include "jit/ir/ir.h"

namespace turnout {
namespace jit {

/// One instruction. `a` and `b` are operands whose meaning the opcode
/// gives.
enum class OpCode : uint8_t {
  Load,            // push regs[a] (a copy)
  Move,            // push regs[a], moved out (a's last use)
  LoadConst,       // push constants[a]
  LoadListConst,   // push a fresh copy of the list constants[a] (lists are
                   // mutable: a run must not change the next one's)
  Store,           // pop into regs[a]
  Drop,            // pop and discard
  Call,            // ops[a].callBoxed(stack); b = index into node info
  CallUnboxed,     // unboxed[a]: an aten (Tensor, Tensor[, Scalar]) ->
                   // Tensor operator called on its inputs where they lie
                   // (registers, borrowed, or the stack top it then
                   // replaces), its result pushed; b = index into node info
  Jump,            // pc = a
  JumpIfFalse,     // pop a bool; if false, pc = a
  LoopTest,        // if !(regs[b].toBool() && regs[b+1] < regs[b+2]) pc = a
                   // (b: cond, b+1: counter, b+2: max trip count)
  Increment,       // regs[a] = regs[a].toInt() + 1
  ListConstruct,   // pop a values into a list of kind b (ListKind)
  DictConstruct,   // pop a & 0xffffff values (k0, v0, ...) into a new dict;
                   // bits 24-27 / 28-31 of a: key / value ListKind; b: info
  ListUnpack,      // pop a list, check it has a elements, push them; b: info
  TupleConstruct,  // pop a values into a tuple
  TupleUnpack,     // pop a tuple, check it has a elements, push them; b: info
  Raise,           // pop a values (message[, class name]) and throw; b: info
  Uninitialized,   // push None
  Fork,            // pop forks[a]'s inputs, run it on the pool, push its
                   // Future; b: info
  Wait,            // pop a Future, wait for it, push its value; b: info
  CallFunction,    // functions[a].run(stack) on its inputs; b: info
  IsInstance,      // pop a value, push whether it is one of
                   // instance_types[a]
  Ret,             // the outputs are on the stack: return
};

/// The element representation of a list built by ListConstruct.
enum class ListKind : uint32_t { Int, Double, Bool, Tensor, Generic };

struct Instruction {
  OpCode op;
  uint32_t a;
  uint32_t b;
};

/// "Load", "Call", ...
const char* toString(OpCode op);

/// A compiled graph.
class Code {
 public:
  /// Compiles `graph`. The graph may be changed or destroyed afterwards.
  /// Throws Error(InvalidArgument) for a node the interpreter cannot run
  /// (an unresolved operator, a prim it does not know, a malformed
  /// constant), naming the node and its source location.
  explicit Code(const Graph& graph);

  /// Runs the graph on the last numInputs() values of `stack`, replacing
  /// them by the numOutputs() outputs. Throws Error(InvalidArgument) when
  /// the stack holds too few values; on any error the inputs are consumed
  /// and the stack holds what lay below them.
  void run(Stack& stack) const;

  size_t numInputs() const { return num_inputs_; }
  size_t numOutputs() const { return num_outputs_; }
  size_t numRegisters() const { return num_registers_; }
  const std::vector<Instruction>& instructions() const {
    return instructions_;
  }
  /// The instruction listing, one per line: "3 Call aten::neg",
  /// "4 CallUnboxed aten::add.Tensor top 1 2!" (its inputs: the stack top,
  /// or a register, "!" where that is the value's last use).
  std::string dump() const;

 private:
  friend class CodeBuilder;
  // What an error message says about the node an instruction came from.
  struct NodeInfo {
    std::string op_name;   // "aten::add.Tensor", "prim::ListUnpack"
    std::string context;   // "failed at LOC\n  in: NODE TEXT"
  };
  [[noreturn]] void rethrow(const Error& e, uint32_t info) const;

  // A CallUnboxed instruction's operator and where its inputs lie.
  struct UnboxedCall {
    static constexpr uint32_t kStackTop = UINT32_MAX;  // in[0] only
    UnboxedCall(const OperatorHandle& handle, TensorPairCall p)
        : op(handle), pair(std::move(p)) {}
    OperatorHandle op;  // for the boxed call when an input is no tensor
    TensorPairCall pair;
    uint32_t num_inputs = 0;  // 2 or 3
    uint32_t in[3] = {};      // registers (in[0] may be kStackTop)
    bool clear[3] = {};       // the input's last use: clear its register
  };
  void callUnboxed(const UnboxedCall& call, IValue* regs, Stack& stack) const;

  std::vector<UnboxedCall> unboxed_;

  std::vector<Instruction> instructions_;
  std::vector<IValue> constants_;
  std::vector<OperatorHandle> ops_;
  std::vector<NodeInfo> node_info_;
  std::vector<uint32_t> input_registers_;
  // The compiled blocks of the prim::fork nodes; fork i runs into future
  // slot i of a run.
  std::vector<std::shared_ptr<const Code>> forks_;
  // The compiled callees of the prim::CallFunction nodes.
  std::vector<std::shared_ptr<const Code>> functions_;
  // The `types` of the prim::isinstance nodes.
  std::vector<std::vector<SchemaTypePtr>> instance_types_;
  size_t num_registers_ = 0;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
};

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_RUNTIME_INTERPRETER_H_

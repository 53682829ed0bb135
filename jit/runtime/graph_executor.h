// GraphExecutor: runs a graph with a plan specialised to the inputs' types.
//
//   GraphExecutor ex(*parseIR(text));
//   Stack stack{IValue(x), IValue(y)};
//   ex.run(stack);                          // inputs in, outputs out
//   std::cout << *ex.lastExecutedOptimizedGraph();
//   std::cout << ex.getDebugState().toString();
//
// Each run computes an ArgumentSpec from its inputs -- per tensor its
// dtype, device, rank and requires_grad (and, with specialize_sizes, its
// sizes and strides); per other value its kind -- and runs the
// ExecutionPlan for that spec, made on first use: a copy of the graph with
// the inputs typed by the spec, optimised by the passes (jit/passes/), and
// compiled by the interpreter (interpreter.h). Optimising is
//   eraseShapeInformation, then until nothing changes (at most a few
//   rounds): propagateShapes, peepholeOptimize, propagateConstants,
//   inlineConstantBranches, eliminateCommonSubexpressions,
//   eliminateDeadCode.
// With optimisation off (GraphExecutorOptions::optimize, or
// setGraphExecutorOptimize(false) on the thread that makes the plan) the
// plan runs the graph as written; whether a plan is optimised is part of
// its spec, so both kinds may live side by side.
//
// Thread safety: run() may be called from many threads at once. The plans
// are published through an atomic pointer to an immutable list: a run that
// finds its plan takes no lock; a miss takes the executor's mutex, looks
// again, and makes the plan once. No lock is held while a plan runs.
#ifndef TURNOUT_JIT_RUNTIME_GRAPH_EXECUTOR_H_
#define TURNOUT_JIT_RUNTIME_GRAPH_EXECUTOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/stack.h"
#include "jit/ir/ir.h"
#include "jit/runtime/interpreter.h"

namespace turnout {
namespace jit {

/// What a plan is specialised to: one entry per graph input, and whether
/// the plan is optimised.
class ArgumentSpec {
 public:
  /// One input. For a tensor: defined, dtype, device, rank, requires_grad;
  /// for anything else only `tag`.
  struct Arg {
    IValue::Tag tag = IValue::Tag::None;
    bool defined = false;
    bool requires_grad = false;
    ScalarType dtype = ScalarType::Undefined;
    DeviceType device_type = DeviceType::CPU;
    DeviceIndex device_index = -1;
    int32_t dim = 0;
    friend bool operator==(const Arg& a, const Arg& b) {
      return a.tag == b.tag && a.defined == b.defined &&
             a.requires_grad == b.requires_grad && a.dtype == b.dtype &&
             a.device_type == b.device_type &&
             a.device_index == b.device_index && a.dim == b.dim;
    }
  };

  /// The spec of the last `num_inputs` values of `stack`. Precondition:
  /// the stack holds at least that many.
  ArgumentSpec(const Stack& stack, size_t num_inputs, bool with_sizes,
               bool optimize);

  const absl::InlinedVector<Arg, 4>& args() const { return args_; }
  /// Sizes then strides of every defined tensor, in input order; empty
  /// unless made with sizes.
  const absl::InlinedVector<int64_t, 8>& sizesAndStrides() const {
    return sizes_;
  }
  bool withSizes() const { return with_sizes_; }
  bool optimize() const { return optimize_; }
  size_t hash() const { return hash_; }

  /// The graph input type argument `i` gives: a refined tensor type, or
  /// the declared type `declared` for a non-tensor.
  Type inputType(size_t i, const Type& declared) const;

  /// "(Float(*, *, requires_grad=0, device=cpu), Int) optimized"; with
  /// sizes "(Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu))".
  std::string toString() const;

  friend bool operator==(const ArgumentSpec& a, const ArgumentSpec& b);
  friend bool operator!=(const ArgumentSpec& a, const ArgumentSpec& b) {
    return !(a == b);
  }

 private:
  absl::InlinedVector<Arg, 4> args_;
  absl::InlinedVector<int64_t, 8> sizes_;
  bool with_sizes_;
  bool optimize_;
  size_t hash_ = 0;
};

/// A graph specialised to one ArgumentSpec, optimised and compiled.
struct ExecutionPlan {
  ArgumentSpec spec;
  std::shared_ptr<const Graph> graph;  // what `code` was compiled from
  Code code;
};

struct GraphExecutorOptions {
  /// Run the passes on each plan's graph.
  bool optimize = true;
  /// Specialise plans to the tensors' sizes and strides too (more plans,
  /// more constant shapes).
  bool specialize_sizes = false;
};

/// The plans of an executor, for debugging.
struct GraphExecutorState {
  struct Plan {
    ArgumentSpec spec;
    std::shared_ptr<const Graph> graph;
    std::string code;  // Code::dump()
  };
  std::shared_ptr<const Graph> graph;  // the graph as given
  std::vector<Plan> plans;             // in the order they were made
  /// Every plan's spec and optimised graph:
  ///   GraphExecutor: 1 plan
  ///   plan 0: (Float(*, requires_grad=0, device=cpu)) optimized
  ///   graph(...)
  std::string toString() const;
};

class GraphExecutor {
 public:
  /// Copies `graph` (the caller may change or destroy it afterwards) and
  /// checks it with lint(). Compiles nothing yet.
  explicit GraphExecutor(const Graph& graph,
                         GraphExecutorOptions options = {});
  ~GraphExecutor();
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  /// Runs the graph on the last numInputs() values of `stack`, replacing
  /// them by the outputs. Throws Error(InvalidArgument) when the stack
  /// holds fewer values; a plan that fails to compile throws and is not
  /// kept; a failing run consumes the inputs (Code::run).
  void run(Stack& stack);

  size_t numInputs() const { return graph_->inputs().size(); }
  size_t numOutputs() const { return graph_->outputs().size(); }
  const Graph& graph() const { return *graph_; }
  const GraphExecutorOptions& options() const { return options_; }

  /// The plan for the inputs on top of `stack`, made if needed, without
  /// running it.
  const ExecutionPlan& getPlanFor(const Stack& stack);

  /// The optimised graph of the plan that ran last (from any thread), or
  /// null before the first run.
  std::shared_ptr<const Graph> lastExecutedOptimizedGraph() const;

  GraphExecutorState getDebugState() const;

 private:
  // An immutable, published list of plans; replaced (never changed) when a
  // plan is added.
  struct PlanList {
    std::vector<const ExecutionPlan*> plans;
  };
  const ExecutionPlan* findPlan(const PlanList* list,
                                const ArgumentSpec& spec) const;
  const ExecutionPlan& compileSpec(const ArgumentSpec& spec);
  ArgumentSpec specOf(const Stack& stack) const;

  std::shared_ptr<const Graph> graph_;
  GraphExecutorOptions options_;
  std::atomic<const PlanList*> plans_{nullptr};
  std::atomic<const ExecutionPlan*> last_plan_{nullptr};
  std::mutex mu_;  // held while making a plan; guards the two below
  std::vector<std::unique_ptr<ExecutionPlan>> owned_plans_;
  // Every list ever published: a reader may still hold an old one, so they
  // live as long as the executor.
  std::vector<std::unique_ptr<PlanList>> owned_lists_;
};

/// The thread's default for new plans of executors whose options leave
/// optimisation on; true unless set. TorchScript's
/// torch._C._jit_set_graph_executor_optimize.
void setGraphExecutorOptimize(bool optimize);
bool getGraphExecutorOptimize();

/// Runs the executor's optimisation sequence (above) on `graph` in place;
/// for callers that want the optimised graph without an executor.
void optimizeGraph(Graph& graph);

}  // namespace jit
}  // namespace turnout

#endif  // TURNOUT_JIT_RUNTIME_GRAPH_EXECUTOR_H_

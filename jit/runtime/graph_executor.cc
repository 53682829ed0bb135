#include "jit/runtime/graph_executor.h"

#include <utility>

#include "dispatcher/core/error.h"
#include "dispatcher/debug/profiler.h"
#include "jit/passes/common_subexpression_elimination.h"
#include "jit/passes/constant_propagation.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/inline_constant_branches.h"
#include "jit/passes/peephole.h"
#include "jit/passes/shape_propagation.h"

namespace turnout {
namespace jit {
namespace {

constexpr int kMaxOptimizationRounds = 4;

thread_local bool tls_optimize = true;

size_t mix(size_t h, uint64_t v) {
  // A 64-bit mix (from splitmix64's finaliser): specs differ in few bits.
  v += 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>(v ^ (v >> 31));
}

// Runs one pass as a span of its own for the profiler and the dispatch
// trace ("jit::pass::peephole"). Off, RecordScope costs a relaxed load.
bool runPass(const char* name, bool (*pass)(Graph&), Graph& graph) {
  RecordScope scope(name);
  return pass(graph);
}

}  // namespace

// ---- ArgumentSpec

ArgumentSpec::ArgumentSpec(const Stack& stack, size_t num_inputs,
                           bool with_sizes, bool optimize)
    : with_sizes_(with_sizes), optimize_(optimize) {
  const size_t base = stack.size() - num_inputs;
  args_.resize(num_inputs);
  size_t h = optimize ? 1 : 2;
  for (size_t i = 0; i < num_inputs; ++i) {
    const IValue& v = stack[base + i];
    Arg& a = args_[i];
    a.tag = v.tag();
    if (v.isTensor()) {
      const Tensor& t = v.toTensor();
      a.defined = t.defined();
      if (a.defined) {
        a.dtype = t.scalar_type();
        const Device d = t.device();
        a.device_type = d.type();
        a.device_index = d.index();
        a.dim = static_cast<int32_t>(t.dim());
        a.requires_grad = t.requires_grad();
        if (with_sizes) {
          for (int64_t s : t.sizes()) sizes_.push_back(s);
          for (int64_t s : t.strides()) sizes_.push_back(s);
        }
      }
    }
    h = mix(h, static_cast<uint64_t>(a.tag) |
                   static_cast<uint64_t>(a.defined) << 8 |
                   static_cast<uint64_t>(a.requires_grad) << 9 |
                   static_cast<uint64_t>(static_cast<uint8_t>(a.dtype)) << 16 |
                   static_cast<uint64_t>(a.device_type) << 24 |
                   static_cast<uint64_t>(static_cast<uint8_t>(a.device_index))
                       << 32 |
                   static_cast<uint64_t>(static_cast<uint32_t>(a.dim)) << 40);
  }
  for (int64_t s : sizes_) h = mix(h, static_cast<uint64_t>(s));
  hash_ = h;
}

bool operator==(const ArgumentSpec& a, const ArgumentSpec& b) {
  return a.hash_ == b.hash_ && a.optimize_ == b.optimize_ &&
         a.with_sizes_ == b.with_sizes_ && a.args_ == b.args_ &&
         a.sizes_ == b.sizes_;
}

Type ArgumentSpec::inputType(size_t i, const Type& declared) const {
  const Arg& a = args_[i];
  if (a.tag != IValue::Tag::Tensor || !declared.isTensor()) {
    return declared;
  }
  if (!a.defined) return Type();
  TensorRefinement r;
  r.dtype = a.dtype;
  r.device = Device(a.device_type, a.device_index);
  r.requires_grad = a.requires_grad;
  r.sizes.emplace();
  if (with_sizes_) {
    // Sizes then strides of each defined tensor before this one.
    size_t offset = 0;
    for (size_t j = 0; j < i; ++j) {
      if (args_[j].tag == IValue::Tag::Tensor && args_[j].defined) {
        offset += 2 * static_cast<size_t>(args_[j].dim);
      }
    }
    r.strides.emplace();
    for (int32_t d = 0; d < a.dim; ++d) {
      r.sizes->push_back(sizes_[offset + d]);
      r.strides->push_back(sizes_[offset + a.dim + d]);
    }
  } else {
    r.sizes->assign(static_cast<size_t>(a.dim), std::nullopt);
  }
  return Type::tensor(std::move(r));
}

std::string ArgumentSpec::toString() const {
  std::string out = "(";
  for (size_t i = 0; i < args_.size(); ++i) {
    if (i > 0) out += ", ";
    const Arg& a = args_[i];
    if (a.tag != IValue::Tag::Tensor) {
      out += a.tag == IValue::Tag::None ? "None" : IValue::tagName(a.tag);
      continue;
    }
    out += a.defined ? inputType(i, Type()).toString() : "Tensor(undefined)";
  }
  out += optimize_ ? ") optimized" : ") unoptimized";
  return out;
}

// ---- Optimisation

void optimizeGraph(Graph& graph) {
  RecordScope scope("jit::optimize_graph");
  runPass("jit::pass::erase_shape_information", eraseShapeInformation, graph);
  for (int round = 0; round < kMaxOptimizationRounds; ++round) {
    bool changed = false;
    changed = runPass("jit::pass::propagate_shapes", propagateShapes, graph) ||
              changed;
    changed =
        runPass("jit::pass::peephole", peepholeOptimize, graph) || changed;
    changed =
        runPass("jit::pass::constant_propagation", propagateConstants, graph) ||
        changed;
    changed = runPass("jit::pass::inline_constant_branches",
                      inlineConstantBranches, graph) ||
              changed;
    changed = runPass("jit::pass::common_subexpression_elimination",
                      eliminateCommonSubexpressions, graph) ||
              changed;
    changed =
        runPass("jit::pass::dead_code_elimination", eliminateDeadCode, graph) ||
        changed;
    if (!changed) break;
  }
  graph.lint();
}

void setGraphExecutorOptimize(bool optimize) { tls_optimize = optimize; }
bool getGraphExecutorOptimize() { return tls_optimize; }

// ---- GraphExecutor

GraphExecutor::GraphExecutor(const Graph& graph, GraphExecutorOptions options)
    : options_(options) {
  graph.lint();
  graph_ = graph.copy();
}

GraphExecutor::~GraphExecutor() = default;

ArgumentSpec GraphExecutor::specOf(const Stack& stack) const {
  TURNOUT_CHECK(stack.size() >= numInputs(), ErrorKind::InvalidArgument,
                "GraphExecutor::run(): the graph takes ", numInputs(),
                " inputs but the stack holds ", stack.size(), " values");
  return ArgumentSpec(stack, numInputs(), options_.specialize_sizes,
                      options_.optimize && tls_optimize);
}

const ExecutionPlan* GraphExecutor::findPlan(const PlanList* list,
                                             const ArgumentSpec& spec) const {
  if (list == nullptr) return nullptr;
  for (const ExecutionPlan* p : list->plans) {
    if (p->spec == spec) return p;
  }
  return nullptr;
}

const ExecutionPlan& GraphExecutor::compileSpec(const ArgumentSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  // Another thread may have made it while this one waited.
  const PlanList* current = plans_.load(std::memory_order_acquire);
  if (const ExecutionPlan* p = findPlan(current, spec)) return *p;

  // The compile phases as spans: compile_plan holds optimize_graph (with a
  // span per pass run) and build_code (the interpreter's instructions).
  RecordScope compile_scope("jit::compile_plan");
  std::shared_ptr<Graph> g = graph_->copy();
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    Value* in = g->inputs()[i];
    in->setType(spec.inputType(i, in->type()));
  }
  if (spec.optimize()) optimizeGraph(*g);
  // Compiling may throw: nothing is published before it succeeded.
  std::unique_ptr<ExecutionPlan> plan;
  {
    RecordScope build_scope("jit::build_code");
    plan.reset(new ExecutionPlan{spec, g, Code(*g)});
  }
  auto list = std::make_unique<PlanList>();
  if (current != nullptr) list->plans = current->plans;
  list->plans.push_back(plan.get());
  const ExecutionPlan& result = *plan;
  owned_plans_.push_back(std::move(plan));
  owned_lists_.push_back(std::move(list));
  // Release: a reader that loads the new list (acquire) sees the plan and
  // list fully built.
  plans_.store(owned_lists_.back().get(), std::memory_order_release);
  return result;
}

const ExecutionPlan& GraphExecutor::getPlanFor(const Stack& stack) {
  ArgumentSpec spec = specOf(stack);
  const ExecutionPlan* p =
      findPlan(plans_.load(std::memory_order_acquire), spec);
  return p != nullptr ? *p : compileSpec(spec);
}

void GraphExecutor::run(Stack& stack) {
  const ExecutionPlan& plan = getPlanFor(stack);
  // Release: lastExecutedOptimizedGraph() on another thread (acquire)
  // reads the plan through this pointer.
  last_plan_.store(&plan, std::memory_order_release);
  plan.code.run(stack);
}

std::shared_ptr<const Graph> GraphExecutor::lastExecutedOptimizedGraph()
    const {
  const ExecutionPlan* p = last_plan_.load(std::memory_order_acquire);
  return p == nullptr ? nullptr : p->graph;
}

GraphExecutorState GraphExecutor::getDebugState() const {
  GraphExecutorState state;
  state.graph = graph_;
  const PlanList* list = plans_.load(std::memory_order_acquire);
  if (list != nullptr) {
    for (const ExecutionPlan* p : list->plans) {
      state.plans.push_back({p->spec, p->graph, p->code.dump()});
    }
  }
  return state;
}

std::string GraphExecutorState::toString() const {
  std::string out = "GraphExecutor: " + std::to_string(plans.size()) +
                    (plans.size() == 1 ? " plan\n" : " plans\n");
  for (size_t i = 0; i < plans.size(); ++i) {
    out += "plan " + std::to_string(i) + ": " + plans[i].spec.toString() +
           "\n" + plans[i].graph->toString();
  }
  return out;
}

}  // namespace jit
}  // namespace turnout

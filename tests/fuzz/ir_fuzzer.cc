// Fuzz target: the IR parser and printer, lint, the interpreter and the
// graph executor. Whatever parses must print to a graph that parses back and
// prints the same, and pass lint(); a graph small enough to run (below) must
// give the same outputs through the interpreter (Code) as through the
// optimising GraphExecutor, or make both raise.
//
// Bounded work per input: at most kMaxNodes nodes and kMaxLoops loops, every
// loop's trip count replaced by a constant of at most kMaxTrips (the graph
// run is the changed one, by both sides), and a CPU allocator that refuses
// any allocation over kMaxAllocationBytes (a refused allocation is an error
// to the graph; the outputs are then not compared, since the optimiser may
// have computed the failing node ahead of time). Non-deterministic operators
// (rand, empty, ...) leave the graph unrun.
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatcher/core/allocator.h"
#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/core/tensor.h"
#include "dispatcher/stack.h"
#include "jit/ir/ir.h"
#include "jit/ir/parser.h"
#include "jit/passes/dead_code_elimination.h"
#include "jit/passes/side_effects.h"
#include "jit/runtime/graph_executor.h"
#include "jit/runtime/interpreter.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/kernels/testing.h"

namespace turnout {
namespace fuzz {
namespace {

constexpr int kMaxNodes = 200;
constexpr int kMaxLoops = 6;
constexpr int64_t kMaxTrips = 4;
constexpr size_t kMaxAllocationBytes = size_t{256} << 10;

std::atomic<bool> allocation_refused{false};

// The default CPU allocator, refusing big allocations.
class CappedAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes > kMaxAllocationBytes) {
      allocation_refused.store(true, std::memory_order_relaxed);
      throw Error(ErrorKind::InvalidArgument,
                  "fuzz harness: allocation of " + std::to_string(nbytes) +
                      " bytes refused");
    }
    return getDefaultCPUAllocator()->allocate(nbytes);
  }
};

void installCappedAllocator() {
  static CappedAllocator capped;
  static const bool installed = [] {
    setAllocator(DeviceType::CPU, &capped);
    return true;
  }();
  (void)installed;
}

// ---- What the graph holds -----------------------------------------------------

struct Census {
  int nodes = 0;
  int loops = 0;
  bool nondeterministic = false;
};

void count(const jit::Block* b, Census& c) {
  for (const jit::Node* n : b->nodes()) {
    ++c.nodes;
    if (n->is("prim::Loop")) ++c.loops;
    if (jit::isNondeterministic(n)) c.nondeterministic = true;

    for (const jit::Block* inner : n->blocks()) count(inner, c);
  }
}

// Replaces every loop's trip count by a constant of at most kMaxTrips.
void boundLoops(jit::Graph& g, jit::Block* b) {
  for (jit::Node* n : b->nodes()) {
    for (jit::Block* inner : n->blocks()) boundLoops(g, inner);
    if (!n->is("prim::Loop") || n->inputs().empty()) continue;
    std::optional<IValue> trips = jit::toIValue(n->input(0));
    if (trips && trips->isInt() && trips->toInt() <= kMaxTrips) continue;
    jit::WithInsertPoint guard(n);
    n->replaceInput(0, g.insertConstant(IValue(kMaxTrips)));
  }
}

// ---- Inputs -------------------------------------------------------------------

Tensor inputTensor(const jit::Type& type) {
  std::vector<int64_t> sizes = {2, 3};
  ScalarType dtype = ScalarType::Float;
  if (const jit::TensorRefinement* r = type.refinement()) {
    if (r->dtype) dtype = *r->dtype;
    if (r->sizes && r->sizes->size() <= 4) {
      sizes.clear();
      for (const std::optional<int64_t>& s : *r->sizes) {
        sizes.push_back(s && *s >= 0 && *s <= 4 ? *s : 2);
      }
    }
  }
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  std::vector<double> values;
  for (int64_t i = 0; i < numel; ++i) values.push_back(0.5 * (i % 7) - 1.0);
  return testing::tensorOf(values, sizes, dtype);
}

// A value of `type`, or nullopt for a type the harness does not make.
std::optional<IValue> inputOf(const SchemaType& type, const jit::Type* full) {
  using K = SchemaType::Kind;
  switch (type.kind()) {
    case K::Tensor:
      return IValue(inputTensor(full ? *full : jit::Type()));
    case K::Int:
    case K::SymInt:
      return IValue(int64_t{2});
    case K::Float:
      return IValue(1.5);
    case K::Bool:
      return IValue(true);
    case K::Scalar:
    case K::Number:
      return IValue(int64_t{3});
    case K::Str:
      return IValue(std::string("a"));
    case K::None:
      return IValue();
    case K::Optional:
      return inputOf(*type.elementType(), nullptr);
    case K::List: {
      const SchemaType& e = *type.elementType();
      if (e.kind() == K::Int) return IValue(std::vector<int64_t>{2, 3});
      if (e.kind() == K::Float) return IValue(std::vector<double>{1.5, -2.0});
      if (e.kind() == K::Bool) return IValue(std::vector<bool>{true, false});
      if (e.kind() == K::Tensor) {
        return IValue(std::vector<Tensor>{inputTensor(jit::Type()),
                                          inputTensor(jit::Type())});
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Stack> makeInputs(const jit::Graph& g) {
  Stack stack;
  for (const jit::Value* v : g.inputs()) {
    std::optional<IValue> iv = inputOf(*v->type().schemaType(), &v->type());
    if (!iv) return std::nullopt;
    stack.push_back(std::move(*iv));
  }
  return stack;
}

// ---- Outcomes -----------------------------------------------------------------

struct Outcome {
  bool raised = false;
  std::string error;
  Stack outputs;
};

template <class Run>
Outcome outcomeOf(Run&& run) {
  Outcome o;
  try {
    run(o.outputs);
  } catch (const Error& e) {
    o.raised = true;
    o.error = e.message();
    o.outputs.clear();
  }
  return o;
}

bool closeEnough(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= 1e-5 + 1e-5 * std::fabs(b);
}

// Why `a` and `b` differ, or "" when they agree.
std::string difference(const IValue& a, const IValue& b) {
  if (a.tagKind() != b.tagKind()) {
    return std::string(a.tagKind()) + " vs " + b.tagKind();
  }
  if (a.isTensor()) {
    const Tensor& x = a.toTensor();
    const Tensor& y = b.toTensor();
    if (x.defined() != y.defined()) return "defined vs undefined tensor";
    if (!x.defined()) return "";
    if (x.scalar_type() != y.scalar_type()) {
      return std::string("dtype ") + toString(x.scalar_type()) + " vs " +
             toString(y.scalar_type());
    }
    if (x.sizes() != y.sizes()) return "sizes differ";
    if (!x.is_cpu() || !y.is_cpu()) return "";
    std::vector<double> xv = testing::valuesOf(x);
    std::vector<double> yv = testing::valuesOf(y);
    for (size_t i = 0; i < xv.size(); ++i) {
      if (!closeEnough(xv[i], yv[i])) {
        return "element " + std::to_string(i) + ": " + std::to_string(xv[i]) +
               " vs " + std::to_string(yv[i]);
      }
    }
    return "";
  }
  if (a.isDouble()) {
    return closeEnough(a.toDouble(), b.toDouble())
               ? ""
               : std::to_string(a.toDouble()) + " vs " +
                     std::to_string(b.toDouble());
  }
  if (a.isInt()) {
    return a.toInt() == b.toInt() ? ""
                                  : std::to_string(a.toInt()) + " vs " +
                                        std::to_string(b.toInt());
  }
  if (a.isBool()) return a.toBool() == b.toBool() ? "" : "bool differs";
  if (a.isString()) {
    return a.toStringRef() == b.toStringRef() ? "" : "string differs";
  }
  if (a.isTuple() || a.isList()) {
    std::vector<IValue> xs =
        a.isTuple() ? a.toTupleRef().elements() : a.toList();
    std::vector<IValue> ys =
        b.isTuple() ? b.toTupleRef().elements() : b.toList();
    if (xs.size() != ys.size()) return "lengths differ";
    for (size_t i = 0; i < xs.size(); ++i) {
      std::string d = difference(xs[i], ys[i]);
      if (!d.empty()) return "[" + std::to_string(i) + "] " + d;
    }
    return "";
  }
  return "";  // None, Device: equal tags suffice
}

void runBoth(const jit::Graph& g) {
  Census c;
  count(g.block(), c);
  if (c.nodes > kMaxNodes || c.loops > kMaxLoops || c.nondeterministic) return;
  std::unique_ptr<jit::Graph> bounded = g.copy();
  boundLoops(*bounded, bounded->block());
  if (!makeInputs(*bounded)) return;

  installCappedAllocator();
  allocation_refused.store(false, std::memory_order_relaxed);
  Outcome interpreted = outcomeOf([&](Stack& out) {
    jit::Code code(*bounded);
    out = *makeInputs(*bounded);
    code.run(out);
  });
  Outcome executed = outcomeOf([&](Stack& out) {
    jit::GraphExecutor executor(*bounded);
    out = *makeInputs(*bounded);
    executor.run(out);
  });
  if (allocation_refused.load(std::memory_order_relaxed)) return;
  if (interpreted.raised && !executed.raised) {
    // The executor drops dead code, and with it a dead node that raises
    // (as TorchScript does): the reference is then the interpreter on the
    // graph without its dead code. A pass that dropped a live node still
    // shows, as outputs that differ.
    std::unique_ptr<jit::Graph> live = bounded->copy();
    jit::eliminateDeadCode(*live);
    interpreted = outcomeOf([&](Stack& out) {
      jit::Code code(*live);
      out = *makeInputs(*live);
      code.run(out);
    });
    if (allocation_refused.load(std::memory_order_relaxed)) return;
  }

  FUZZ_CHECK(interpreted.raised == executed.raised,
             "the interpreter ",
             interpreted.raised ? "raised: " + interpreted.error
                                : std::string("ran"),
             "\nbut the graph executor ",
             executed.raised ? "raised: " + executed.error : std::string("ran"),
             "\ngraph run:\n", bounded->toString());
  if (interpreted.raised) return;
  FUZZ_CHECK(interpreted.outputs.size() == executed.outputs.size(),
             "output counts differ");
  for (size_t i = 0; i < interpreted.outputs.size(); ++i) {
    std::string d = difference(interpreted.outputs[i], executed.outputs[i]);
    FUZZ_CHECK(d.empty(), "output ", i, " differs between the interpreter and ",
               "the graph executor: ", d, "\ngraph run:\n",
               bounded->toString());
  }
}

void checkGraph(std::string_view text) {
  std::unique_ptr<jit::Graph> first;
  try {
    first = jit::parseIR(text);
  } catch (const Error& e) {
    checkRejection(e, text, "parseIR");
    return;
  }
  const std::string printed = first->toString();
  std::unique_ptr<jit::Graph> second;
  try {
    second = jit::parseIR(printed);
  } catch (const Error& e) {
    FUZZ_CHECK(false, "the printed graph does not parse:\n", printed, "\n",
               e.message());
  }
  const std::string reprinted = second->toString();
  FUZZ_CHECK(reprinted == printed, "parse -> print -> parse -> print differs:\n",
             printed, "\nthen\n", reprinted);
  try {
    first->lint();
    second->lint();
  } catch (const Error& e) {
    FUZZ_CHECK(false, "a parsed graph fails lint: ", e.message());
  }
  runBoth(*second);
}

}  // namespace
}  // namespace fuzz
}  // namespace turnout

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return turnout::fuzz::runTextInput(data, size, /*skip_deep=*/true,
                                     turnout::fuzz::checkGraph);
}

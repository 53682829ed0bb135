#include "kernels/autograd/engine.h"

#include <atomic>
#include <mutex>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dispatcher/core/error.h"
#include "kernels/autograd/autograd_meta.h"
#include "kernels/autograd/grad_mode.h"
#include "kernels/autograd/grad_ops.h"

namespace turnout {
namespace autograd {
namespace {

struct ByLaterSequence {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

// The create_graph warning: whether it was given, and where it goes.
struct CreateGraphWarning {
  std::atomic<bool> given{false};
  std::mutex mu;
  BackwardWarningHandler handler;
};
CreateGraphWarning& createGraphWarning() {
  static CreateGraphWarning* const state = new CreateGraphWarning();  // at exit
  return *state;
}

void warnCreateGraphOnce() {
  CreateGraphWarning& state = createGraphWarning();
  if (state.given.exchange(true, std::memory_order_relaxed)) return;
  BackwardWarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(state.mu);
    handler = state.handler;
  }
  // Outside the lock: the handler may take the GIL, or throw.
  const std::string text =
      "backward(create_graph=True) stores gradients in .grad that carry the "
      "graph which computed them, and that graph refers back to the leaves: "
      "each leaf and its .grad keep each other alive (a reference cycle), so "
      "neither is freed and memory grows with every such call. To avoid it, "
      "compute higher-order gradients with turnout.autograd.grad(outputs, "
      "inputs, create_graph=True), which returns them instead of storing "
      "them; or, if you need backward(), set each leaf's .grad to None once "
      "you are done with it, which breaks the cycle. (This warning is given "
      "once per process.)";
  if (handler) {
    handler(text);
  } else {
    warn(text);
  }
}

// Adds `grad` into slot `input_nr` of `buffer`.
void accumulate(variable_list& buffer, uint32_t input_nr, Tensor grad) {
  if (!grad.defined()) return;
  Tensor& slot = buffer[input_nr];
  slot = slot.defined() ? detail::addGrads(slot, grad) : std::move(grad);
}

}  // namespace

namespace {

// Which reachable Nodes must run so that a gradient reaches some node of
// `targets`: those with a path (of one edge or more) to one, as torch's
// engine prunes for grad() and backward(inputs=). `dependencies` counts, per
// reachable node, the edges into it (the roots have none).
std::unordered_set<Node*> nodesToRun(
    const std::vector<Node*>& roots,
    std::unordered_map<Node*, int> dependencies,
    const std::unordered_set<Node*>& targets) {
  // A topological order (every node after those sending it gradients),
  // walked backwards: a node must run when one of its next nodes is a
  // target or must run.
  std::vector<Node*> order;
  std::vector<Node*> ready;
  for (Node* r : roots) {
    if (dependencies[r] == 0) {
      dependencies[r] = -1;
      ready.push_back(r);
    }
  }
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    order.push_back(node);
    for (const Edge& next : node->next_edges()) {
      if (next.isValid() && --dependencies[next.function.get()] == 0) {
        ready.push_back(next.function.get());
      }
    }
  }
  std::unordered_set<Node*> run;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (const Edge& next : (*it)->next_edges()) {
      Node* n = next.function.get();
      if (n != nullptr && (targets.count(n) != 0 || run.count(n) != 0)) {
        run.insert(*it);
        break;
      }
    }
  }
  return run;
}

// The engine behind backward() and grad(). With `captures` (grad(),
// backward(inputs=)): the gradient arriving at each captured edge is stored
// in `captured`, no AccumulateGrad runs, so no leaf's .grad changes, and
// only the nodes on a path to a captured edge run.
//
// `accumulates`: backward() (into .grad), whose create_graph warns once the
// roots are checked, as torch's engine does.
void run(const variable_list& roots, const variable_list& grad_roots,
         const std::vector<Edge>* captures, variable_list* captured,
         bool create_graph, bool retain_graph, bool accumulates) {
  TURNOUT_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(),
                ErrorKind::InvalidArgument, "backward: got ", roots.size(),
                " tensors but ", grad_roots.size(), " gradients");
  // Every given gradient has its output's shape (checked first, as torch's
  // backward and grad check them before the engine runs).
  for (size_t i = 0; i < grad_roots.size(); ++i) {
    const Tensor& g = grad_roots[i];
    if (!g.defined() || !roots[i].defined()) continue;
    TURNOUT_CHECK(g.sizes() == roots[i].sizes(), ErrorKind::InvalidArgument,
                  "Mismatch in shape: the gradient given for output ", i,
                  " has shape ", shapeString(g.sizes()), " but output ", i,
                  " has shape ", shapeString(roots[i].sizes()),
                  "; pass a gradient of the output's shape");
  }
  std::vector<Edge> root_edges;
  variable_list root_grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    Edge edge = gradientEdge(root);
    TURNOUT_CHECK(edge.isValid(), ErrorKind::InvalidArgument, "element ", i,
                  " of tensors does not require grad and does not have a "
                  "grad_fn");
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      TURNOUT_CHECK(root.numel() == 1, ErrorKind::InvalidArgument,
                    "grad can be implicitly created only for scalar outputs "
                    "(element ", i, " has ", root.numel(), " elements)");
      g = detail::onesLike(root);
    }
    root_edges.push_back(std::move(edge));
    root_grads.push_back(std::move(g));
  }
  if (accumulates && create_graph) warnCreateGraphOnce();

  // How many gradients each reachable Node waits for.
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, std::shared_ptr<Node>> keep_alive;
  std::vector<Node*> stack;
  for (const Edge& e : root_edges) {
    if (keep_alive.emplace(e.function.get(), e.function).second) {
      stack.push_back(e.function.get());
    }
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& next : node->next_edges()) {
      if (!next.isValid()) continue;
      ++dependencies[next.function.get()];
      if (keep_alive.emplace(next.function.get(), next.function).second) {
        stack.push_back(next.function.get());
      }
    }
  }

  std::unordered_set<Node*> to_run;
  if (captures != nullptr) {
    std::vector<Node*> root_nodes;
    for (const Edge& e : root_edges) root_nodes.push_back(e.function.get());
    std::unordered_set<Node*> targets;
    for (const Edge& c : *captures) targets.insert(c.function.get());
    to_run = nodesToRun(root_nodes, dependencies, targets);
  }

  std::unordered_map<Node*, variable_list> buffers;
  auto bufferOf = [&buffers](Node* node) -> variable_list& {
    variable_list& b = buffers[node];
    if (b.empty()) b.resize(std::max<uint32_t>(node->num_inputs(), 1));
    return b;
  };
  std::priority_queue<Node*, std::vector<Node*>, ByLaterSequence> ready;
  for (size_t i = 0; i < root_edges.size(); ++i) {
    Node* node = root_edges[i].function.get();
    accumulate(bufferOf(node), root_edges[i].input_nr, root_grads[i]);
  }
  for (const Edge& e : root_edges) {
    Node* node = e.function.get();
    if (dependencies[node] == 0) {
      dependencies[node] = -1;  // queued once
      ready.push(node);
    }
  }

  AutoGradMode grad_mode(create_graph);
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    variable_list inputs = std::move(bufferOf(node));
    buffers.erase(node);
    if (captures != nullptr) {
      for (size_t j = 0; j < captures->size(); ++j) {
        const Edge& c = (*captures)[j];
        if (c.function.get() == node && c.input_nr < inputs.size()) {
          (*captured)[j] = inputs[c.input_nr];
        }
      }
      if (to_run.count(node) == 0) continue;
    }
    if (__builtin_expect(node->hasPreHooks(), 0)) node->runPreHooks(inputs);
    variable_list outputs;
    if (__builtin_expect(node->hasPostHooks(), 0)) {
      variable_list grad_outputs = inputs;
      outputs = node->runPostHooks(node->apply(std::move(inputs)), grad_outputs);
    } else {
      outputs = node->apply(std::move(inputs));
    }
    if (!retain_graph) node->releaseVariables();
    const std::vector<Edge>& edges = node->next_edges();
    TURNOUT_INTERNAL_ASSERT(outputs.size() == edges.size() || edges.empty(),
                            node->name(), " returned ", outputs.size(),
                            " gradients for ", edges.size(), " inputs");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& next = edges[i];
      if (!next.isValid()) continue;
      Node* target = next.function.get();
      accumulate(bufferOf(target), next.input_nr, std::move(outputs[i]));
      if (--dependencies[target] == 0) ready.push(target);
    }
  }
}

}  // namespace

void backward(const variable_list& roots, const variable_list& grad_roots,
              bool retain_graph, bool create_graph,
              const variable_list& inputs) {
  if (inputs.empty()) {
    run(roots, grad_roots, nullptr, nullptr, create_graph, retain_graph,
        /*accumulates=*/true);
    return;
  }
  std::vector<Edge> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    TURNOUT_CHECK(t.defined() && requiresGrad(t), ErrorKind::InvalidArgument,
                  "backward: element ", i,
                  " of inputs does not require grad; pass tensors that "
                  "require grad (leaves or not)");
    captures.push_back(gradientEdge(t));
  }
  variable_list captured(inputs.size());
  run(roots, grad_roots, &captures, &captured, create_graph, retain_graph,
      /*accumulates=*/true);
  // Into each input's .grad: a leaf's through its AccumulateGrad, a
  // non-leaf's directly (as torch's backward(inputs=) does for both).
  AutoGradMode grad_mode(create_graph);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!captured[i].defined()) continue;  // no gradient reached it
    bool repeated = false;  // an input given twice accumulates once
    for (size_t j = 0; j < i; ++j) {
      repeated |=
          inputs[j].unsafeGetTensorImpl() == inputs[i].unsafeGetTensorImpl();
    }
    if (repeated) continue;
    if (isLeaf(inputs[i])) {
      Node* accumulate_grad = captures[i].function.get();
      variable_list g{std::move(captured[i])};
      if (accumulate_grad->hasPostHooks()) {
        variable_list grad_outputs = g;
        accumulate_grad->runPostHooks(accumulate_grad->apply(std::move(g)),
                                      grad_outputs);
      } else {
        accumulate_grad->apply(std::move(g));
      }
      continue;
    }
    const Tensor old = grad(inputs[i]);
    setGrad(inputs[i], old.defined() ? detail::addGrads(old, captured[i])
                                     : std::move(captured[i]));
  }
}

BackwardWarningHandler setBackwardWarningHandler(
    BackwardWarningHandler handler) {
  CreateGraphWarning& state = createGraphWarning();
  std::lock_guard<std::mutex> lock(state.mu);
  std::swap(state.handler, handler);
  return handler;
}

void resetCreateGraphWarning() {
  createGraphWarning().given.store(false, std::memory_order_relaxed);
}

variable_list grad(const variable_list& roots, const variable_list& grad_roots,
                   const variable_list& inputs, bool create_graph,
                   std::optional<bool> retain_graph) {
  std::vector<Edge> captures;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge edge = inputs[i].defined() ? gradientEdge(inputs[i]) : Edge();
    TURNOUT_CHECK(edge.isValid(), ErrorKind::InvalidArgument, "grad: element ",
                  i, " of inputs does not require grad; differentiate with "
                  "respect to tensors that require grad");
    captures.push_back(std::move(edge));
  }
  variable_list captured(inputs.size());
  run(roots, grad_roots, &captures, &captured, create_graph,
      retain_graph.value_or(create_graph), /*accumulates=*/false);
  return captured;
}

}  // namespace autograd
}  // namespace turnout

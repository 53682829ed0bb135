#include "jit/ir/resolve.h"

#include <climits>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/dispatcher.h"

namespace turnout {
namespace jit {
namespace {

// The fit of `n` to `schema`: the sum of the argument scores, or -1.
int fitScore(const Node* n, const FunctionSchema& schema) {
  const auto& args = schema.arguments();
  const auto& ins = n->inputs();
  if (schema.is_vararg() ? ins.size() < args.size()
                         : ins.size() != args.size()) {
    return -1;
  }
  if (!schema.is_varret() && n->outputs().size() != schema.returns().size()) {
    return -1;
  }
  int total = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    int s = matchScore(ins[i]->type(), *args[i].type());
    if (s < 0) return -1;
    total += s;
  }
  return total;
}

std::string inputTypes(const Node* n) {
  std::string out = "(";
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    if (i > 0) out += ", ";
    out += n->inputs()[i]->type().unrefined().toString();
  }
  out += ") -> " + std::to_string(n->outputs().size()) + " output" +
         (n->outputs().size() == 1 ? "" : "s");
  return out;
}

}  // namespace

Resolution findOperator(const Node* n,
                        std::optional<std::string_view> overload) {
  Resolution r;
  const Dispatcher& d = Dispatcher::singleton();
  std::vector<OperatorHandle> candidates;
  if (overload) {
    auto op = d.findSchema(OperatorName{n->kind(), std::string(*overload)});
    if (op) candidates.push_back(*op);
  } else {
    for (const OperatorName& name : d.getAllOpNames()) {
      if (name.name != n->kind()) continue;
      if (auto op = d.findSchema(name)) candidates.push_back(*op);
    }
  }
  if (candidates.empty()) {
    r.error = overload ? "operator " + n->kind() + "." + std::string(*overload) +
                             " is not registered"
                       : "no operator named " + n->kind() +
                             " is registered (check the name, or register "
                             "its schema before parsing)";
    return r;
  }
  r.name_known = true;
  int best = INT_MAX;
  std::vector<OperatorHandle> best_ops;
  for (const OperatorHandle& op : candidates) {
    int s = fitScore(n, op.schema());
    if (s < 0) continue;
    if (s < best) {
      best = s;
      best_ops.clear();
    }
    if (s == best) best_ops.push_back(op);
  }
  if (best_ops.size() == 1) {
    r.op = best_ops[0];
    return r;
  }
  std::string list;
  for (const OperatorHandle& op : best_ops.empty() ? candidates : best_ops) {
    list += "\n    " + toString(op.schema());
  }
  if (best_ops.empty()) {
    r.error = "no overload of " + n->kind() + " fits the inputs " +
              inputTypes(n) + "; the overloads are:" + list;
  } else {
    r.error = "the inputs " + inputTypes(n) + " fit several overloads of " +
              n->kind() + " equally well; name one (e.g. " + n->kind() + "." +
              best_ops[0].operator_name().overload_name + "):" + list;
  }
  return r;
}

void resolveOperator(Node* n) {
  Resolution r = findOperator(n, std::nullopt);
  TURNOUT_CHECK(r.op.has_value(), ErrorKind::InvalidArgument, r.error);
  n->setOp(*r.op);
}

}  // namespace jit
}  // namespace turnout

#include "jit/ir/printer.h"

#include <ostream>
#include <sstream>

#include "dispatcher/schema/function_schema.h"
#include "kernels/scalar_ops.h"

namespace turnout {
namespace jit {
namespace {

void appendDouble(std::string& out, double d) {
  // The schema language prints floats as PyTorch prints them everywhere
  // ("1.", "0.10000000000000001", "1e+20", "inf"): reuse it.
  DefaultValue::fromDouble(d).appendTo(out);
}

// A tuple constant's value as torch prints it: (1, 2., "s", True, None).
// Nested tuples recurse: a tuple constant comes from a parsed or folded
// graph, whose types nest at most SchemaType::kMaxNesting deep.
void appendConstant(std::string& out, const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None: out += "None"; return;
    case IValue::Tag::Bool: out += v.toBool() ? "True" : "False"; return;
    case IValue::Tag::Int: out += std::to_string(v.toInt()); return;
    case IValue::Tag::Double: appendDouble(out, v.toDouble()); return;
    case IValue::Tag::String:
      DefaultValue::fromString(v.toStringRef()).appendTo(out);
      return;
    case IValue::Tag::Tuple: {
      const auto& es = v.toTupleRef().elements();
      out += '(';
      for (size_t i = 0; i < es.size(); ++i) {
        if (i > 0) out += ", ";
        appendConstant(out, es[i]);
      }
      if (es.size() == 1) out += ',';
      out += ')';
      return;
    }
    default:
      out += '<';
      out += v.tagKind();
      out += '>';
  }
}

void appendValueRefs(std::string& out, const std::vector<Value*>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += '%';
    out += values[i]->debugName();
  }
}

void appendValueDecls(std::string& out, const std::vector<Value*>& values,
                      const char* separator) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += '%';
    out += values[i]->debugName();
    out += " : ";
    out += values[i]->type().toString();
  }
}

// The graph bodies of the nodes printed so far as KIND_N (forks with a
// Subgraph), printed after the graph as `with KIND_N = graph(...)`.
using Subgraphs = std::vector<std::pair<std::string, const Graph*>>;

// A constant's empty list as torch prints it: the element type cannot be
// read from "[]", so torch writes annotate(List[int], []).
std::string constantOrAttributeToString(const Node* n, const std::string& name,
                                        const AttributeValue& value) {
  if (n->kind() == prim::kConstant && name == "value") {
    const auto* is = std::get_if<std::vector<int64_t>>(&value);
    if (is != nullptr && is->empty()) return "annotate(List[int], [])";
    const auto* ds = std::get_if<std::vector<double>>(&value);
    if (ds != nullptr && ds->empty()) return "annotate(List[float], [])";
  }
  return attributeToString(value);
}

// Not inlined: appendNode recurses once per nested block and keeps its
// frame small.
[[gnu::noinline]] void appendNodeLine(std::string& out, const Node* n,
                                      Subgraphs* subgraphs = nullptr) {
  appendValueDecls(out, n->outputs(), ", ");
  out += " = ";
  out += n->kind();
  const Graph* subgraph = nullptr;
  if (n->hasAttribute(prim::kSubgraph)) {
    if (const auto* g = std::get_if<std::shared_ptr<const Graph>>(
            &n->attribute(prim::kSubgraph))) {
      subgraph = g->get();
    }
  }
  if (subgraph != nullptr && subgraphs != nullptr) {
    out += '_';
    out += std::to_string(subgraphs->size());
    subgraphs->emplace_back(n->kind() + "_" + std::to_string(subgraphs->size()),
                            subgraph);
  }
  if (n->printsOverload() && n->op() &&
      !n->op()->operator_name().overload_name.empty()) {
    out += '.';
    out += n->op()->operator_name().overload_name;
  }
  const size_t shown_attributes =
      n->attributes().size() - (subgraph != nullptr ? 1 : 0);
  if (shown_attributes > 0) {
    out += '[';
    bool first = true;
    for (const auto& [name, value] : n->attributes()) {
      if (name == prim::kSubgraph &&
          std::holds_alternative<std::shared_ptr<const Graph>>(value)) {
        continue;
      }
      if (!first) out += ", ";
      first = false;
      out += name;
      out += '=';
      out += constantOrAttributeToString(n, name, value);
    }
    out += ']';
  }
  out += '(';
  appendValueRefs(out, n->inputs());
  out += ')';
  if (!n->scope().empty()) {
    out += ", scope: ";
    out += n->scope();
  }
  if (!n->sourceLocation().empty()) {
    out += " # ";
    out += n->sourceLocation();
  }
}

void appendNode(std::string& out, const Node* n, int indent,
                Subgraphs* subgraphs);

void appendBlock(std::string& out, const Block* b, size_t index,
                 int indent, Subgraphs* subgraphs) {
  out.append(indent, ' ');
  out += "block";
  out += std::to_string(index);
  out += '(';
  appendValueDecls(out, b->inputs(), ", ");
  out += "):\n";
  for (const Node* n : b->nodes()) appendNode(out, n, indent + 2, subgraphs);
  out.append(indent + 2, ' ');
  out += "-> (";
  appendValueRefs(out, b->outputs());
  out += ")\n";
}

void appendNode(std::string& out, const Node* n, int indent,
                Subgraphs* subgraphs) {
  out.append(indent, ' ');
  appendNodeLine(out, n, subgraphs);
  out += '\n';
  for (size_t i = 0; i < n->blocks().size(); ++i) {
    appendBlock(out, n->blocks()[i], i, indent + 2, subgraphs);
  }
}

}  // namespace

std::string attributeToString(const AttributeValue& value) {
  std::string out;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    out = std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    appendDouble(out, *d);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    DefaultValue::fromString(*s).appendTo(out);
  } else if (const auto* t = std::get_if<Tensor>(&value)) {
    if (t->defined() && t->dim() == 0 && t->is_cpu()) {
      Scalar v = item(*t);
      out += '{';
      if (v.isFloatingPoint()) {
        // As torch 1.13 prints a tensor constant's value: C++'s default
        // stream format (6 significant digits: {2}, {0.333333}, {1e+20}),
        // not the IR's float literal.
        std::ostringstream digits;
        digits << v.toDouble();
        out += digits.str();
      } else if (v.isBoolean()) {
        out += v.toBool() ? "1" : "0";
      } else {
        out += std::to_string(v.toLong());
      }
      out += '}';
    } else {
      out = "<Tensor>";
    }
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
    out += '[';
    for (size_t k = 0; k < is->size(); ++k) {
      if (k > 0) out += ", ";
      out += std::to_string((*is)[k]);
    }
    out += ']';
  } else if (const auto* iv = std::get_if<IValue>(&value)) {
    appendConstant(out, *iv);
  } else if (const auto* g =
                 std::get_if<std::shared_ptr<const Graph>>(&value)) {
    out += *g == nullptr ? "<no graph>" : "<graph>";
  } else if (const auto* ts = std::get_if<std::vector<Type>>(&value)) {
    out += '[';
    for (size_t k = 0; k < ts->size(); ++k) {
      if (k > 0) out += ", ";
      out += (*ts)[k].toString();
    }
    out += ']';
  } else {
    const auto& ds = std::get<std::vector<double>>(value);
    out += '[';
    for (size_t k = 0; k < ds.size(); ++k) {
      if (k > 0) out += ", ";
      appendDouble(out, ds[k]);
    }
    out += ']';
  }
  return out;
}

std::string nodeToString(const Node* node, int indent) {
  checkBlockNesting(*node->owningGraph(), "printing a node");
  std::string out;
  appendNode(out, node, indent, nullptr);
  return out;
}

std::string Node::toString() const {
  std::string out;
  appendNodeLine(out, this);
  return out;
}

std::string Graph::toString() const {
  // The printer recurses once per level (and the text grows with the square
  // of the depth, by its indentation).
  checkBlockNesting(*this, "printing a graph");
  std::string out = "graph(";
  appendValueDecls(out, inputs(), ",\n      ");
  out += "):\n";
  Subgraphs subgraphs;
  for (const Node* n : block_->nodes()) appendNode(out, n, 2, &subgraphs);
  out += "  return (";
  appendValueRefs(out, outputs());
  out += ")\n";
  // As torch: each fork's subgraph after the graph, numbered in print
  // order; a subgraph's own forks follow it, numbered from 0 again.
  for (const auto& [name, g] : subgraphs) {
    out += "with " + name + " = " + g->toString();
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Graph& g) {
  return out << g.toString();
}

}  // namespace jit
}  // namespace turnout

#include "jit/ir/ir.h"

#include <algorithm>

#include "dispatcher/core/error.h"

namespace turnout {
namespace jit {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.';
}

void removeUse(Value* v, Node* user, size_t offset,
               std::vector<Use>& uses) {
  auto it = std::find(uses.begin(), uses.end(), Use{user, offset});
  TURNOUT_INTERNAL_ASSERT(it != uses.end(), "use of %", v->debugName(),
                          " by input ", offset, " of ", user->kind(),
                          " is missing from its use list");
  uses.erase(it);
}

}  // namespace

std::optional<Type> tupleConstantType(const IValue& v) {
  using K = SchemaType::Kind;
  switch (v.tag()) {
    case IValue::Tag::None: return Type::of(K::None);
    case IValue::Tag::Bool: return Type::of(K::Bool);
    case IValue::Tag::Int: return Type::of(K::Int);
    case IValue::Tag::Double: return Type::of(K::Float);
    case IValue::Tag::String: return Type::of(K::Str);
    case IValue::Tag::Tuple: {
      std::vector<Type> elements;
      for (const IValue& e : v.toTupleRef().elements()) {
        std::optional<Type> t = tupleConstantType(e);
        if (!t) return std::nullopt;
        elements.push_back(std::move(*t));
      }
      return Type::tuple(std::move(elements));
    }
    default:
      return std::nullopt;
  }
}

bool isInterpreterPrim(std::string_view kind) {
  return kind == prim::kConstant || kind == prim::kListConstruct ||
         kind == prim::kDictConstruct ||
         kind == prim::kListUnpack || kind == prim::kTupleConstruct ||
         kind == prim::kTupleUnpack || kind == prim::kIf ||
         kind == prim::kLoop || kind == prim::kRaiseException ||
         kind == prim::kUninitialized || kind == prim::kFork ||
         kind == prim::kWait || kind == prim::kCallFunction ||
         kind == prim::kIsInstance || kind == prim::kGetAttr;
}

namespace {

// Throws when blocks nest deeper than kMaxBlockNesting in `root`, itself
// `root_depth` deep.
void checkNestingFrom(const Block* root, size_t root_depth,
                      std::string_view what) {
  // Depth-first over (block, next node, depth) frames kept in a vector.
  struct Frame {
    const Block* block;
    const Node* next;
    size_t depth;  // how many nodes own this block, transitively
  };
  std::vector<Frame> stack;
  stack.push_back({root, root->paramNode()->next(), root_depth});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.block->returnNode()) {
      stack.pop_back();
      continue;
    }
    const Node* n = top.next;
    top.next = n->next();
    if (n->blocks().empty()) continue;
    const size_t depth = top.depth + 1;
    if (depth > kMaxBlockNesting) {
      std::string where = n->sourceLocation().empty()
                              ? std::string()
                              : " (" + n->sourceLocation() + ")";
      throw Error(ErrorKind::InvalidArgument,
                  std::string(what) + ": blocks nest more than " +
                      std::to_string(kMaxBlockNesting) +
                      " deep; the blocks of this node are one level too "
                      "many" + where + "\n  at: " + n->toString() +
                      "\nFlatten the control flow (e.g. chain the branches "
                      "instead of nesting them).");
    }
    for (size_t i = n->blocks().size(); i-- > 0;) {
      const Block* b = n->blocks()[i];
      stack.push_back({b, b->paramNode()->next(), depth});
    }
  }
}

}  // namespace

void checkBlockNesting(const Graph& g, std::string_view what) {
  checkNestingFrom(g.block(), 0, what);
}

// ---- Value

Graph* Value::owningGraph() const { return node_->owningGraph(); }

Value* Value::setDebugName(const std::string& name) {
  TURNOUT_CHECK(!name.empty(), ErrorKind::InvalidArgument,
                "Value::setDebugName(): the name is empty");
  for (char c : name) {
    TURNOUT_CHECK(isNameChar(c), ErrorKind::InvalidArgument,
                  "Value::setDebugName(\"", name, "\"): '", c,
                  "' may not appear in a value name (letters, digits, '_' "
                  "and '.' only)");
  }
  if (name == name_) return this;
  Graph* g = owningGraph();
  auto it = g->names_.find(name);
  if (it != g->names_.end()) {
    // Move the old holder to name.N, the first N that is free.
    Value* old = it->second;
    std::string base = name;
    size_t dot = base.rfind('.');
    if (dot != std::string::npos && dot + 1 < base.size() &&
        std::all_of(base.begin() + dot + 1, base.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      base.resize(dot);
    }
    for (size_t n = 1;; ++n) {
      std::string candidate = base + "." + std::to_string(n);
      if (g->names_.count(candidate) == 0) {
        g->names_.erase(it);
        old->name_ = candidate;
        g->names_[candidate] = old;
        break;
      }
    }
  }
  g->names_.erase(name_);
  name_ = name;
  g->names_[name_] = this;
  return this;
}

void Value::replaceAllUsesWith(Value* v) {
  TURNOUT_INTERNAL_ASSERT(v != this, "replaceAllUsesWith(): %", name_,
                          " replaced by itself");
  std::vector<Use> uses = uses_;
  for (const Use& u : uses) u.user->replaceInput(u.offset, v);
}

void Value::replaceAllUsesAfterNodeWith(const Node* node, Value* v) {
  std::vector<Use> uses = uses_;
  for (const Use& u : uses) {
    // Walk the user up to the block of `node`.
    const Node* n = u.user;
    while (n != nullptr && n->owningBlock() != node->owningBlock()) {
      Block* b = n->owningBlock();
      n = b == nullptr ? nullptr : b->owningNode();
    }
    if (n == nullptr) continue;
    if (n == node->owningBlock()->returnNode() || node->isBefore(n)) {
      u.user->replaceInput(u.offset, v);
    }
  }
}

// ---- Node

Node::Node(Graph* graph, std::string kind)
    : kind_(std::move(kind)), graph_(graph) {}

Node::~Node() = default;

Value* Node::input(size_t i) const {
  TURNOUT_CHECK(i < inputs_.size(), ErrorKind::Index, kind_, ": input ", i,
                " out of range (the node has ", inputs_.size(), " inputs)");
  return inputs_[i];
}

Value* Node::output(size_t i) const {
  TURNOUT_CHECK(i < outputs_.size(), ErrorKind::Index, kind_, ": output ", i,
                " out of range (the node has ", outputs_.size(), " outputs)");
  return outputs_[i];
}

Value* Node::output() const {
  TURNOUT_CHECK(outputs_.size() == 1, ErrorKind::InvalidArgument, kind_,
                ": output() needs exactly one output, the node has ",
                outputs_.size());
  return outputs_[0];
}

Value* Node::addInput(Value* v) { return insertInput(inputs_.size(), v); }

Value* Node::insertInput(size_t i, Value* v) {
  TURNOUT_CHECK(v != nullptr && v->owningGraph() == graph_,
                ErrorKind::InvalidArgument, kind_,
                ": an input must be a value of the same graph");
  TURNOUT_CHECK(i <= inputs_.size(), ErrorKind::Index, kind_,
                ": insertInput at ", i, " of ", inputs_.size());
  // Later inputs shift by one: fix their uses first.
  for (size_t j = i; j < inputs_.size(); ++j) {
    for (Use& u : inputs_[j]->uses_) {
      if (u.user == this && u.offset == j) {
        u.offset = j + 1;
        break;
      }
    }
  }
  inputs_.insert(inputs_.begin() + i, v);
  v->uses_.push_back({this, i});
  return v;
}

void Node::replaceInput(size_t i, Value* v) {
  TURNOUT_CHECK(i < inputs_.size(), ErrorKind::Index, kind_,
                ": replaceInput at ", i, " of ", inputs_.size());
  TURNOUT_CHECK(v != nullptr && v->owningGraph() == graph_,
                ErrorKind::InvalidArgument, kind_,
                ": an input must be a value of the same graph");
  removeUse(inputs_[i], this, i, inputs_[i]->uses_);
  inputs_[i] = v;
  v->uses_.push_back({this, i});
}

void Node::replaceInputWith(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] == from) replaceInput(i, to);
  }
}

void Node::dropInput(size_t i) {
  removeUse(inputs_[i], this, i, inputs_[i]->uses_);
}

void Node::removeInput(size_t i) {
  TURNOUT_CHECK(i < inputs_.size(), ErrorKind::Index, kind_,
                ": removeInput at ", i, " of ", inputs_.size());
  dropInput(i);
  for (size_t j = i + 1; j < inputs_.size(); ++j) {
    for (Use& u : inputs_[j]->uses_) {
      if (u.user == this && u.offset == j) {
        u.offset = j - 1;
        break;
      }
    }
  }
  inputs_.erase(inputs_.begin() + i);
}

void Node::removeAllInputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) dropInput(i);
  inputs_.clear();
}

Value* Node::addOutput(Type type) {
  Value* v = graph_->newValue(this, outputs_.size(), std::move(type));
  outputs_.push_back(v);
  return v;
}

void Node::eraseOutput(size_t i) {
  TURNOUT_CHECK(i < outputs_.size(), ErrorKind::Index, kind_,
                ": eraseOutput at ", i, " of ", outputs_.size());
  Value* v = outputs_[i];
  TURNOUT_CHECK(!v->hasUses(), ErrorKind::InvalidArgument, kind_,
                ": cannot erase output %", v->debugName(), ", it has ",
                v->uses().size(), " uses");
  outputs_.erase(outputs_.begin() + i);
  for (size_t j = i; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
  graph_->freeValue(v);
}

Block* Node::addBlock() {
  blocks_.push_back(graph_->newBlock(this));
  return blocks_.back();
}

void Node::eraseBlock(size_t i) {
  TURNOUT_CHECK(i < blocks_.size(), ErrorKind::Index, kind_,
                ": eraseBlock at ", i, " of ", blocks_.size());
  Block* b = blocks_[i];
  blocks_.erase(blocks_.begin() + i);
  graph_->freeBlock(b);
}

Node* Node::insertBefore(Node* n) {
  TURNOUT_CHECK(!inBlockList(), ErrorKind::InvalidArgument, kind_,
                ": insertBefore(): the node is already in a block");
  TURNOUT_CHECK(n->inBlockList() && n->owningBlock() != nullptr &&
                    n != n->owningBlock()->paramNode(),
                ErrorKind::InvalidArgument, kind_,
                ": insertBefore(): the target is not in a block, or is a "
                "block's param node");
  owning_block_ = n->owning_block_;
  prev_ = n->prev_;
  next_ = n;
  prev_->next_ = this;
  n->prev_ = this;
  return this;
}

Node* Node::insertAfter(Node* n) {
  TURNOUT_CHECK(n->inBlockList() && n->owningBlock() != nullptr &&
                    n != n->owningBlock()->returnNode(),
                ErrorKind::InvalidArgument, kind_,
                ": insertAfter(): the target is not in a block, or is a "
                "block's return node");
  return insertBefore(n->next_);
}

void Node::unlink() {
  if (!inBlockList()) return;
  prev_->next_ = next_;
  next_->prev_ = prev_;
  next_ = prev_ = nullptr;
  owning_block_ = nullptr;
}

void Node::moveBefore(Node* n) {
  // Check everything before unlinking, so that a refused move changes
  // nothing.
  TURNOUT_CHECK(inBlockList() && n != this && n->inBlockList() &&
                    n->owningBlock() != nullptr &&
                    n != n->owningBlock()->paramNode(),
                ErrorKind::InvalidArgument, kind_,
                ": moveBefore(): both nodes must be in blocks, distinct, and "
                "the target may not be a param node");
  unlink();
  insertBefore(n);
}

void Node::moveAfter(Node* n) {
  TURNOUT_CHECK(inBlockList() && n != this && n->inBlockList() &&
                    n->owningBlock() != nullptr &&
                    n != n->owningBlock()->returnNode(),
                ErrorKind::InvalidArgument, kind_,
                ": moveAfter(): both nodes must be in blocks, distinct, and "
                "the target may not be a return node");
  unlink();
  insertAfter(n);
}

bool Node::isBefore(const Node* n) const {
  if (owning_block_ == nullptr || n->owning_block_ != owning_block_) {
    return false;
  }
  for (const Node* p = next_; p != nullptr; p = p->next_) {
    if (p == n) return true;
    if (p == owning_block_->returnNode()) break;
  }
  return false;
}

void Node::destroy() {
  for (Value* v : outputs_) {
    TURNOUT_CHECK(!v->hasUses(), ErrorKind::InvalidArgument, "destroy(): %",
                  v->debugName(), " (output of ", kind_, ") still has ",
                  v->uses().size(), " uses; replace them first");
  }
  TURNOUT_CHECK(owning_block_ == nullptr || (this != owning_block_->paramNode() &&
                                             this != owning_block_->returnNode()),
                ErrorKind::InvalidArgument,
                "destroy(): a block's param and return nodes go with the "
                "block");
  if (graph_->insert_before_ == this) graph_->insert_before_ = next_;
  unlink();
  graph_->freeNode(this);
}

void Node::replaceAllUsesWith(Node* other) {
  TURNOUT_CHECK(other->outputs_.size() == outputs_.size(),
                ErrorKind::InvalidArgument, "replaceAllUsesWith(): ", kind_,
                " has ", outputs_.size(), " outputs but ", other->kind_,
                " has ", other->outputs_.size());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    outputs_[i]->replaceAllUsesWith(other->outputs_[i]);
  }
}

bool Node::hasAttribute(std::string_view name) const {
  for (const auto& a : attributes_) {
    if (a.first == name) return true;
  }
  return false;
}

const AttributeValue& Node::attribute(std::string_view name) const {
  for (const auto& a : attributes_) {
    if (a.first == name) return a.second;
  }
  throw Error(ErrorKind::InvalidArgument,
             kind_ + " has no attribute '" + std::string(name) + "'");
}

Node* Node::setAttribute(std::string name, AttributeValue value) {
  for (auto& a : attributes_) {
    if (a.first == name) {
      a.second = std::move(value);
      return this;
    }
  }
  attributes_.emplace_back(std::move(name), std::move(value));
  return this;
}

const FunctionSchema* Node::maybeSchema() const {
  return op_ ? &op_->schema() : nullptr;
}

void Node::setOp(OperatorHandle op, bool print_overload) {
  op_ = op;
  print_overload_ = print_overload;
}

// ---- Block

Block::Block(Graph* graph, Node* owning_node)
    : graph_(graph), owning_node_(owning_node) {
  param_ = new Node(graph, std::string(prim::kParam));
  return_ = new Node(graph, std::string(prim::kReturn));
  graph->all_nodes_.insert(param_);
  graph->all_nodes_.insert(return_);
  param_->owning_block_ = this;
  return_->owning_block_ = this;
  param_->next_ = return_;
  return_->prev_ = param_;
  // The list is open at both ends; next_/prev_ of the sentinels point at
  // each other so that inBlockList() holds for both.
  param_->prev_ = return_;
  return_->next_ = param_;
}

Block::~Block() = default;

Value* Block::addInput(const std::string& name, Type type) {
  return insertInput(param_->outputs_.size(), name, std::move(type));
}

Value* Block::insertInput(size_t i, const std::string& name, Type type) {
  TURNOUT_CHECK(i <= param_->outputs_.size(), ErrorKind::Index,
                "Block::insertInput at ", i, " of ",
                param_->outputs_.size());
  Value* v = graph_->newValue(param_, i, std::move(type));
  param_->outputs_.insert(param_->outputs_.begin() + i, v);
  for (size_t j = i + 1; j < param_->outputs_.size(); ++j) {
    param_->outputs_[j]->offset_ = j;
  }
  if (!name.empty()) v->setDebugName(name);
  return v;
}

void Block::eraseInput(size_t i) { param_->eraseOutput(i); }

size_t Block::registerOutput(Value* v) {
  return_->addInput(v);
  return return_->inputs_.size() - 1;
}

void Block::insertOutput(size_t i, Value* v) { return_->insertInput(i, v); }

void Block::eraseOutput(size_t i) { return_->removeInput(i); }

void Block::cloneFrom(const Block* src,
                      std::unordered_map<const Value*, Value*>& env) {
  // The clone recurses once per level: check the depth first.
  checkNestingFrom(src, 0, "Block::cloneFrom()");
  cloneFromUnchecked(src, env);
}

void Block::cloneFromUnchecked(const Block* src,
                               std::unordered_map<const Value*, Value*>& env) {
  for (const Value* in : src->inputs()) {
    env[in] = addInput("", in->type());
  }
  for (const Node* n : src->nodes()) {
    Node* copy = graph_->createCloneUnchecked(n, env);
    appendNode(copy);
  }
  for (const Value* out : src->outputs()) {
    auto it = env.find(out);
    TURNOUT_INTERNAL_ASSERT(it != env.end(), "cloneFrom(): block output %",
                            out->debugName(), " is defined nowhere");
    registerOutput(it->second);
  }
}

// ---- Graph

Graph::Graph() {
  block_ = newBlock(nullptr);
  insert_before_ = block_->returnNode();
}

Graph::~Graph() {
  for (Node* n : all_nodes_) delete n;
  for (Value* v : all_values_) delete v;
  for (Block* b : all_blocks_) delete b;
}

Value* Graph::newValue(Node* node, size_t offset, Type type) {
  Value* v = new Value(node, offset, std::move(type));
  all_values_.insert(v);
  v->name_ = freshName();
  names_[v->name_] = v;
  return v;
}

std::string Graph::freshName() {
  for (;;) {
    std::string name = std::to_string(next_name_++);
    if (names_.count(name) == 0) return name;
  }
}

void Graph::freeValue(Value* v) {
  auto it = names_.find(v->name_);
  if (it != names_.end() && it->second == v) names_.erase(it);
  all_values_.erase(v);
  ++num_freed_;
  delete v;
}

Block* Graph::newBlock(Node* owning_node) {
  Block* b = new Block(this, owning_node);
  all_blocks_.insert(b);
  return b;
}

void Graph::freeBlock(Block* b) {
  // The outputs' uses first, then the nodes last to first, so that every
  // use goes before its definition.
  b->return_->removeAllInputs();
  while (!b->empty()) {
    Node* n = b->returnNode()->prev();
    n->unlink();
    for (Value* v : n->outputs_) v->uses_.clear();
    freeNode(n);
  }
  for (Value* v : b->param_->outputs_) v->uses_.clear();
  freeNode(b->return_);
  freeNode(b->param_);
  all_blocks_.erase(b);
  delete b;
}

void Graph::freeNode(Node* n) {
  if (n->blocks_.empty()) {
    if (insert_before_ == n) insert_before_ = block_->returnNode();
    n->removeAllInputs();
    for (Value* v : n->outputs_) freeValue(v);
    n->outputs_.clear();
    all_nodes_.erase(n);
    ++num_freed_;
    delete n;
    return;
  }
  // A node with blocks goes with everything they hold, in a loop rather
  // than a recursion as deep as the blocks nest: gather the nodes and
  // blocks, drop the uses of values defined outside (the values inside go
  // too), then free them all.
  std::vector<Node*> nodes{n};
  std::vector<Block*> blocks;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (Block* b : nodes[i]->blocks_) {
      blocks.push_back(b);
      nodes.push_back(b->param_);
      for (Node* m : b->nodes()) nodes.push_back(m);
      nodes.push_back(b->return_);
    }
  }
  const std::unordered_set<const Node*> inside(nodes.begin(), nodes.end());
  for (Node* m : nodes) {
    for (size_t i = 0; i < m->inputs_.size(); ++i) {
      if (inside.count(m->inputs_[i]->node_) == 0) m->dropInput(i);
    }
    m->inputs_.clear();
  }
  for (Node* m : nodes) {
    if (insert_before_ == m) insert_before_ = block_->returnNode();
    for (Value* v : m->outputs_) freeValue(v);
    m->outputs_.clear();
    m->blocks_.clear();
    all_nodes_.erase(m);
    ++num_freed_;
    delete m;
  }
  for (Block* b : blocks) {
    all_blocks_.erase(b);
    delete b;
  }
}

Node* Graph::create(std::string kind, const std::vector<Value*>& inputs,
                    size_t num_outputs) {
  Node* n = new Node(this, std::move(kind));
  all_nodes_.insert(n);
  for (Value* v : inputs) n->addInput(v);
  for (size_t i = 0; i < num_outputs; ++i) n->addOutput();
  return n;
}

Node* Graph::createClone(const Node* src,
                         std::unordered_map<const Value*, Value*>& env) {
  for (const Block* b : src->blocks_) {
    checkNestingFrom(b, 1, "Graph::createClone()");
  }
  return createCloneUnchecked(src, env);
}

Node* Graph::createCloneUnchecked(
    const Node* src, std::unordered_map<const Value*, Value*>& env) {
  Node* n = new Node(this, src->kind_);
  all_nodes_.insert(n);
  for (const Value* in : src->inputs_) {
    auto it = env.find(in);
    TURNOUT_CHECK(it != env.end(), ErrorKind::InvalidArgument,
                  "createClone(): input %", in->debugName(), " of ",
                  src->kind_, " has no counterpart in the target graph");
    n->addInput(it->second);
  }
  for (const Value* out : src->outputs_) {
    env[out] = n->addOutput(out->type());
  }
  n->attributes_ = src->attributes_;
  n->scope_ = src->scope_;
  n->source_location_ = src->source_location_;
  n->op_ = src->op_;
  n->print_overload_ = src->print_overload_;
  for (const Block* b : src->blocks_) {
    n->addBlock()->cloneFromUnchecked(b, env);
  }
  return n;
}

Node* Graph::insertNode(Node* n) { return n->insertBefore(insert_before_); }

void Graph::setInsertPoint(Node* n) {
  TURNOUT_CHECK(n != nullptr && n->owningGraph() == this && n->inBlockList(),
                ErrorKind::InvalidArgument,
                "setInsertPoint(): the node must be in a block of this graph");
  insert_before_ = n;
}

Value* Graph::insertConstant(const IValue& value) {
  Node* n = create(std::string(prim::kConstant), {}, 1);
  Type type;
  switch (value.tag()) {
    case IValue::Tag::None:
      type = Type::of(SchemaType::Kind::None);
      break;
    case IValue::Tag::Bool:
      n->setAttribute("value", int64_t{value.toBool()});
      type = Type::of(SchemaType::Kind::Bool);
      break;
    case IValue::Tag::Int:
      n->setAttribute("value", value.toInt());
      type = Type::of(SchemaType::Kind::Int);
      break;
    case IValue::Tag::Double:
      n->setAttribute("value", value.toDouble());
      type = Type::of(SchemaType::Kind::Float);
      break;
    case IValue::Tag::String:
      n->setAttribute("value", value.toStringRef());
      type = Type::of(SchemaType::Kind::Str);
      break;
    case IValue::Tag::Device:
      n->setAttribute("value", value.toDevice().str());
      type = Type::of(SchemaType::Kind::Device);
      break;
    case IValue::Tag::IntList:
      n->setAttribute("value", value.toIntVector());
      type = Type(SchemaType::list(SchemaType::get(SchemaType::Kind::Int)));
      break;
    case IValue::Tag::DoubleList:
      n->setAttribute("value", value.toDoubleVector());
      type =
          Type(SchemaType::list(SchemaType::get(SchemaType::Kind::Float)));
      break;
    case IValue::Tag::Tuple:
      if (std::optional<Type> t = tupleConstantType(value)) {
        n->setAttribute("value", value);
        type = std::move(*t);
        break;
      }
      freeNode(n);
      throw Error(ErrorKind::Type,
                  "insertConstant(): a tuple constant holds only None, bool, "
                  "int, float, str and such tuples");
    case IValue::Tag::Tensor: {
      const Tensor& t = value.toTensor();
      TURNOUT_CHECK(t.defined(), ErrorKind::InvalidArgument,
                    "insertConstant(): an undefined tensor cannot be a "
                    "constant");
      n->setAttribute("value", t);
      TensorRefinement r;
      r.dtype = t.scalar_type();
      if (t.dim() > 0) {
        r.sizes.emplace(t.sizes().begin(), t.sizes().end());
        r.strides.emplace(t.strides().begin(), t.strides().end());
      }
      // A constant never requires grad, as in TorchScript.
      r.requires_grad = false;
      r.device = t.device();
      type = Type::tensor(std::move(r));
      break;
    }
    default:
      freeNode(n);
      throw Error(ErrorKind::Type,
                 std::string("insertConstant(): a ") + value.tagKind() +
                     " cannot be a prim::Constant (None, bool, int, float, "
                     "str, Device, Tensor, int[] and float[] can)");
  }
  n->output()->setType(std::move(type));
  return insertNode(n)->output();
}

std::unique_ptr<Graph> Graph::copy() const {
  checkBlockNesting(*this, "Graph::copy()");
  auto g = std::make_unique<Graph>();
  std::unordered_map<const Value*, Value*> env;
  g->block_->cloneFromUnchecked(block_, env);
  // Same names: rename in a second pass so that a fresh numeric name given
  // during cloning never collides with an original one.
  for (const auto& entry : env) {
    entry.second->name_.clear();
  }
  g->names_.clear();
  for (const auto& entry : env) {
    entry.second->name_ = entry.first->name_;
    g->names_[entry.second->name_] = entry.second;
  }
  g->next_name_ = next_name_;
  g->compilation_unit_ = compilation_unit_;
  return g;
}

std::optional<IValue> toIValue(const Value* v) {
  const Node* n = v->node();
  if (!n->is(prim::kConstant) || v->type().isFunction()) return std::nullopt;
  if (!n->hasAttribute("value")) return IValue();
  const AttributeValue& a = n->attribute("value");
  const SchemaType::Kind kind = v->type().kind();
  if (const auto* i = std::get_if<int64_t>(&a)) {
    if (kind == SchemaType::Kind::Bool) return IValue(*i != 0);
    return IValue(*i);
  }
  if (const auto* d = std::get_if<double>(&a)) return IValue(*d);
  if (const auto* s = std::get_if<std::string>(&a)) {
    if (kind == SchemaType::Kind::Device) return IValue(Device(*s));
    return IValue(*s);
  }
  if (const auto* t = std::get_if<Tensor>(&a)) return IValue(*t);
  if (const auto* is = std::get_if<std::vector<int64_t>>(&a)) {
    return IValue(*is);
  }
  if (const auto* iv = std::get_if<IValue>(&a)) return *iv;
  if (const auto* ds = std::get_if<std::vector<double>>(&a)) return IValue(*ds);
  return std::nullopt;
}

}  // namespace jit
}  // namespace turnout

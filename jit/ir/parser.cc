#include "jit/ir/parser.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "dispatcher/core/error.h"
#include "jit/ir/resolve.h"
#include "kernels/factory.h"

namespace turnout {
namespace jit {
namespace {

using Kind = SchemaType::Kind;

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return isIdentChar(c) || c == '.'; }

// The longest text parseIR reads: 64 MiB, about a million nodes.
constexpr size_t kMaxIRBytes = size_t{64} << 20;

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : text_(text), options_(options), graph_(std::make_unique<Graph>()) {}

  std::unique_ptr<Graph> parse() {
    if (text_.size() > kMaxIRBytes) {
      // No excerpt: the line could be as long as the text.
      throw Error(ErrorKind::InvalidArgument,
                  "parse error: the text is " + std::to_string(text_.size()) +
                      " bytes long, over the limit of " +
                      std::to_string(kMaxIRBytes) + " bytes (at byte " +
                      std::to_string(kMaxIRBytes) +
                      "); split the graph, or check that this is IR text");
    }
    parseGraph();
    skipSpace();
    if (pos_ != text_.size()) fail("the end of the graph after 'return (...)'");
    return finish();
  }

 private:
  // A fork's subgraph, `with prim::fork_0 = graph(...)`: parsed from the
  // same text by a parser of its own (its names are its own), one level
  // deeper.
  Parser(const Parser& outer, size_t pos)
      : text_(outer.text_),
        options_(outer.options_),
        graph_(std::make_unique<Graph>()),
        pos_(pos),
        subgraph_depth_(outer.subgraph_depth_ + 1) {}

  // graph(...): nodes return (...), then the `with` subgraphs of the forks
  // it printed as prim::fork_N (torch 1.13's form).
  void parseGraph() {
    skipSpace();
    expectWord("graph");
    expect('(');
    std::vector<Value*> params = parseParams(graph_->block());
    (void)params;
    expect(')');
    expect(':');
    parseNodes(graph_->block());
    expectWord("return");
    expect('(');
    for (Value* v : parseRefs()) graph_->registerOutput(v);
    expect(')');
    parseSubgraphs();
  }

  void parseSubgraphs() {
    while (!pending_subgraphs_.empty() && peekIdent() == "with") {
      size_t at = pos_;
      pos_ += 4;
      skipSpace();
      size_t name_at = pos_;
      std::string ns = parseIdent("prim::fork_N after 'with'");
      if (text_.substr(pos_, 2) != "::") fail("'::'");
      pos_ += 2;
      std::string name = ns + "::" + parseIdent("prim::fork_N after 'with'");
      auto it = pending_subgraphs_.find(name);
      if (it == pending_subgraphs_.end()) {
        failAt(name_at, "no node of this graph is " + name +
                            " (or its subgraph was given already)");
      }
      Node* fork = it->second;
      pending_subgraphs_.erase(it);
      expect('=');
      // Each level is a parser on the stack: bounded well below the
      // blocks' limit.
      constexpr size_t kMaxSubgraphNesting = 64;
      if (subgraph_depth_ >= kMaxSubgraphNesting) {
        failAt(at, "fork subgraphs nested more than " +
                       std::to_string(kMaxSubgraphNesting) + " deep");
      }
      Parser sub(*this, pos_);
      sub.parseGraph();
      pos_ = sub.pos_;
      std::shared_ptr<const Graph> g = sub.finish();
      if (g->inputs().size() != fork->inputs().size() ||
          g->outputs().size() != 1) {
        failAt(at, name + " takes " + std::to_string(fork->inputs().size()) +
                       " inputs and its subgraph must take as many and "
                       "return one value");
      }
      fork->setAttribute(std::string(prim::kSubgraph), std::move(g));
    }
    if (!pending_subgraphs_.empty()) {
      skipSpace();
      fail("'with " + pending_subgraphs_.begin()->first +
           " = graph(...)' giving the subgraph of that fork");
    }
  }

  std::unique_ptr<Graph> finish() {
    graph_->setCompilationUnit(options_.compilation_unit);
    try {
      graph_->lint();
    } catch (const Error& e) {
      // lint() checks what the grammar does not (the prims' operand counts,
      // types against schemas): in parsed text that is the writer's error,
      // not a turnout bug (found by //tests/fuzz:ir_fuzzer).
      if (e.kind() != ErrorKind::Internal) throw;
      std::string what = e.message();
      constexpr std::string_view kPrefix = "Graph::lint(): ";
      if (what.compare(0, kPrefix.size(), kPrefix) == 0) {
        what.erase(0, kPrefix.size());
      }
      throw Error(ErrorKind::InvalidArgument, "parse error: " + what);
    }
    return std::move(graph_);
  }

  // ---- Positions and errors

  [[noreturn]] void failAt(size_t pos, const std::string& message) {
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    size_t line_end = text_.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text_.size();
    // Columns count characters, not bytes.
    const size_t col =
        utf8Length(text_.substr(line_start, std::min(pos, text_.size()) - line_start)) + 1;
    std::string out = "parse error at " + std::to_string(line) + ":" +
                      std::to_string(col) + ": " + message + "\n    " +
                      std::string(text_.substr(line_start, line_end - line_start)) +
                      "\n    " + std::string(col - 1, ' ') + "^";
    throw Error(ErrorKind::InvalidArgument, out);
  }

  std::string found() const {
    if (pos_ >= text_.size()) return "the end of the text";
    if (text_[pos_] == '\n') return "the end of the line";
    size_t end = pos_ + utf8CharAt(text_, pos_).size();
    if (isNameChar(text_[pos_])) {
      while (end < text_.size() && isNameChar(text_[end])) ++end;
    }
    return "'" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }

  [[noreturn]] void fail(const std::string& expected) {
    failAt(pos_, "expected " + expected + " but found " + found());
  }

  // ---- Characters

  // Skips spaces, newlines and comments.
  void skipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool peek(char c) {
    skipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }

  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    if (!accept(c)) fail(std::string("'") + c + "'");
  }

  bool peekArrow() {
    skipSpace();
    return text_.substr(pos_, 2) == "->";
  }

  std::string_view peekIdent() {
    skipSpace();
    size_t end = pos_;
    if (end < text_.size() && isIdentStart(text_[end])) {
      while (end < text_.size() && isIdentChar(text_[end])) ++end;
    }
    return text_.substr(pos_, end - pos_);
  }

  std::string parseIdent(const char* what) {
    std::string_view id = peekIdent();
    if (id.empty()) fail(what);
    pos_ += id.size();
    return std::string(id);
  }

  void expectWord(std::string_view word) {
    if (peekIdent() != word) fail("'" + std::string(word) + "'");
    pos_ += word.size();
  }

  // ---- Values

  // '%' NAME
  std::string parseValueName() {
    expect('%');
    size_t start = pos_;
    while (pos_ < text_.size() && isNameChar(text_[pos_])) ++pos_;
    if (pos_ == start) fail("a value name after '%'");
    return std::string(text_.substr(start, pos_ - start));
  }

  Value* parseRef() {
    skipSpace();
    size_t at = pos_;
    std::string name = parseValueName();
    auto it = visible_.find(name);
    if (it == visible_.end()) {
      if (defined_.count(name) != 0) {
        failAt(at, "%" + name +
                       " is defined inside a block and is not visible here; "
                       "pass it out through the block's outputs");
      }
      failAt(at, "%" + name + " is used before it is defined");
    }
    return it->second;
  }

  std::vector<Value*> parseRefs() {
    std::vector<Value*> refs;
    if (peek(')')) return refs;
    do {
      refs.push_back(parseRef());
    } while (accept(','));
    return refs;
  }

  void declare(Value* v, const std::string& name, size_t at) {
    if (!defined_.insert(name).second) {
      failAt(at, "%" + name + " is defined twice; value names must be unique");
    }
    visible_[name] = v;
    scopes_.back().push_back(name);
    v->setDebugName(name);
  }

  // '%' NAME ':' type {',' ...}, as block or graph parameters.
  std::vector<Value*> parseParams(Block* b) {
    std::vector<Value*> out;
    if (peek(')')) return out;
    do {
      skipSpace();
      size_t at = pos_;
      std::string name = parseValueName();
      expect(':');
      Type t = parseType();
      Value* v = b->addInput("", t);
      declare(v, name, at);
      out.push_back(v);
    } while (accept(','));
    return out;
  }

  // ---- Types

  // A value's type, as torch 1.13 prints it: leaves, dtypes with their
  // refinements, tuples (whose elements keep theirs), Dict(K, V),
  // Future[T] (and the schema language's Future(T)), Union(T1, T2, ...),
  // Function, and T[] / T? suffixes.
  Type parseType() {
    skipSpace();
    size_t at = pos_;
    Type base;
    // Tuples, Dict(...), Future[...] and Union(...) recurse: bounded as in
    // schemas.
    struct Nesting {
      int& depth;
      ~Nesting() { --depth; }
    } nesting{++type_nesting_};
    auto checkNesting = [&] {
      if (type_nesting_ > SchemaType::kMaxNesting) {
        failAt(at, "types nested more than " +
                       std::to_string(SchemaType::kMaxNesting) +
                       " deep (tuples, Dict(...), Future[...], Union(...)); "
                       "flatten the type");
      }
    };
    auto needPlain = [&](const Type& t, size_t t_at, const char* where) {
      if (t.isUnion() || t.isFunction() || t.isClass()) {
        failAt(t_at, "a " + t.toString() + " cannot be " + where);
      }
    };
    if (accept('(')) {
      checkNesting();
      std::vector<Type> elements;
      if (!peek(')')) {
        do {
          elements.push_back(parseType());
        } while (accept(','));
      }
      expect(')');
      base = Type::tuple(std::move(elements));
    } else {
      std::string id = parseIdent("a type");
      if (id == "Dict") {
        checkNesting();
        expect('(');
        skipSpace();
        size_t k_at = pos_;
        Type k = parseType();
        needPlain(k, k_at, "a Dict key");
        expect(',');
        skipSpace();
        size_t v_at = pos_;
        Type v = parseType();
        needPlain(v, v_at, "a Dict value");
        expect(')');
        base = Type(SchemaType::dict(k.unrefined().schemaType(),
                                     v.unrefined().schemaType()));
      } else if (id == "Future") {
        checkNesting();
        // torch prints graphs' futures as Future[T]; the schema language
        // writes Future(T).
        const bool square = peek('[');
        expect(square ? '[' : '(');
        skipSpace();
        size_t e_at = pos_;
        Type e = parseType();
        needPlain(e, e_at, "a Future's element");
        expect(square ? ']' : ')');
        base = Type(SchemaType::future(e.unrefined().schemaType()));
      } else if (id == "Union") {
        checkNesting();
        expect('(');
        std::vector<Type> members;
        do {
          members.push_back(parseType());
        } while (accept(','));
        expect(')');
        if (members.size() < 2) {
          failAt(at, "a Union needs at least two member types (write the "
                     "type itself for one)");
        }
        base = Type::unionOf(std::move(members));
      } else if (id == "Function") {
        base = Type::function();
      } else if (id == "__torch__") {
        // A class type (a scripted module's `self`, its submodules): a
        // dotted name, `__torch__.torch.nn.modules.linear.Linear`.
        std::string name = id;
        while (pos_ < text_.size() && text_[pos_] == '.') {
          ++pos_;
          size_t part_at = pos_;
          std::string_view part = peekIdent();
          if (part.empty() || pos_ != part_at) {
            failAt(part_at, "a class type's qualified name (__torch__.M): "
                            "a name after '.'");
          }
          pos_ += part.size();
          name += ".";
          name += part;
        }
        if (name == id) {
          failAt(at, "a class type needs its qualified name "
                     "(__torch__.MyModule), not __torch__ alone");
        }
        base = Type::classType(std::move(name));
      } else if (std::optional<ScalarType> dtype = dtypeNamed(id);
                 dtype || id == "Tensor") {
        if (dtype || (pos_ < text_.size() && text_[pos_] == '(')) {
          base = Type::tensor(parseRefinement(dtype));
        }
      } else if (auto kind = detail::leafKindFromSpelling(id)) {
        base = Type::of(*kind);
      } else {
        failAt(at, "unknown type '" + id +
                       "' (expected Tensor, int, float, bool, str, NoneType, "
                       "Device, a dtype such as Float, a tuple (...), "
                       "Dict(K, V), Future[T], Union(T1, T2), Function, a "
                       "class __torch__.M, or T[] / T?)");
      }
    }
    for (;;) {
      const bool list = pos_ < text_.size() && text_[pos_] == '[' &&
                        text_.substr(pos_, 2) == "[]";
      const bool optional = pos_ < text_.size() && text_[pos_] == '?';
      if (!list && !optional) break;
      if (base.refinement() != nullptr) {
        failAt(at, "a refined tensor type cannot be a list or optional");
      }
      needPlain(base, at, list ? "a list element" : "optional (torch "
                                 "writes Union(..., NoneType))");
      pos_ += list ? 2 : 1;
      SchemaTypePtr e = base.unrefined().schemaType();
      base = Type(list ? SchemaType::list(std::move(e))
                       : SchemaType::optional(std::move(e)));
    }
    return base;
  }

  static std::optional<ScalarType> dtypeNamed(std::string_view id) {
    for (ScalarType s : kAllScalarTypes) {
      if (id == toString(s)) return s;
    }
    return std::nullopt;
  }

  int64_t parseInt64(const char* what) {
    skipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == start || (pos_ == start + 1 && text_[start] == '-')) {
      pos_ = start;
      fail(what);
    }
    std::string s(text_.substr(start, pos_ - start));
    errno = 0;
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE) failAt(start, "integer " + s + " does not fit in 64 bits");
    return v;
  }

  std::optional<int64_t> parseDim() {
    if (accept('*')) return std::nullopt;
    return parseInt64("a size, a stride or '*'");
  }

  // After "Float" or "Tensor": ['(' item {',' item} ')'] where an item is a
  // size, strides=[...], requires_grad=0|1 or device=NAME[:INDEX].
  TensorRefinement parseRefinement(std::optional<ScalarType> dtype) {
    TensorRefinement r;
    r.dtype = dtype;
    if (!(pos_ < text_.size() && text_[pos_] == '(')) return r;
    ++pos_;
    if (accept(')')) return r;
    do {
      std::string_view id = peekIdent();
      if (id.empty()) {
        if (!r.sizes) r.sizes.emplace();
        if (r.strides || r.requires_grad || r.device) {
          fail("strides=, requires_grad= or device= (sizes come first)");
        }
        r.sizes->push_back(parseDim());
        continue;
      }
      size_t at = pos_;
      pos_ += id.size();
      expect('=');
      if (id == "strides") {
        expect('[');
        r.strides.emplace();
        if (!peek(']')) {
          do {
            r.strides->push_back(parseDim());
          } while (accept(','));
        }
        expect(']');
      } else if (id == "requires_grad") {
        int64_t v = parseInt64("0 or 1");
        if (v != 0 && v != 1) failAt(at, "requires_grad must be 0 or 1");
        r.requires_grad = v == 1;
      } else if (id == "device") {
        skipSpace();
        size_t start = pos_;
        while (pos_ < text_.size() &&
               (isIdentChar(text_[pos_]) || text_[pos_] == ':')) {
          ++pos_;
        }
        std::string spelling(text_.substr(start, pos_ - start));
        try {
          r.device = Device(spelling);
        } catch (const Error& e) {
          failAt(start, "invalid device '" + spelling + "': " + e.message());
        }
      } else {
        failAt(at, "unknown tensor type field '" + std::string(id) +
                       "' (expected sizes, strides=, requires_grad= or "
                       "device=)");
      }
    } while (accept(','));
    expect(')');
    return r;
  }

  // ---- Attributes

  std::string parseStringLiteral() {
    skipSpace();
    char quote = text_[pos_];
    size_t start = pos_++;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\n') failAt(start, "unterminated string literal");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      switch (e) {
        // The escapes the printer writes (the schema language's, as
        // DefaultValue prints strings): \a \b \f \v and octal \ooo too.
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'v': out += '\v'; break;
        case '\\': out += '\\'; break;
        case '"': out += '"'; break;
        case '\'': out += '\''; break;
        case 'x': {
          int v = 0;
          for (int k = 0; k < 2; ++k) {
            char h = pos_ < text_.size() ? text_[pos_] : '\0';
            int digit = (h >= '0' && h <= '9')   ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                 : -1;
            if (digit < 0) failAt(pos_, "expected two hex digits after \\x");
            v = v * 16 + digit;
            ++pos_;
          }
          out += static_cast<char>(v);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int v = e - '0';
            for (int k = 0; k < 2 && pos_ < text_.size() &&
                            text_[pos_] >= '0' && text_[pos_] <= '7';
                 ++k) {
              v = v * 8 + (text_[pos_++] - '0');
            }
            if (v > 0xff) failAt(pos_ - 4, "octal escape above \\377");
            out += static_cast<char>(v);
            break;
          }
          failAt(pos_ - 2, "unknown escape \\" +
                               std::string(utf8CharAt(text_, pos_ - 1)));
      }
    }
    if (pos_ >= text_.size()) failAt(start, "unterminated string literal");
    ++pos_;
    return out;
  }

  // An int or a float literal (1, -3, 1.5, 1., 1e-05, inf, -inf, nan).
  std::variant<int64_t, double> parseNumber() {
    skipSpace();
    size_t start = pos_;
    bool negative = pos_ < text_.size() && text_[pos_] == '-';
    if (negative) ++pos_;
    std::string_view id = peekIdentAt(pos_);
    if (id == "inf" || id == "nan") {
      pos_ += id.size();
      double v = id == "inf" ? std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::quiet_NaN();
      return negative ? -v : v;
    }
    bool is_float = false;
    size_t p = pos_;
    while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    if (p == pos_) {
      pos_ = start;
      fail("a number");
    }
    if (p < text_.size() && text_[p] == '.') {
      is_float = true;
      ++p;
      while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      is_float = true;
      ++p;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      size_t digits = p;
      while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
      if (p == digits) {
        pos_ = p;
        fail("digits of an exponent");
      }
    }
    pos_ = p;
    std::string s(text_.substr(start, p - start));
    errno = 0;
    if (is_float) return std::strtod(s.c_str(), nullptr);
    long long v = std::strtoll(s.c_str(), nullptr, 10);
    if (errno == ERANGE) failAt(start, "integer " + s + " does not fit in 64 bits");
    return static_cast<int64_t>(v);
  }

  std::string_view peekIdentAt(size_t p) const {
    size_t end = p;
    while (end < text_.size() && isIdentChar(text_[end])) ++end;
    return text_.substr(p, end - p);
  }

  AttributeValue parseAttributeValue(const Type* out_type) {
    skipSpace();
    size_t at = pos_;
    if (pos_ >= text_.size()) fail("an attribute value");
    char c = text_[pos_];
    if (c == '"' || c == '\'') return parseStringLiteral();
    if (c == '(') return parseTupleConstant();
    // An empty list constant as torch prints it.
    if (peekIdent() == "annotate") {
      pos_ += 8;
      expect('(');
      expectWord("List");
      expect('[');
      skipSpace();
      const size_t type_at = pos_;
      const std::string_view element = peekIdent();
      if (element != "int" && element != "float") {
        failAt(type_at, "expected int or float as the element type of an "
                        "empty list constant, annotate(List[int], [])");
      }
      pos_ += element.size();
      expect(']');
      expect(',');
      expect('[');
      expect(']');
      expect(')');
      if (element == "int") return std::vector<int64_t>{};
      return std::vector<double>{};
    }
    if (c == '<') {
      failAt(at, "a tensor constant printed as <Tensor> has lost its "
                 "contents and cannot be read back; only 0-dim tensors "
                 "({value}) can");
    }
    if (c == '{') {
      ++pos_;
      std::variant<int64_t, double> v = parseNumber();
      expect('}');
      std::optional<ScalarType> dtype;
      if (out_type != nullptr && out_type->refinement() != nullptr) {
        dtype = out_type->refinement()->dtype;
      }
      Scalar s = std::holds_alternative<int64_t>(v)
                     ? Scalar(std::get<int64_t>(v))
                     : Scalar(std::get<double>(v));
      if (!dtype) {
        dtype = std::holds_alternative<int64_t>(v) ? ScalarType::Long
                                                   : ScalarType::Double;
      }
      try {
        return full({}, s, TensorOptions().dtype(*dtype));
      } catch (const Error& e) {
        failAt(at, "cannot make a " + std::string(toString(*dtype)) +
                       " tensor constant: " + e.message());
      }
    }
    if (c == '[') {
      ++pos_;
      std::vector<int64_t> ints;
      std::vector<double> doubles;
      bool any_double = false;
      if (!peek(']')) {
        do {
          auto v = parseNumber();
          if (std::holds_alternative<double>(v)) any_double = true;
          ints.push_back(std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : 0);
          doubles.push_back(std::holds_alternative<int64_t>(v)
                                ? static_cast<double>(std::get<int64_t>(v))
                                : std::get<double>(v));
        } while (accept(','));
      }
      expect(']');
      if (any_double) return doubles;
      return ints;
    }
    auto v = parseNumber();
    if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
    return std::get<double>(v);
  }

  // A tuple constant: '(' element {',' element} [','] ')' where an element
  // is a number, a string, True, False, None or a tuple.
  IValue parseTupleConstant() {
    skipSpace();
    size_t at = pos_;
    struct Nesting {
      int& depth;
      ~Nesting() { --depth; }
    } nesting{++type_nesting_};
    if (type_nesting_ > SchemaType::kMaxNesting) {
      failAt(at, "tuple constants nested more than " +
                     std::to_string(SchemaType::kMaxNesting) + " deep");
    }
    expect('(');
    std::vector<IValue> elements;
    while (!peek(')')) {
      skipSpace();
      char c = pos_ < text_.size() ? text_[pos_] : '\0';
      std::string_view id = peekIdent();
      if (c == '(') {
        elements.push_back(parseTupleConstant());
      } else if (c == '"' || c == '\'') {
        elements.push_back(IValue(parseStringLiteral()));
      } else if (id == "True" || id == "False") {
        pos_ += id.size();
        elements.push_back(IValue(id == "True"));
      } else if (id == "None") {
        pos_ += id.size();
        elements.emplace_back();
      } else {
        auto v = parseNumber();
        if (std::holds_alternative<int64_t>(v)) {
          elements.push_back(IValue(std::get<int64_t>(v)));
        } else {
          elements.push_back(IValue(std::get<double>(v)));
        }
      }
      if (!accept(',')) break;
    }
    expect(')');
    return IValue::makeTuple(std::move(elements));
  }

  // The attribute "value" of a prim::Constant must agree with its type.
  void checkConstant(const Node* n, size_t at) {
    if (n->outputs().size() != 1) {
      failAt(at, "prim::Constant has exactly one output");
    }
    const Type& t = n->output()->type();
    const Kind k = t.kind();
    if (t.isFunction()) {
      if (n->hasAttribute("value") || !n->hasAttribute("name") ||
          !std::holds_alternative<std::string>(n->attribute("name"))) {
        failAt(at, "a Function constant names its function and holds no "
                   "value: %f : Function = prim::Constant[name=\"f\"]()");
      }
      return;
    }
    if (!n->hasAttribute("value")) {
      if (k != Kind::None && k != Kind::Optional) {
        failAt(at, "prim::Constant without [value=...] is None, so its type "
                   "must be NoneType, not " + t.toString());
      }
      return;
    }
    const AttributeValue& a = n->attribute("value");
    bool ok = false;
    switch (k) {
      case Kind::Int: ok = std::holds_alternative<int64_t>(a); break;
      case Kind::Bool:
        ok = std::holds_alternative<int64_t>(a) &&
             (std::get<int64_t>(a) == 0 || std::get<int64_t>(a) == 1);
        break;
      case Kind::Float:
        ok = std::holds_alternative<double>(a) || std::holds_alternative<int64_t>(a);
        break;
      case Kind::Str: ok = std::holds_alternative<std::string>(a); break;
      case Kind::Device:
        ok = std::holds_alternative<std::string>(a);
        if (ok) {
          try {
            Device d(std::get<std::string>(a));
            (void)d;
          } catch (const Error& e) {
            failAt(at, "invalid Device constant: " + e.message());
          }
        }
        break;
      case Kind::Tensor: ok = std::holds_alternative<Tensor>(a); break;
      case Kind::Tuple:
        if (const auto* iv = std::get_if<IValue>(&a)) {
          std::optional<Type> vt = tupleConstantType(*iv);
          ok = vt && matchScore(*vt->schemaType(), *t.schemaType()) >= 0;
        }
        break;
      case Kind::List: {
        Kind e = t.schemaType()->elementType()->kind();
        ok = (e == Kind::Int && std::holds_alternative<std::vector<int64_t>>(a)) ||
             (e == Kind::Float && (std::holds_alternative<std::vector<double>>(a) ||
                                   std::holds_alternative<std::vector<int64_t>>(a)));
        break;
      }
      default: break;
    }
    if (!ok) {
      failAt(at, "the value of this prim::Constant does not fit its type " +
                     t.toString());
    }
    // Keep a float constant written as an integer a double.
    if (k == Kind::Float && std::holds_alternative<int64_t>(a)) {
      const_cast<Node*>(n)->setAttribute(
          "value", static_cast<double>(std::get<int64_t>(a)));
    }
    if (k == Kind::List && t.schemaType()->elementType()->kind() == Kind::Float &&
        std::holds_alternative<std::vector<int64_t>>(a)) {
      const auto& is = std::get<std::vector<int64_t>>(a);
      const_cast<Node*>(n)->setAttribute("value",
                                         std::vector<double>(is.begin(), is.end()));
    }
  }

  // ---- Nodes

  void parseNodes(Block* b) {
    for (;;) {
      skipSpace();
      if (pos_ >= text_.size()) fail("a node, 'return' or '->'");
      char c = text_[pos_];
      if (c == '%' || c == '=') {
        parseNode(b);
      } else {
        return;
      }
    }
  }

  // The helpers below keep their locals out of parseNode's frame: parseNode
  // recurses once per nested block (kMaxBlockNesting deep), so its frame
  // must stay small (ASan's frames are larger still).

  [[gnu::noinline]] static bool isSubgraphForkKind(const std::string& kind) {
    return kind.size() > 11 && kind.compare(0, 11, "prim::fork_") == 0 &&
           std::all_of(kind.begin() + 11, kind.end(), [](char c) {
             return std::isdigit(static_cast<unsigned char>(c));
           });
  }

  [[gnu::noinline]] void registerSubgraphFork(const std::string& name,
                                              Node* n, size_t at) {
    if (!pending_subgraphs_.emplace(name, n).second) {
      failAt(at, name + " is used twice; number the forks prim::fork_0, "
                        "prim::fork_1, ...");
    }
  }

  [[gnu::noinline]] [[noreturn]] void failSubgraphForkShape(const Node* n,
                                                            size_t at) {
    std::string name = "prim::fork_N";
    for (const auto& [k, v] : pending_subgraphs_) {
      if (v == n) name = k;
    }
    failAt(at, name + " has one output (a Future) and no blocks: its body "
                      "is the subgraph 'with " + name +
                      " = graph(...)' after the graph");
  }

  // '[' name=value {',' name=value} ']' after a node's kind (the '[' read).
  [[gnu::noinline]] void parseAttributes(Node* n, const Type* first_type) {
    ++pos_;
    do {
      std::string name = parseIdent("an attribute name");
      expect('=');
      if (name == "types") {
        // prim::isinstance[types=[int, float]]
        expect('[');
        std::vector<Type> types;
        do {
          types.push_back(parseType());
        } while (accept(','));
        expect(']');
        n->setAttribute(name, std::move(types));
        continue;
      }
      n->setAttribute(name, parseAttributeValue(first_type));
    } while (accept(','));
    expect(']');
  }

  void parseNode(Block* b) {
    // Outputs.
    struct Out {
      std::string name;
      Type type;
      size_t at;
    };
    std::vector<Out> outs;
    if (!peek('=')) {
      do {
        skipSpace();
        size_t at = pos_;
        std::string name = parseValueName();
        expect(':');
        outs.push_back({name, parseType(), at});
      } while (accept(','));
    }
    expect('=');
    // Kind.
    skipSpace();
    size_t kind_at = pos_;
    std::string ns = parseIdent("an operator name such as aten::add");
    if (text_.substr(pos_, 2) != "::") fail("'::' after the namespace '" + ns + "'");
    pos_ += 2;
    std::string kind = ns + "::";
    size_t name_at = pos_;
    if (!(pos_ < text_.size() && isIdentStart(text_[pos_]))) {
      fail("an operator name after '" + kind + "'");
    }
    kind += parseIdent("an operator name");
    // torch prints a fork whose body is a subgraph as prim::fork_N, the
    // subgraph after the graph as `with prim::fork_N = graph(...)`.
    const bool subgraph_fork = isSubgraphForkKind(kind);
    std::optional<std::string> overload;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!(pos_ < text_.size() && isIdentStart(text_[pos_]))) {
        fail("an overload name after '.'");
      }
      overload = parseIdent("an overload name");
    }
    (void)name_at;
    Node* n = graph_->create(
        subgraph_fork ? std::string(prim::kFork) : kind, {}, 0);
    if (subgraph_fork) registerSubgraphFork(kind, n, kind_at);
    // Insert first so that an error below leaves no floating node behind
    // (the whole graph is dropped anyway).
    b->appendNode(n);
    for (const Out& o : outs) n->addOutput(o.type);
    const Type* first_type = outs.empty() ? nullptr : &outs[0].type;
    // Attributes.
    if (pos_ < text_.size() && text_[pos_] == '[') parseAttributes(n, first_type);
    // Inputs.
    expect('(');
    for (Value* v : parseRefs()) n->addInput(v);
    expect(')');
    // The tracer's module scope: ", scope: __module.l1" (to the comment or
    // the end of the line).
    if (text_.substr(pos_, 9) == ", scope: ") {
      size_t begin = pos_ + 9;
      size_t end = begin;
      while (end < text_.size() && text_[end] != '\n' && text_[end] != '#') {
        ++end;
      }
      size_t trimmed = end;
      while (trimmed > begin &&
             (text_[trimmed - 1] == ' ' || text_[trimmed - 1] == '\r')) {
        --trimmed;
      }
      if (trimmed == begin) {
        failAt(begin, "expected a scope name after 'scope:'");
      }
      n->setScope(std::string(text_.substr(begin, trimmed - begin)));
      pos_ = trimmed;
    }
    // Source location: a comment on the same line.
    size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p < text_.size() && text_[p] == '#') {
      ++p;
      while (p < text_.size() && text_[p] == ' ') ++p;
      size_t end = text_.find('\n', p);
      if (end == std::string_view::npos) end = text_.size();
      size_t trimmed = end;
      while (trimmed > p && (text_[trimmed - 1] == ' ' || text_[trimmed - 1] == '\r')) --trimmed;
      n->setSourceLocation(std::string(text_.substr(p, trimmed - p)));
      pos_ = end;
    }
    if (kind == prim::kConstant) checkConstant(n, kind_at);
    // Blocks.
    for (size_t index = 0;; ++index) {
      std::string_view id = peekIdent();
      if (id.size() < 6 || id.substr(0, 5) != "block" ||
          !std::isdigit(static_cast<unsigned char>(id[5]))) {
        break;
      }
      size_t at = pos_;
      pos_ += id.size();
      if (id.substr(5) != std::to_string(index)) {
        failAt(at, "expected block" + std::to_string(index) + " but found " +
                       std::string(id));
      }
      if (block_nesting_ >= kMaxBlockNesting) {
        failAt(at, "blocks nested more than " +
                       std::to_string(kMaxBlockNesting) +
                       " deep; flatten the control flow");
      }
      Block* sub = n->addBlock();
      ++block_nesting_;
      scopes_.emplace_back();
      expect('(');
      parseParams(sub);
      expect(')');
      expect(':');
      parseNodes(sub);
      if (!peekArrow()) fail("a node or '-> (...)' ending the block");
      pos_ += 2;
      expect('(');
      for (Value* v : parseRefs()) sub->registerOutput(v);
      expect(')');
      for (const std::string& name : scopes_.back()) visible_.erase(name);
      scopes_.pop_back();
      --block_nesting_;
    }
    // Outputs become visible after the node (and its blocks).
    for (size_t i = 0; i < outs.size(); ++i) {
      declare(n->outputs()[i], outs[i].name, outs[i].at);
    }
    if (!subgraph_fork) {
      checkStructure(n, kind_at);
    } else if (!n->blocks().empty() || n->outputs().size() != 1) {
      failSubgraphForkShape(n, kind_at);
    }
    resolve(n, overload, kind_at);
  }

  void checkStructure(const Node* n, size_t at) {
    if (n->is(prim::kIf)) {
      if (n->inputs().size() != 1 || n->blocks().size() != 2) {
        failAt(at, "prim::If takes one bool input and two blocks (block0: "
                   "then, block1: else)");
      }
      for (const Block* blk : n->blocks()) {
        if (!blk->inputs().empty() || blk->outputs().size() != n->outputs().size()) {
          failAt(at, "each prim::If block takes no inputs and returns " +
                         std::to_string(n->outputs().size()) +
                         " values, one per output of the node");
        }
      }
    } else if (n->is(prim::kLoop)) {
      if (n->inputs().size() < 2 || n->blocks().size() != 1) {
        failAt(at, "prim::Loop takes (max_trip_count, start_condition, "
                   "carried...) and one block");
      }
      const size_t carried = n->inputs().size() - 2;
      const Block* blk = n->blocks()[0];
      if (n->outputs().size() != carried || blk->inputs().size() != carried + 1 ||
          blk->outputs().size() != carried + 1) {
        failAt(at, "prim::Loop with " + std::to_string(carried) +
                       " carried values needs " + std::to_string(carried) +
                       " outputs and a block (%i, carried...) -> (cond, "
                       "carried...)");
      }
    } else if (n->is(prim::kFork)) {
      if (n->blocks().size() != 1 || n->outputs().size() != 1 ||
          n->blocks()[0]->inputs().size() != n->inputs().size() ||
          n->blocks()[0]->outputs().size() != 1) {
        failAt(at, "prim::fork takes inputs, has one output (a Future) and "
                   "one block with one parameter per input returning one "
                   "value: %f : Future[Tensor] = prim::fork(%x) block0(%a : "
                   "Tensor): ... -> (%r)");
      }
    } else if (!n->blocks().empty()) {
      failAt(at, n->kind() + " takes no blocks");
    } else if (n->is(prim::kWait) &&
               (n->inputs().size() != 1 || n->outputs().size() != 1)) {
      failAt(at, "aten::wait takes one Future and has one output");
    }
  }

  void resolve(Node* n, const std::optional<std::string>& overload, size_t at) {
    if (isInterpreterPrim(n->kind())) {
      if (overload) failAt(at, n->kind() + " has no overloads");
      return;
    }
    Resolution r = findOperator(
        n, overload ? std::optional<std::string_view>(*overload) : std::nullopt);
    if (r.op) {
      n->setOp(*r.op, overload.has_value());
      return;
    }
    if (options_.allow_unresolved) return;
    failAt(at, r.error);
  }

  std::string_view text_;
  const ParseOptions& options_;
  std::unique_ptr<Graph> graph_;
  size_t pos_ = 0;
  std::unordered_map<std::string, Value*> visible_;
  std::unordered_set<std::string> defined_;
  std::vector<std::vector<std::string>> scopes_{1};
  int type_nesting_ = 0;       // parseType calls open
  size_t subgraph_depth_ = 0;  // fork subgraphs this parser is nested in
  // prim::fork_N nodes waiting for their `with prim::fork_N = graph(...)`.
  std::map<std::string, Node*> pending_subgraphs_;
  size_t block_nesting_ = 0;   // blocks open
};

}  // namespace

std::unique_ptr<Graph> parseIR(std::string_view text,
                               const ParseOptions& options) {
  return Parser(text, options).parse();
}

}  // namespace jit
}  // namespace turnout

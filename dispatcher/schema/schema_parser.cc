#include "dispatcher/schema/schema_parser.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"

// A hand-written recursive-descent parser over a string_view. Tokens are
// views into the input and are lexed on demand, one at a time; the only
// allocations are the strings and vectors the FunctionSchema keeps, and
// common types come from SchemaType's singletons. Errors throw at once with
// the offending column; nothing throws for control flow.

namespace turnout {
namespace {

using TypeKind = SchemaType::Kind;

// Bounds a sized list such as int[2], so that a default such as `int[N] x=0`
// cannot ask for a huge list. PyTorch's largest is 6.
constexpr int32_t kMaxListSize = 1024;

// The longest text the parser reads (1 MiB). torch 1.13 reads `int` and
// 100,000 `[]` (200 KB), so this does; PyTorch's longest schema is under
// 1 KB.
constexpr size_t kMaxSchemaBytes = size_t{1} << 20;

// How deep parenthesised types (Dict, Future, RRef, tuples), alias
// annotations inside lists, and list literals in defaults may nest: the
// parser recurses on each. List and Optional suffixes do not count.
constexpr int kMaxNesting = SchemaType::kMaxNesting;

enum class Tok : uint8_t {
  End,
  Ident,
  Number,
  String,
  Arrow,        // ->
  Ellipsis,     // ...
  DoubleColon,  // ::
  Punct,        // one of ( ) [ ] , ? ! * | = . : - +
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;  // A view into the parsed text.
  size_t pos = 0;         // Offset of the first character.

  size_t end() const { return pos + text.size(); }
  bool is(char c) const { return kind == Tok::Punct && text[0] == c; }
  bool isIdent(std::string_view s) const {
    return kind == Tok::Ident && text == s;
  }
};

// Character classes, looked up in one table: the lexer runs on every
// registration.
enum CharClass : uint8_t {
  kSpace = 1,
  kDigit = 2,
  kIdentStart = 4,  // Letters and '_'.
  kIdentChar = 8,   // Letters, digits and '_'.
  kPunct = 16,      // ( ) [ ] , ? ! * | = . : - +
};

struct CharTable {
  uint8_t bits[256] = {};
  constexpr CharTable() {
    for (char c : {' ', '\t', '\n', '\r', '\f', '\v'})
      bits[uint8_t(c)] = kSpace;
    for (int c = '0'; c <= '9'; ++c) bits[c] = kDigit | kIdentChar;
    for (int c = 'a'; c <= 'z'; ++c) bits[c] = kIdentStart | kIdentChar;
    for (int c = 'A'; c <= 'Z'; ++c) bits[c] = kIdentStart | kIdentChar;
    bits[uint8_t('_')] = kIdentStart | kIdentChar;
    for (char c : {'(', ')', '[', ']', ',', '?', '!', '*', '|', '=', '.', ':',
                   '-', '+'}) {
      bits[uint8_t(c)] = kPunct;
    }
  }
};
constexpr CharTable kChars;

bool hasClass(char c, CharClass k) {
  return (kChars.bits[static_cast<uint8_t>(c)] & k) != 0;
}
bool isDigit(char c) { return hasClass(c, kDigit); }
bool isLower(char c) { return c >= 'a' && c <= 'z'; }
bool isIdentStart(char c) { return hasClass(c, kIdentStart); }
bool isIdentChar(char c) { return hasClass(c, kIdentChar); }
bool isSpace(char c) { return hasClass(c, kSpace); }
char toLower(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

// The names PyTorch's parser accepts as integer defaults, with its values
// (at::kFloat, at::kComplexFloat, at::kLong, at::kStrided, at::Reduction::Mean,
// c10::MemoryFormat::Contiguous).
struct EnumName {
  std::string_view name;
  int64_t value;
};
constexpr EnumName kEnumNames[] = {
    {"float", 6},   {"complex", 9}, {"long", 4},
    {"strided", 0}, {"Mean", 1},    {"contiguous_format", 0},
};

// Lowercase names that would otherwise be type variables but are almost
// certainly a mistake, with the fix. Compared case-insensitively.
struct TypeMistake {
  std::string_view name;
  const char* fix;
};
constexpr TypeMistake kTypeMistakes[] = {
    {"double", "use 'float' (a C++ double)"},
    {"int64_t", "use 'int' (or 'SymInt' for a symbolic size)"},
    {"int32_t", "use 'int'"},
    {"long", "use 'int'"},
    {"integer", "use 'int'"},
    {"string", "use 'str'"},
    {"boolean", "use 'bool'"},
    {"tensor", "use 'Tensor'"},
    {"scalar", "use 'Scalar'"},
};

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (toLower(a[i]) != toLower(b[i])) return false;
  }
  return true;
}

// Case-insensitive Levenshtein distance, for "did you mean" hints.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      size_t cost = toLower(a[i - 1]) == toLower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + cost});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string unknownTypeMessage(std::string_view name) {
  std::string message = "unknown type '";
  message.append(name).append("'");
  for (const TypeMistake& m : kTypeMistakes) {
    if (equalsIgnoringCase(name, m.name)) {
      return message.append("; ").append(m.fix);
    }
  }
  static constexpr std::string_view kComposite[] = {"Dict", "Future", "RRef"};
  std::string best;
  // A typo or two, fewer for short names: "Tensr" -> "Tensor", not
  // "Blob" -> "bool".
  size_t best_distance = (name.size() >= 6 ? 2 : 1) + 1;
  auto consider = [&](std::string_view candidate) {
    size_t d = editDistance(name, candidate);
    if (d < best_distance) {
      best.assign(candidate);
      best_distance = d;
    }
  };
  for (size_t k = 0; k < static_cast<size_t>(TypeKind::Var); ++k) {
    consider(SchemaType::get(static_cast<TypeKind>(k))->toString());
  }
  for (std::string_view c : kComposite) consider(c);
  if (!best.empty()) {
    message.append("; did you mean '").append(best).append("'?");
  }
  return message;
}

enum class Mode { Schema, SchemaOrName };

class Parser {
 public:
  Parser(std::string_view text, const char* what) : text_(text), what_(what) {
    if (text_.size() > kMaxSchemaBytes) {
      // No excerpt: the line would be as long as the text.
      throw Error(ErrorKind::InvalidArgument,
                  std::string("invalid ") + what_ + ": the text is " +
                      std::to_string(text_.size()) +
                      " bytes long, over the limit of " +
                      std::to_string(kMaxSchemaBytes) +
                      " bytes (at byte " + std::to_string(kMaxSchemaBytes) +
                      "); it begins '" +
                      std::string(text_.substr(0, 40)) + "...'");
    }
    cur_ = lexAt(0);
  }

  OperatorName parseNameOnly() {
    OperatorName name = parseOperatorName();
    if (cur_.kind != Tok::End) {
      fail(cur_.pos, "expected the end of the name but found " + found());
    }
    return name;
  }

  std::variant<OperatorName, FunctionSchema> parseDeclaration(Mode mode) {
    OperatorName name = parseOperatorName();
    if (!cur_.is('(')) {
      if (mode == Mode::SchemaOrName && cur_.kind == Tok::End) return name;
      fail(cur_.pos, std::string(mode == Mode::SchemaOrName
                                     ? "expected '(' or the end of the name"
                                     : "expected '('") +
                         " but found " + found());
    }
    next();  // (

    std::vector<Argument> arguments;
    arguments.reserve(estimateArgumentCount());
    bool kwarg_only = false;
    bool is_vararg = false;
    bool seen_default = false;
    size_t first_default_pos = 0;
    if (!cur_.is(')')) {
      while (true) {
        if (is_vararg) fail(cur_.pos, "'...' must be the last argument");
        if (cur_.is('*')) {
          if (kwarg_only) {
            fail(cur_.pos,
                 "'*' appears twice; the arguments after the first are "
                 "already keyword-only");
          }
          next();
          kwarg_only = true;
        } else if (cur_.kind == Tok::Ellipsis) {
          next();
          is_vararg = true;
        } else {
          size_t argument_pos = cur_.pos;
          const Argument& argument =
              parseArgument(arguments, /*is_return=*/false, kwarg_only);
          if (argument.default_value()) {
            if (!seen_default) first_default_pos = default_pos_;
            seen_default = true;
          } else if (seen_default && !kwarg_only &&
                     argument.type()->kind() != TypeKind::List) {
            // c10's rule, lists excepted for backward compatibility.
            fail(argument_pos, "argument '" + argument.name() +
                                   "' has no default but follows one that "
                                   "has; give it a default or make it "
                                   "keyword-only (after '*')");
          }
        }
        if (cur_.is(',')) {
          next();
          continue;
        }
        if (cur_.is(')')) break;
        fail(cur_.pos, "expected ',' or ')' but found " + found());
      }
    }
    next();  // )
    if (is_vararg && seen_default) {
      fail(first_default_pos,
           "a schema with '...' arguments cannot have default values");
    }

    if (cur_.kind != Tok::Arrow) {
      fail(cur_.pos, "expected '->' but found " + found());
    }
    next();
    std::vector<Argument> returns;
    bool is_varret = false;
    if (cur_.kind == Tok::Ellipsis) {
      next();
      is_varret = true;
    } else if (cur_.is('(')) {
      next();
      if (!cur_.is(')')) {
        while (true) {
          if (is_varret) fail(cur_.pos, "'...' must be the last return");
          if (cur_.kind == Tok::Ellipsis) {
            next();
            is_varret = true;
          } else {
            parseArgument(returns, /*is_return=*/true, false);
          }
          if (cur_.is(',')) {
            next();
            continue;
          }
          if (cur_.is(')')) break;
          fail(cur_.pos, "expected ',' or ')' but found " + found());
        }
      }
      next();  // )
    } else {
      returns.reserve(1);
      parseArgument(returns, /*is_return=*/true, false);
    }
    if (cur_.kind != Tok::End) {
      fail(cur_.pos, "expected the end of the schema but found " + found());
    }
    return FunctionSchema(std::move(name), std::move(arguments),
                          std::move(returns), is_vararg, is_varret);
  }

 private:
  struct TypeAndAlias {
    SchemaTypePtr type;
    std::optional<AliasInfo> alias;
  };

  // Lexing.

  Token lexAt(size_t pos) const {
    const size_t size = text_.size();
    const char* data = text_.data();
    while (pos < size && isSpace(data[pos])) ++pos;
    Token t;
    t.pos = pos;
    if (pos == size) return t;  // End.
    const char c = data[pos];
    size_t end = pos + 1;
    // Identifiers and one-character punctuation are nearly every token.
    if (isIdentStart(c)) {
      while (end < size && isIdentChar(data[end])) ++end;
      t.kind = Tok::Ident;
    } else if (hasClass(c, kPunct)) {
      char c1 = end < size ? data[end] : '\0';
      if (c == '-' && c1 == '>') {
        end = pos + 2;
        t.kind = Tok::Arrow;
      } else if (c == ':' && c1 == ':') {
        end = pos + 2;
        t.kind = Tok::DoubleColon;
      } else if (c == '.' && c1 == '.' && pos + 2 < size &&
                 data[pos + 2] == '.') {
        end = pos + 3;
        t.kind = Tok::Ellipsis;
      } else if (c == '.' && isDigit(c1)) {
        end = lexNumber(pos);
        t.kind = Tok::Number;
      } else {
        t.kind = Tok::Punct;
      }
    } else if (isDigit(c)) {
      end = lexNumber(pos);
      t.kind = Tok::Number;
    } else if (c == '"' || c == '\'') {
      while (end < size && data[end] != c) end += data[end] == '\\' ? 2 : 1;
      if (end >= size) fail(pos, "unterminated string literal");
      ++end;
      t.kind = Tok::String;
    } else {
      fail(pos, "unexpected character '" + std::string(utf8CharAt(text_, pos)) +
                    "'");
    }
    t.text = std::string_view(data + pos, end - pos);
    return t;
  }

  // The end of the number starting at `pos`: digits, an optional fraction,
  // an optional exponent, and an optional 'j' for an imaginary number.
  size_t lexNumber(size_t pos) const {
    auto at = [&](size_t i) { return i < text_.size() ? text_[i] : '\0'; };
    size_t end = pos;
    while (isDigit(at(end))) ++end;
    if (at(end) == '.' && at(end + 1) != '.') {
      ++end;
      while (isDigit(at(end))) ++end;
    }
    if (at(end) == 'e' || at(end) == 'E') {
      size_t e = end + 1;
      if (at(e) == '+' || at(e) == '-') ++e;
      if (isDigit(at(e))) {
        end = e;
        while (isDigit(at(end))) ++end;
      }
    }
    if (at(end) == 'j') ++end;
    return end;
  }

  Token next() {
    Token t = cur_;
    prev_end_ = t.end();
    cur_ = lexAt(prev_end_);
    return t;
  }

  void expect(char c) {
    if (!cur_.is(c)) {
      fail(cur_.pos, std::string("expected '") + c + "' but found " + found());
    }
    next();
  }

  std::string_view expectIdent(const char* what) {
    if (cur_.kind != Tok::Ident) {
      fail(cur_.pos, std::string("expected ") + what + " but found " + found());
    }
    return next().text;
  }

  // How the current token reads in a message.
  std::string found() const {
    if (cur_.kind == Tok::End) return std::string("the end of the ") + what_;
    std::string out;
    if (cur_.kind != Tok::String) out += '\'';
    out += cur_.text;
    if (cur_.kind != Tok::String) out += '\'';
    return out;
  }

  [[noreturn]] void fail(size_t pos, const std::string& message) const {
    std::string line(text_);
    for (char& ch : line) {
      if (isSpace(ch)) ch = ' ';
    }
    std::string out = "invalid ";
    out.append(what_).append(": ").append(message).append("\n  ");
    // The caret's column counts characters, not bytes.
    out.append(line).append("\n  ");
    out.append(utf8Length(text_.substr(0, std::min(pos, text_.size()))), ' ');
    out.append("^");
    throw Error(ErrorKind::InvalidArgument, std::move(out));
  }

  // An upper bound on the number of arguments (commas also separate list
  // elements and tuple types), so that the vector allocates once.
  size_t estimateArgumentCount() const {
    size_t count = 1;
    const char* p = text_.data();
    const char* end = p + text_.size();
    while ((p = static_cast<const char*>(std::memchr(p, ',', end - p)))) {
      ++count;
      ++p;
    }
    return std::min<size_t>(count, 64);
  }

  // Names.

  OperatorName parseOperatorName() {
    OperatorName op;
    std::string_view first = expectIdent("an operator name");
    if (cur_.kind == Tok::DoubleColon) {
      next();
      std::string_view second = expectIdent("a name after '::'");
      op.name.reserve(first.size() + 2 + second.size());
      op.name.append(first).append("::").append(second);
    } else {
      op.name.assign(first);
    }
    if (cur_.is('.')) {
      next();
      op.overload_name.assign(expectIdent("an overload name after '.'"));
    }
    return op;
  }

  // Arguments and types.

  // Parses one argument or return and appends it to `out`.
  const Argument& parseArgument(std::vector<Argument>& out, bool is_return,
                                bool kwarg_only) {
    TypeAndAlias t = parseType();
    std::optional<int32_t> N;
    if (cur_.is('[')) {
      // parseType() took every "[]"; this is a size, as in int[2].
      next();
      N = parseListSize();
      expect(']');
      t.type = SchemaType::list(std::move(t.type));
      t.alias = wrapInContainer(std::move(t.alias), parseAliasAnnotation());
      if (cur_.is('?')) {
        next();
        t.type = SchemaType::optional(std::move(t.type));
      }
    }
    std::string name;
    if (is_return) {
      if (cur_.kind == Tok::Ident) name.assign(next().text);
    } else {
      name.assign(expectIdent("an argument name"));
    }
    std::optional<DefaultValue> default_value;
    if (cur_.is('=')) {
      if (is_return) fail(cur_.pos, "a return cannot have a default value");
      next();
      default_pos_ = cur_.pos;
      default_value = parseValue(*t.type, N, /*coerce=*/true);
    }
    return out.emplace_back(std::move(name), std::move(t.type), N,
                            std::move(default_value), kwarg_only,
                            std::move(t.alias));
  }

  int32_t parseListSize() {
    const Token t = cur_;
    int64_t n = -1;
    if (t.kind == Tok::Number) {
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), n);
      if (r.ptr != t.text.data() + t.text.size()) n = -1;
    }
    if (n < 0 || n > kMaxListSize) {
      fail(t.pos, "expected ']' or a list size from 0 to " +
                      std::to_string(kMaxListSize) + " but found " + found());
    }
    next();
    return static_cast<int32_t>(n);
  }

  // Counts one level of a construct that recurses (a parenthesised type or
  // a list literal) for as long as it lives.
  class NestingGuard {
   public:
    NestingGuard(Parser& p, size_t pos, const char* what) : p_(p) {
      if (++p_.nesting_ > kMaxNesting) {
        p_.fail(pos, std::string(what) + " nested more than " +
                         std::to_string(kMaxNesting) +
                         " deep; flatten the type (PyTorch's schemas nest "
                         "at most 3 deep)");
      }
    }
    ~NestingGuard() { --p_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    Parser& p_;
  };

  TypeAndAlias parseType() {
    TypeAndAlias r;
    const Token t = cur_;
    std::optional<NestingGuard> guard;
    if (t.is('(') || t.isIdent("Dict") || t.isIdent("Future") ||
        t.isIdent("RRef")) {
      guard.emplace(*this, t.pos,
                    "types such as Dict(...), Future(...) and tuples");
    }
    if (t.is('(')) {
      next();
      std::vector<SchemaTypePtr> elements;
      if (!cur_.is(')')) {
        while (true) {
          elements.push_back(parseContainedType("a tuple type"));
          if (cur_.is(',')) {
            next();
            continue;
          }
          if (cur_.is(')')) break;
          fail(cur_.pos, "expected ',' or ')' but found " + found());
        }
      }
      next();  // )
      r.type = SchemaType::tuple(std::move(elements));
    } else if (t.kind == Tok::Ident) {
      next();
      if (t.text == "Tensor") {
        r.type = SchemaType::get(TypeKind::Tensor);
        r.alias = parseAliasAnnotation();
      } else if (t.text == "Dict") {
        expect('(');
        SchemaTypePtr key = parseContainedType("Dict(...)");
        expect(',');
        SchemaTypePtr value = parseContainedType("Dict(...)");
        expect(')');
        r.type = SchemaType::dict(std::move(key), std::move(value));
        r.alias = parseAliasAnnotation();
      } else if (t.text == "Future" || t.text == "RRef") {
        bool future = t.text == "Future";
        expect('(');
        SchemaTypePtr element =
            parseContainedType(future ? "Future(...)" : "RRef(...)");
        expect(')');
        r.type = future ? SchemaType::future(std::move(element))
                        : SchemaType::rref(std::move(element));
      } else if (t.text == "__torch__") {
        fail(t.pos,
             "TorchScript custom class types (__torch__.torch.classes...) "
             "are not supported");
      } else if (auto kind = detail::leafKindFromSpelling(t.text)) {
        r.type = SchemaType::get(*kind);
        r.alias = parseAliasAnnotation();
      } else if (isTypeVariable(t.text)) {
        r.type = SchemaType::var(std::string(t.text));
        r.alias = parseAliasAnnotation();
      } else {
        fail(t.pos, unknownTypeMessage(t.text));
      }
    } else {
      fail(t.pos, "expected a type but found " + found());
    }
    // The suffixes loop, however many there are; an annotated element
    // wraps its annotation once per list, and that nests.
    int annotated_lists = 0;
    while (true) {
      if (cur_.is('[') && lexAt(cur_.end()).is(']')) {
        if (r.alias && ++annotated_lists > kMaxNesting) {
          fail(cur_.pos, "an alias-annotated type in more than " +
                             std::to_string(kMaxNesting) +
                             " nested lists; annotate the outer list instead");
        }
        next();
        next();
        r.type = SchemaType::list(std::move(r.type));
        r.alias = wrapInContainer(std::move(r.alias), parseAliasAnnotation());
      } else if (cur_.is('?')) {
        next();
        r.type = SchemaType::optional(std::move(r.type));
      } else {
        break;
      }
    }
    return r;
  }

  // The type of a Dict's key or value, a tuple's element, or a Future's or
  // RRef's element: c10 drops annotations there, so they are refused.
  SchemaTypePtr parseContainedType(const char* where) {
    size_t pos = cur_.pos;
    TypeAndAlias t = parseType();
    if (t.alias) {
      fail(pos, std::string("alias annotations are not supported inside ") +
                    where + "; annotate the container, as in Dict(str, t)(a!)");
    }
    return std::move(t.type);
  }

  static bool isTypeVariable(std::string_view name) {
    if (!isLower(name[0])) return false;
    for (const TypeMistake& m : kTypeMistakes) {
      if (equalsIgnoringCase(name, m.name)) return false;
    }
    return true;
  }

  // The annotation of a list whose element has `element` (c10's rule): the
  // list's own annotation, or a fresh one that writes when the element does,
  // holding the element's.
  static std::optional<AliasInfo> wrapInContainer(
      std::optional<AliasInfo> element, std::optional<AliasInfo> container) {
    if (!element) return container;
    if (!container) {
      container.emplace();
      container->setIsWrite(element->isWrite());
    }
    container->addContainedType(std::move(*element));
    return container;
  }

  std::optional<AliasInfo> parseAliasAnnotation() {
    if (!cur_.is('(')) return std::nullopt;
    next();
    AliasInfo info;
    parseAliasSets(info, /*before=*/true);
    if (cur_.is('!')) {
      next();
      info.setIsWrite(true);
    }
    if (cur_.kind == Tok::Arrow) {
      next();
      parseAliasSets(info, /*before=*/false);
    } else {
      for (const std::string& set : info.beforeSets()) info.addAfterSet(set);
    }
    if (!cur_.is(')')) {
      fail(cur_.pos,
           "expected ')' to end the alias annotation but found " + found());
    }
    next();
    return info;
  }

  void parseAliasSets(AliasInfo& info, bool before) {
    while (true) {
      std::string set;
      if (cur_.is('*')) {
        next();
        set.assign(AliasInfo::kWildcardSet);
      } else if (cur_.kind == Tok::Ident) {
        set.assign(next().text);
      } else {
        fail(cur_.pos,
             "expected an alias set (a name such as 'a', or '*') but found " +
                 found());
      }
      if (before) {
        info.addBeforeSet(std::move(set));
      } else {
        info.addAfterSet(std::move(set));
      }
      if (!cur_.is('|')) return;
      next();
    }
  }

  // Default values.

  // The default of an argument of type `type` (`N` for a sized list). With
  // `coerce`, an integer given for a float or complex becomes one, as in
  // c10; c10 does not coerce under an optional, and neither does this.
  DefaultValue parseValue(const SchemaType& type, std::optional<int32_t> N,
                          bool coerce) {
    const SchemaType* t = &type;
    bool optional = false;
    while (t->kind() == TypeKind::Optional) {
      optional = true;
      t = t->elementType().get();
    }
    if (optional) {
      if (cur_.isIdent("None")) {
        next();
        return DefaultValue();
      }
      coerce = false;
    }
    if (t->kind() == TypeKind::List) {
      const SchemaType& element = *t->elementType();
      if (cur_.is('[')) return parseListLiteral(element);
      if (N) {
        // c10 repeats a single value: `int[2] stride=1` is [1, 1].
        DefaultValue v = parseValue(element, std::nullopt, /*coerce=*/true);
        return DefaultValue::fromList(std::vector<DefaultValue>(*N, v));
      }
      fail(cur_.pos, std::string("expected a list such as [0, 1]") +
                         (optional ? " or None" : "") + " for type '" +
                         type.toString() + "' but found " + found());
    }
    const char* expected = describeExpected(t->kind());
    if (expected == nullptr) {
      fail(cur_.pos, "an argument of type '" + type.toString() +
                         "' cannot have a default value");
    }
    size_t pos = cur_.pos;
    DefaultValue literal = parseLiteral();
    if (std::optional<DefaultValue> v =
            fit(t->kind(), std::move(literal), coerce)) {
      return std::move(*v);
    }
    std::string message = std::string("expected ") + expected +
                          (optional ? " or None" : "") + " for type '" +
                          type.toString() + "' but found '" +
                          std::string(text_.substr(pos, prev_end_ - pos)) + "'";
    if (literal.isNone()) {
      message += "; write '" + type.toString() + "?' to allow None";
    }
    fail(pos, message);
  }

  DefaultValue parseListLiteral(const SchemaType& element) {
    NestingGuard guard(*this, cur_.pos, "list literals");
    expect('[');
    std::vector<DefaultValue> items;
    if (!cur_.is(']')) {
      while (true) {
        items.push_back(parseValue(element, std::nullopt, /*coerce=*/true));
        if (cur_.is(',')) {
          next();
          continue;
        }
        if (cur_.is(']')) break;
        fail(cur_.pos, "expected ',' or ']' but found " + found());
      }
    }
    next();  // ]
    return DefaultValue::fromList(std::move(items));
  }

  // What a default of a type of `kind` must be, or nullptr when that type
  // takes no default.
  static const char* describeExpected(TypeKind kind) {
    switch (kind) {
      case TypeKind::Bool:
        return "True or False";
      case TypeKind::Int:
      case TypeKind::SymInt:
      case TypeKind::ScalarType:
      case TypeKind::Layout:
      case TypeKind::MemoryFormat:
        return "an integer";
      case TypeKind::Float:
      case TypeKind::Complex:
      case TypeKind::Scalar:
      case TypeKind::Number:
        return "a number";
      case TypeKind::Str:
      case TypeKind::Dimname:
      case TypeKind::Device:
        return "a string literal";
      case TypeKind::Tensor:
      case TypeKind::Generator:
      case TypeKind::None:
        return "None";
      default:
        return nullptr;
    }
  }

  // `literal` as a default of a type of `kind`, or nullopt when it does not
  // fit.
  static std::optional<DefaultValue> fit(TypeKind kind, DefaultValue literal,
                                         bool coerce) {
    using K = DefaultValue::Kind;
    const K k = literal.kind();
    switch (kind) {
      case TypeKind::Bool:
        if (k == K::Bool) return literal;
        break;
      case TypeKind::Int:
      case TypeKind::SymInt:
      case TypeKind::ScalarType:
      case TypeKind::Layout:
      case TypeKind::MemoryFormat:
        if (k == K::Int) return literal;
        break;
      case TypeKind::Float:
        if (k == K::Double) return literal;
        if (k == K::Int) {
          if (!coerce) return literal;
          return DefaultValue::fromDouble(static_cast<double>(literal.toInt()));
        }
        break;
      case TypeKind::Complex:
        if (k == K::Complex) return literal;
        if (k == K::Int || k == K::Double) {
          if (!coerce) return literal;
          double real = k == K::Int ? static_cast<double>(literal.toInt())
                                    : literal.toDouble();
          return DefaultValue::fromComplex({real, 0.0});
        }
        break;
      case TypeKind::Scalar:
      case TypeKind::Number:
        if (k == K::Int || k == K::Double || k == K::Complex || k == K::Bool) {
          return literal;
        }
        break;
      case TypeKind::Str:
      case TypeKind::Dimname:
      case TypeKind::Device:
        if (k == K::String) return literal;
        break;
      case TypeKind::Tensor:
      case TypeKind::Generator:
      case TypeKind::None:
        if (k == K::None) return literal;
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  // One literal, whatever the type: None, True, False, a number, a string,
  // or an enum name.
  DefaultValue parseLiteral() {
    const Token t = cur_;
    switch (t.kind) {
      case Tok::Ident: {
        next();
        if (t.text == "None") return DefaultValue();
        if (t.text == "True") return DefaultValue::fromBool(true);
        if (t.text == "False") return DefaultValue::fromBool(false);
        if (t.text == "inf") {
          return DefaultValue::fromDouble(
              std::numeric_limits<double>::infinity());
        }
        if (t.text == "nan") {
          return DefaultValue::fromDouble(
              std::numeric_limits<double>::quiet_NaN());
        }
        for (const EnumName& e : kEnumNames) {
          if (t.text == e.name) {
            return DefaultValue::fromEnumName(std::string(e.name), e.value);
          }
        }
        fail(t.pos, "unknown name '" + std::string(t.text) +
                        "' as a default value; the names a default may use "
                        "are None, True, False, inf, nan, float, complex, "
                        "long, strided, Mean and contiguous_format");
      }
      case Tok::String:
        next();
        return DefaultValue::fromString(decodeString(t));
      case Tok::Number:
        next();
        return parseNumber(t, /*negative=*/false);
      default:
        break;
    }
    if (t.is('-')) {
      next();
      const Token n = cur_;
      if (n.kind == Tok::Number) {
        next();
        return parseNumber(n, /*negative=*/true);
      }
      if (n.isIdent("inf") || n.isIdent("nan")) {
        next();
        return DefaultValue::fromDouble(
            n.text == "inf" ? -std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::quiet_NaN());
      }
      fail(n.pos, "expected a number after '-' but found " + found());
    }
    fail(t.pos, "expected a default value but found " + found());
  }

  DefaultValue parseNumber(const Token& t, bool negative) {
    std::string_view text = t.text;
    bool imaginary = text.back() == 'j';
    if (imaginary) text.remove_suffix(1);
    bool is_float = imaginary || text.find_first_of(".eE") != text.npos;
    if (!is_float) {
      uint64_t magnitude = 0;
      auto r =
          std::from_chars(text.data(), text.data() + text.size(), magnitude);
      const uint64_t limit =
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) +
          (negative ? 1 : 0);
      if (r.ec != std::errc() || magnitude > limit) {
        fail(t.pos, "integer " + std::string(negative ? "-" : "") +
                        std::string(t.text) + " does not fit in 64 bits");
      }
      int64_t value = negative ? static_cast<int64_t>(0 - magnitude)
                               : static_cast<int64_t>(magnitude);
      return maybeComplex(DefaultValue::fromInt(value));
    }
    double value = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), value);
    if (r.ptr != text.data() + text.size() ||
        (r.ec != std::errc() && r.ec != std::errc::result_out_of_range)) {
      fail(t.pos, "invalid number '" + std::string(t.text) + "'");
    }
    if (r.ec == std::errc::result_out_of_range) {
      // Overflow is an error; underflow reads as the nearest double.
      bool negative_exponent =
          text.find("e-") != text.npos || text.find("E-") != text.npos;
      if (!negative_exponent) {
        fail(t.pos, "number '" + std::string(t.text) + "' is out of range");
      }
    }
    if (negative) value = -value;
    if (imaginary) return DefaultValue::fromComplex({0.0, value});
    return maybeComplex(DefaultValue::fromDouble(value));
  }

  // PyTorch prints a complex as "1.+2.j": a real part, a sign and an
  // imaginary part ending in j. `real` is what was read before the sign.
  DefaultValue maybeComplex(DefaultValue real) {
    if (!(cur_.is('+') || cur_.is('-'))) return real;
    const Token imag = lexAt(cur_.end());
    if (imag.kind != Tok::Number || imag.text.back() != 'j' ||
        imag.pos != cur_.end()) {
      return real;
    }
    bool minus = cur_.is('-');
    next();
    next();
    DefaultValue i = parseNumber(imag, minus);
    double r =
        real.isInt() ? static_cast<double>(real.toInt()) : real.toDouble();
    return DefaultValue::fromComplex({r, i.toComplex().imag()});
  }

  // The value of a string literal token: quotes removed, escapes decoded.
  std::string decodeString(const Token& t) {
    std::string_view body = t.text.substr(1, t.text.size() - 2);
    std::string out;
    out.reserve(body.size());
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\') {
        out += c;
        continue;
      }
      size_t escape_pos = t.pos + 1 + i;
      char e = body[++i];
      switch (e) {
        case '\\':
        case '\'':
        case '"':
          out += e;
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case 'x': {
          int value = 0;
          for (int k = 0; k < 2; ++k) {
            char h = i + 1 < body.size() ? toLower(body[i + 1]) : '\0';
            int digit = isDigit(h)               ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                                                 : -1;
            if (digit < 0) {
              fail(escape_pos, "expected two hex digits after '\\x'");
            }
            value = value * 16 + digit;
            ++i;
          }
          out += static_cast<char>(value);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            int value = e - '0';
            for (int k = 0; k < 2 && i + 1 < body.size() &&
                            body[i + 1] >= '0' && body[i + 1] <= '7';
                 ++k) {
              value = value * 8 + (body[++i] - '0');
            }
            if (value > 0xff) fail(escape_pos, "octal escape above \\377");
            out += static_cast<char>(value);
            break;
          }
          fail(escape_pos, "unknown escape sequence '\\" +
                               std::string(utf8CharAt(body, i)) + "'");
      }
    }
    return out;
  }

  std::string_view text_;
  const char* what_;  // "schema" or "operator name", for messages.
  Token cur_;
  size_t prev_end_ = 0;     // End of the last token taken.
  size_t default_pos_ = 0;  // Where the last default value began.
  int nesting_ = 0;         // Open NestingGuards.
};

}  // namespace

FunctionSchema parseSchema(std::string_view schema) {
  return std::get<FunctionSchema>(
      Parser(schema, "schema").parseDeclaration(Mode::Schema));
}

OperatorName parseName(std::string_view name) {
  return Parser(name, "operator name").parseNameOnly();
}

std::variant<OperatorName, FunctionSchema> parseSchemaOrName(
    std::string_view text) {
  return Parser(text, "schema").parseDeclaration(Mode::SchemaOrName);
}

}  // namespace turnout

// TorchScript's str methods with torch 1.13's schemas and semantics: the
// aten:: operators that scripted code prints for s.split(), s.strip(),
// s.find(), s[i], s[a:b], ord(), chr(), ... (the list is at the bottom).
//
// torch 1.13's strings are bytes (UTF-8 as the caller encoded it), and its
// str methods work on bytes, not on code points: len("é") is 2, "é"[0] is
// the byte 0xC3, lower() and the is*() predicates know ASCII only (as
// Python's bytes methods). These kernels keep that, and keep torch's other
// quirks, each probed against torch 1.13 (tests/python/
// test_jit_str_builtins_torch.py runs every one against torch):
//   - startswith/endswith/find/rfind/count/index/rindex take (start=0,
//     end=-1), and end -1 means the end of the string (not the last byte);
//     a negative end counts from one past the end. A start past the end
//     raises (torch's std::string::substr throws) where torch raises;
//   - split() with no separator splits on the bytes
//     " \t\n\v\f\r\x1c\x1d\x1e\x85\x80\xa8\xa9\xe2" and ignores `max`;
//     rsplit()'s default separator is " ";
//   - splitlines() splits at each of "\n\v\f\r\x1c\x1d\x1e\x85\x80\xa8\xa9
//     \xe2" alone ("\r\n" gives an empty line), and keepends=True gives each
//     line break as its own element;
//   - zfill() pads with zeros before a sign too; chr(i) is the one byte
//     i % 256, and chr(0x10ffff) raises;
//   - isidentifier() is Python 2's over ASCII: a letter, then letters and
//     digits (no underscore).
// Where torch 1.13 does not return (it loops for ever, or grows a string
// until memory runs out), turnout returns Python's result or raises, and
// the kernel says which:
//   - count() with an empty substring that torch would find: Python's count
//     over torch's window (its start/end normalised as above);
//   - replace() with an empty `old` and max < 0: Python's result;
//   - rsplit() with an empty separator and max != 0: Python's ValueError;
//   - center() with a negative width: Python's result (the string);
//   - a result over kMaxResultBytes (1 GiB): an error that names the op.
// All are boxed kernels registered at CompositeExplicitAutograd, as
// script_builtins.cc's.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/core/ivalue.h"
#include "dispatcher/library.h"
#include "dispatcher/operator_handle.h"
#include "dispatcher/schema/function_schema.h"

namespace turnout {
namespace {

// The largest string a kernel builds. torch 1.13 has no limit and hangs or
// dies on a huge zfill/center/replace; turnout raises instead.
constexpr size_t kMaxResultBytes = size_t{1} << 30;

// The arguments of one call: the last `N` entries of the stack.
class Args {
 public:
  Args(const OperatorHandle& op, Stack* s, size_t n)
      : op_(&op), s_(s), base_(s->size() - n) {}
  /// The operator's name, for errors (made only when one is raised).
  std::string op() const { return toString(op_->operator_name()); }
  const std::string& str(size_t i) const { return (*s_)[base_ + i].toStringRef(); }
  int64_t integer(size_t i) const { return (*s_)[base_ + i].toInt(); }
  bool boolean(size_t i) const { return (*s_)[base_ + i].toBool(); }
  const IValue& value(size_t i) const { return (*s_)[base_ + i]; }

 private:
  const OperatorHandle* op_;
  Stack* s_;
  size_t base_;
};

void checkResultSize(uint64_t bytes, const Args& a) {
  TURNOUT_CHECK(bytes <= kMaxResultBytes, ErrorKind::InvalidArgument, a.op(),
                ": the result would be ", bytes,
                " bytes, over turnout's limit of ", kMaxResultBytes,
                " bytes for a string (torch 1.13 runs out of memory here)");
}

// A kernel over the last N stack entries, whose results replace them. A
// std::bad_alloc becomes an Error naming the operator.
template <size_t N, std::vector<IValue> (*F)(const Args&)>
void kernel(const OperatorHandle& op, Stack* s) {
  TURNOUT_INTERNAL_ASSERT(s->size() >= N, toString(op.operator_name()),
                          ": expected ", N, " arguments on the stack, found ",
                          s->size());
  std::vector<IValue> out;
  try {
    out = F(Args(op, s, N));
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::InvalidArgument,
                toString(op.operator_name()) +
                    ": out of memory building the result");
  }
  s->resize(s->size() - N);
  for (IValue& v : out) s->push_back(std::move(v));
}

std::vector<IValue> one(IValue v) {
  std::vector<IValue> out;
  out.push_back(std::move(v));
  return out;
}

IValue strList(std::vector<std::string> parts) {
  std::vector<IValue> out;
  out.reserve(parts.size());
  for (std::string& p : parts) out.emplace_back(std::move(p));
  return IValue(std::move(out));
}

// ---- Search: start/end as torch 1.13 reads them -----------------------------

// torch's window: a negative start counts from the end (at least 0); a
// negative end counts from one past the end (so -1 is the end).
std::pair<int64_t, int64_t> normalizeWindow(int64_t n, int64_t start,
                                            int64_t end) {
  if (start < 0) start = std::max<int64_t>(0, start + n);
  if (end < 0) end = std::max<int64_t>(0, end + n + 1);
  return {start, end};
}

// s[start:end] as torch 1.13 cuts it: a start past the end raises, an end
// before the start means "to the end".
std::string_view window(const std::string& s, int64_t start, int64_t end,
                        const Args& a) {
  const int64_t n = static_cast<int64_t>(s.size());
  TURNOUT_CHECK(start <= n, ErrorKind::Index, a.op(), ": start (", start,
                ") is past the end of the string (length ", n,
                "); torch 1.13 raises here too");
  std::string_view v(s);
  v.remove_prefix(static_cast<size_t>(start));
  if (end >= start) v = v.substr(0, static_cast<size_t>(end - start));
  return v;
}

// aten::startswith/endswith(str self, str substr, int start=0, int end=-1)
template <bool kEnd>
std::vector<IValue> startsOrEndsWith(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& sub = a.str(1);
  auto [start, end] = normalizeWindow(static_cast<int64_t>(s.size()),
                                      a.integer(2), a.integer(3));
  std::string_view w = window(s, start, end, a);
  bool r = false;
  if (w.size() >= sub.size()) {
    r = kEnd ? w.substr(w.size() - sub.size()) == sub
             : w.substr(0, sub.size()) == sub;
  }
  return one(IValue(r));
}

// find/rfind: the offset of the first (last) occurrence in the window, or -1.
int64_t findIn(const Args& a, bool reverse) {
  const std::string& s = a.str(0);
  const std::string& sub = a.str(1);
  auto [start, end] = normalizeWindow(static_cast<int64_t>(s.size()),
                                      a.integer(2), a.integer(3));
  // As torch: an empty window when end <= start (no check of start then).
  std::string_view w;
  if (end > start) w = window(s, start, end, a);
  const size_t r = reverse ? w.rfind(sub) : w.find(sub);
  return r == std::string_view::npos ? -1 : static_cast<int64_t>(r) + start;
}

template <bool kReverse>
std::vector<IValue> find_(const Args& a) {
  return one(IValue(findIn(a, kReverse)));
}

// aten::index.str / aten::rindex: find, raising when not found.
template <bool kReverse>
std::vector<IValue> index_(const Args& a) {
  const int64_t r = findIn(a, kReverse);
  TURNOUT_CHECK(r != -1, ErrorKind::InvalidArgument, a.op(),
                ": substring not found (ValueError)");
  return one(IValue(r));
}

// aten::count(str self, str substr, int start=0, int end=-1) -> int: torch
// counts the non-overlapping occurrences that begin before `end` (they may
// run past it).
std::vector<IValue> count_(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& sub = a.str(1);
  const int64_t n = static_cast<int64_t>(s.size());
  auto [start, end] = normalizeWindow(n, a.integer(2), a.integer(3));
  if (sub.empty()) {
    // torch 1.13 loops for ever when it finds the empty string before
    // `end` (start <= n and start < end). There turnout gives Python's
    // count of "" in s[start:end]: one more than the window's length.
    // Elsewhere torch returns 0, and so does this.
    if (start > n || start >= end) return one(IValue(int64_t{0}));
    return one(IValue(std::min(end, n) - start + 1));
  }
  if (start > n) return one(IValue(int64_t{0}));
  int64_t count = 0;
  size_t pos = static_cast<size_t>(start);
  while ((pos = s.find(sub, pos)) != std::string::npos &&
         static_cast<int64_t>(pos) < end) {
    ++count;
    pos += sub.size();
  }
  return one(IValue(count));
}

// ---- Split and join ----------------------------------------------------------

// The bytes torch 1.13's split() (no separator) splits at.
bool isSplitSpace(unsigned char c) {
  switch (c) {
    case ' ': case '\t': case '\n': case '\v': case '\f': case '\r':
    case 0x1c: case 0x1d: case 0x1e: case 0x85: case 0x80: case 0xa8:
    case 0xa9: case 0xe2:
      return true;
    default:
      return false;
  }
}

// The bytes torch 1.13's splitlines() breaks at.
bool isLineBreak(unsigned char c) {
  return c != ' ' && c != '\t' && isSplitSpace(c);
}

// aten::split.str(str self, str? separator=None, int max=-1) -> str[]
std::vector<IValue> split_(const Args& a) {
  const std::string& s = a.str(0);
  const IValue& sep_v = a.value(1);
  int64_t max = a.integer(2);
  std::vector<std::string> out;
  if (sep_v.isNone()) {
    // torch 1.13 ignores max here: every run of split bytes separates.
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && isSplitSpace(s[i])) ++i;
      if (i == s.size()) break;
      size_t j = i;
      while (j < s.size() && !isSplitSpace(s[j])) ++j;
      out.emplace_back(s, i, j - i);
      i = j;
    }
    return one(strList(std::move(out)));
  }
  const std::string& sep = sep_v.toStringRef();
  TURNOUT_CHECK(!sep.empty(), ErrorKind::InvalidArgument, a.op(),
                ": empty separator (ValueError); pass None to split at "
                "whitespace");
  size_t pos = 0;
  for (size_t at; max != 0 && (at = s.find(sep, pos)) != std::string::npos;
       --max) {
    out.emplace_back(s, pos, at - pos);
    pos = at + sep.size();
  }
  out.emplace_back(s, pos, std::string::npos);
  return one(strList(std::move(out)));
}

// aten::rsplit(str self, str separator=" ", int max=-1) -> str[]
std::vector<IValue> rsplit_(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& sep = a.str(1);
  int64_t max = a.integer(2);
  if (max == 0) return one(strList({s}));
  // torch 1.13 loops for ever on an empty separator (max != 0); turnout
  // raises Python's ValueError.
  TURNOUT_CHECK(!sep.empty(), ErrorKind::InvalidArgument, a.op(),
                ": empty separator (ValueError)");
  std::vector<std::string> out;
  size_t end = s.size();
  while (max != 0 && end >= sep.size()) {
    const size_t at = s.rfind(sep, end - sep.size());
    if (at == std::string::npos) break;
    out.emplace_back(s, at + sep.size(), end - at - sep.size());
    end = at;
    --max;
  }
  out.emplace_back(s, 0, end);
  std::reverse(out.begin(), out.end());
  return one(strList(std::move(out)));
}

// aten::splitlines(str self, bool keepends=False) -> str[]
std::vector<IValue> splitlines_(const Args& a) {
  const std::string& s = a.str(0);
  const bool keepends = a.boolean(1);
  std::vector<std::string> out;
  size_t prev = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!isLineBreak(s[i])) continue;
    out.emplace_back(s, prev, i - prev);
    if (keepends) out.emplace_back(1, s[i]);  // torch's: its own element
    prev = i + 1;
  }
  if (prev < s.size()) out.emplace_back(s, prev, std::string::npos);
  return one(strList(std::move(out)));
}

// aten::join(str self, str[] values) -> str
std::vector<IValue> join_(const Args& a) {
  const std::string& sep = a.str(0);
  const std::vector<IValue> values = a.value(1).toList();
  uint64_t size = 0;
  for (const IValue& v : values) size += v.toStringRef().size() + sep.size();
  checkResultSize(size, a);
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += sep;
    out += values[i].toStringRef();
  }
  return one(IValue(std::move(out)));
}

// aten::partition / aten::rpartition(str self, str separator)
//   -> (str, str, str): an empty separator is found at the start (the end),
// as torch's (Python raises).
template <bool kReverse>
std::vector<IValue> partition_(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& sep = a.str(1);
  const size_t at = kReverse ? s.rfind(sep) : s.find(sep);
  if (at == std::string::npos) {
    return kReverse ? std::vector<IValue>{IValue(""), IValue(""), IValue(s)}
                    : std::vector<IValue>{IValue(s), IValue(""), IValue("")};
  }
  return {IValue(s.substr(0, at)), IValue(sep),
          IValue(s.substr(at + sep.size()))};
}

// aten::list(str t) -> str[]: one string per byte.
std::vector<IValue> list_(const Args& a) {
  std::vector<std::string> out;
  for (char c : a.str(0)) out.emplace_back(1, c);
  return one(strList(std::move(out)));
}

// ---- Strip, replace, pad -------------------------------------------------------

// aten::strip/lstrip/rstrip(str self, str chars=" \n\t\f\v") -> str
template <bool kLeft, bool kRight>
std::vector<IValue> strip_(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& chars = a.str(1);
  size_t begin = 0, end = s.size();
  if (kLeft) {
    begin = s.find_first_not_of(chars);
    if (begin == std::string::npos) return one(IValue(""));
  }
  if (kRight) {
    const size_t last = s.find_last_not_of(chars);
    if (last == std::string::npos) return one(IValue(""));
    end = last + 1;
  }
  return one(IValue(s.substr(begin, end - begin)));
}

// aten::replace(str self, str old, str new, int max=-1) -> str
std::vector<IValue> replace_(const Args& a) {
  const std::string& s = a.str(0);
  const std::string& old = a.str(1);
  const std::string& repl = a.str(2);
  const int64_t max = a.integer(3);
  std::string out;
  if (old.empty()) {
    if (max >= 0) {
      // torch 1.13 inserts `new` at the front, max times (each insertion
      // lands after the previous one): new * max + s.
      // (max is capped first: max * size could overflow.)
      if (!repl.empty()) {
        checkResultSize(std::min<uint64_t>(max, kMaxResultBytes + 1), a);
      }
      checkResultSize(s.size() + static_cast<uint64_t>(max) * repl.size(),
                      a);
      for (int64_t i = 0; i < max; ++i) out += repl;
      out += s;
      return one(IValue(std::move(out)));
    }
    // torch 1.13 never returns here (it inserts until memory runs out, or
    // loops for ever when `new` is empty); turnout gives Python's result:
    // `new` before every byte and at the end.
    checkResultSize(s.size() + (s.size() + 1) * uint64_t{repl.size()}, a);
    out += repl;
    for (char c : s) {
      out += c;
      out += repl;
    }
    return one(IValue(std::move(out)));
  }
  size_t pos = 0;
  int64_t left = max;
  for (size_t at; left != 0 && (at = s.find(old, pos)) != std::string::npos;
       --left) {
    out.append(s, pos, at - pos);
    checkResultSize(out.size() + repl.size(), a);
    out += repl;
    pos = at + old.size();
  }
  out.append(s, pos, std::string::npos);
  return one(IValue(std::move(out)));
}

char fillChar(const Args& a, size_t i) {
  const std::string& f = a.str(i);
  TURNOUT_CHECK(f.size() == 1, ErrorKind::Type, a.op(),
                ": The fill character must be exactly one character long "
                "(got \"", f, "\")");
  return f[0];
}

// aten::center/ljust/rjust(str self, int width, str fillchar=" ") -> str
enum class Justify { Left, Right, Center };
template <Justify kHow>
std::vector<IValue> justify_(const Args& a) {
  const std::string& s = a.str(0);
  const int64_t width = a.integer(1);
  const char fill = fillChar(a, 2);
  const int64_t n = static_cast<int64_t>(s.size());
  // (torch 1.13's center() loops for ever on a negative width; this gives
  // Python's result, the string itself.)
  if (width <= n) return one(IValue(s));
  checkResultSize(static_cast<uint64_t>(width), a);
  const int64_t pad = width - n;
  int64_t left = 0;
  if (kHow == Justify::Right) left = pad;
  // Python's rule: the odd byte goes left when the width is odd.
  if (kHow == Justify::Center) left = pad / 2 + (pad & width & 1);
  std::string out(static_cast<size_t>(left), fill);
  out += s;
  out.append(static_cast<size_t>(pad - left), fill);
  return one(IValue(std::move(out)));
}

// aten::zfill(str self, int width) -> str: zeros on the left, before a sign
// too (torch's; Python's keeps the sign first).
std::vector<IValue> zfill_(const Args& a) {
  const std::string& s = a.str(0);
  const int64_t width = a.integer(1);
  const int64_t n = static_cast<int64_t>(s.size());
  if (width <= n) return one(IValue(s));
  checkResultSize(static_cast<uint64_t>(width), a);
  std::string out(static_cast<size_t>(width - n), '0');
  return one(IValue(out + s));
}

// aten::expandtabs(str self, int tabsize=8) -> str: tabs to the next
// multiple of tabsize, counted from the start of the string (not of the
// line, as torch's); tabsize <= 0 drops them.
std::vector<IValue> expandtabs_(const Args& a) {
  const std::string& s = a.str(0);
  const int64_t tabsize = a.integer(1);
  std::string out;
  int64_t column = 0;
  for (char c : s) {
    if (c == '\t') {
      if (tabsize > 0) {
        const int64_t spaces = tabsize - column % tabsize;
        checkResultSize(out.size() + static_cast<uint64_t>(spaces), a);
        out.append(static_cast<size_t>(spaces), ' ');
        column += spaces;
      }
      continue;
    }
    out += c;
    ++column;  // torch 1.13 does not restart the column at a line break
  }
  return one(IValue(std::move(out)));
}

// ---- Case and predicates: ASCII, byte by byte (Python's bytes methods) ------

bool isLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool isUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool isAlpha(unsigned char c) { return isLower(c) || isUpper(c); }
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }
char toLower(unsigned char c) { return isUpper(c) ? c - 'A' + 'a' : c; }
char toUpper(unsigned char c) { return isLower(c) ? c - 'a' + 'A' : c; }

enum class Case { Lower, Upper, Swap, Capitalize, Title };
template <Case kCase>
std::vector<IValue> case_(const Args& a) {
  std::string s = a.str(0);
  bool previous_cased = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    switch (kCase) {
      case Case::Lower: s[i] = toLower(c); break;
      case Case::Upper: s[i] = toUpper(c); break;
      case Case::Swap: s[i] = isUpper(c) ? toLower(c) : toUpper(c); break;
      case Case::Capitalize: s[i] = i == 0 ? toUpper(c) : toLower(c); break;
      case Case::Title:
        s[i] = previous_cased ? toLower(c) : toUpper(c);
        previous_cased = isAlpha(c);
        break;
    }
  }
  return one(IValue(std::move(s)));
}

// Non-empty, and every byte passes.
template <bool (*P)(unsigned char)>
std::vector<IValue> all_(const Args& a) {
  const std::string& s = a.str(0);
  bool r = !s.empty();
  for (unsigned char c : s) r = r && P(c);
  return one(IValue(r));
}
bool isAlnum(unsigned char c) { return isAlpha(c) || isDigit(c); }
// C's isspace: not Python's str.isspace, which adds \x1c-\x1f.
bool isSpace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

// aten::isidentifier(str self) -> bool: torch 1.13's rule (it logs that it
// is "from Python 2"): a letter, then letters and digits. Unlike Python 3's,
// an underscore is never part of one ("_x", "a_b" are not identifiers), and
// no byte past ASCII is.
std::vector<IValue> isidentifier_(const Args& a) {
  const std::string& s = a.str(0);
  bool r = !s.empty() && isAlpha(s[0]);
  for (unsigned char c : s) r = r && isAlnum(c);
  return one(IValue(r));
}

// islower/isupper: a cased byte, and none of the other case.
template <bool kUpper>
std::vector<IValue> isCase_(const Args& a) {
  bool cased = false;
  for (unsigned char c : a.str(0)) {
    if (kUpper ? isLower(c) : isUpper(c)) return one(IValue(false));
    cased = cased || isAlpha(c);
  }
  return one(IValue(cased));
}

// isprintable: every byte printable ASCII (true when empty).
std::vector<IValue> isprintable_(const Args& a) {
  for (unsigned char c : a.str(0)) {
    if (c < 0x20 || c > 0x7e) return one(IValue(false));
  }
  return one(IValue(true));
}

// istitle: upper case only after an uncased byte, lower case only after a
// cased one, and at least one cased byte.
std::vector<IValue> istitle_(const Args& a) {
  bool cased = false, previous_cased = false;
  for (unsigned char c : a.str(0)) {
    if (isUpper(c)) {
      if (previous_cased) return one(IValue(false));
      previous_cased = cased = true;
    } else if (isLower(c)) {
      if (!previous_cased) return one(IValue(false));
      previous_cased = cased = true;
    } else {
      previous_cased = false;
    }
  }
  return one(IValue(cased));
}

// ---- Indexing, ord, chr, comparisons, conversions ---------------------------

// aten::__getitem__.str(str s, int index) -> str: one byte.
std::vector<IValue> getitem_(const Args& a) {
  const std::string& s = a.str(0);
  const int64_t n = static_cast<int64_t>(s.size());
  const int64_t idx = a.integer(1);
  const int64_t i = idx < 0 ? idx + n : idx;
  TURNOUT_CHECK(i >= 0 && i < n, ErrorKind::Index, a.op(),
                ": string index out of range (index ", idx,
                ", string of length ", n, ")");
  return one(IValue(std::string(1, s[static_cast<size_t>(i)])));
}

// aten::slice.str(str string, int? start=None, int? end=None, int step=1)
//   -> str: Python's slice, over bytes.
std::vector<IValue> slice_(const Args& a) {
  const std::string& s = a.str(0);
  const int64_t n = static_cast<int64_t>(s.size());
  const int64_t step = a.integer(3);
  TURNOUT_CHECK(step != 0, ErrorKind::InvalidArgument, a.op(),
                ": slice step cannot be zero");
  TURNOUT_CHECK(step != INT64_MIN, ErrorKind::InvalidArgument, a.op(),
                ": slice step is out of bounds (", step, ")");
  // Python's PySlice_AdjustIndices.
  auto clamp = [&](const IValue& v, int64_t dflt) {
    if (v.isNone()) return dflt;
    int64_t i = v.toInt();
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  const int64_t start = clamp(a.value(1), step < 0 ? n - 1 : 0);
  const int64_t stop = clamp(a.value(2), step < 0 ? -1 : n);
  // The element count first, so that start + k * step never overflows.
  int64_t count = 0;
  if (step > 0 && start < stop) count = (stop - start - 1) / step + 1;
  if (step < 0 && stop < start) count = (start - stop - 1) / -step + 1;
  std::string out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) out += s[start + k * step];
  return one(IValue(std::move(out)));
}

// aten::ord(str string) -> int: the value of a one-byte string.
std::vector<IValue> ord_(const Args& a) {
  const std::string& s = a.str(0);
  TURNOUT_CHECK(s.size() == 1, ErrorKind::Type, a.op(),
                ": expected a string of one byte, found ", s.size(),
                " (torch 1.13's strings are UTF-8 bytes)");
  return one(IValue(static_cast<int64_t>(static_cast<unsigned char>(s[0]))));
}

// aten::chr(int i) -> str: torch 1.13 takes 0 <= i < 0x10ffff (0x10ffff
// itself raises) and returns the one byte i % 256.
std::vector<IValue> chr_(const Args& a) {
  const int64_t i = a.integer(0);
  TURNOUT_CHECK(i >= 0 && i < 0x10ffff, ErrorKind::InvalidArgument, a.op(),
                ": chr() arg not in range(0x110000), found ", i,
                " (torch 1.13 also refuses 0x10ffff)");
  return one(IValue(std::string(1, static_cast<char>(i & 0xff))));
}

template <class Cmp>
std::vector<IValue> compare_(const Args& a) {
  return one(IValue(Cmp()(a.str(0), a.str(1))));
}

// Whether strtoll/strtod, which stopped at `end`, read all of `s` (a NUL
// inside s stops them early: that is not a number either).
bool parsedWhole(const std::string& s, const char* end) {
  return end != s.c_str() && *end == '\0' &&
         static_cast<size_t>(end - s.c_str()) == s.size();
}

// aten::Int.str(str a) -> int: an optional sign and decimal digits, after
// optional leading whitespace (no trailing whitespace, no underscores).
std::vector<IValue> int_str(const Args& a) {
  const std::string& s = a.str(0);
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  TURNOUT_CHECK(parsedWhole(s, end), ErrorKind::InvalidArgument, a.op(),
                ": invalid literal for int() with base 10: '", s, "'");
  TURNOUT_CHECK(errno != ERANGE, ErrorKind::InvalidArgument, a.op(), ": '",
                s, "' does not fit in a 64-bit int");
  return one(IValue(static_cast<int64_t>(v)));
}

// aten::Float.str(str a) -> float: C's strtod, which takes hex ("0x10"),
// inf and nan too, after optional leading whitespace.
std::vector<IValue> float_str(const Args& a) {
  const std::string& s = a.str(0);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  TURNOUT_CHECK(parsedWhole(s, end), ErrorKind::InvalidArgument, a.op(),
                ": could not convert string to float: '", s, "'");
  // Underflow too (1e-400), as torch 1.13's std::stod.
  TURNOUT_CHECK(errno != ERANGE, ErrorKind::InvalidArgument, a.op(), ": '",
                s, "' is out of range for a float");
  return one(IValue(v));
}

}  // namespace
}  // namespace turnout

TURNOUT_LIBRARY_FRAGMENT(aten, m) {
  m.def("split.str(str self, str? separator=None, int max=-1) -> str[]");
  m.def("rsplit(str self, str separator=\" \", int max=-1) -> str[]");
  m.def("splitlines(str self, bool keepends=False) -> str[]");
  m.def("join(str self, str[] values) -> str");
  m.def("partition(str self, str separator) -> (str, str, str)");
  m.def("rpartition(str self, str separator) -> (str, str, str)");
  m.def("list(str t) -> str[]");
  for (const char* op : {"strip", "lstrip", "rstrip"}) {
    m.def(std::string(op) + "(str self, str chars=\" \\n\\t\\f\\v\") -> str");
  }
  m.def("replace(str self, str old, str new, int max=-1) -> str");
  for (const char* op : {"startswith", "endswith"}) {
    m.def(std::string(op) +
          "(str self, str substr, int start=0, int end=-1) -> bool");
  }
  for (const char* op : {"find", "rfind", "count", "index.str", "rindex"}) {
    m.def(std::string(op) +
          "(str self, str substr, int start=0, int end=-1) -> int");
  }
  for (const char* op : {"center", "ljust", "rjust"}) {
    m.def(std::string(op) + "(str self, int width, str fillchar=\" \") -> str");
  }
  m.def("zfill(str self, int width) -> str");
  m.def("expandtabs(str self, int tabsize=8) -> str");
  for (const char* op :
       {"lower", "upper", "swapcase", "capitalize", "title"}) {
    m.def(std::string(op) + "(str self) -> str");
  }
  for (const char* op :
       {"isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace",
        "islower", "isupper", "isprintable", "istitle", "isidentifier"}) {
    m.def(std::string(op) + "(str self) -> bool");
  }
  m.def("__getitem__.str(str s, int index) -> str");
  m.def("slice.str(str string, int? start=None, int? end=None, int step=1) "
        "-> str");
  m.def("ord(str string) -> int");
  m.def("chr(int i) -> str");
  m.def("le.str(str a, str b) -> bool");
  m.def("ge.str(str a, str b) -> bool");
  m.def("Int.str(str a) -> int");
  m.def("Float.str(str a) -> float");
}

TURNOUT_LIBRARY_IMPL(aten, CompositeExplicitAutograd, m) {
  using turnout::CppFunction;
  namespace t = turnout;
  auto k = [](t::BoxedFunction f) {
    return CppFunction::makeFromBoxedFunction(f);
  };
  m.impl("split.str", k(&t::kernel<3, t::split_>));
  m.impl("rsplit", k(&t::kernel<3, t::rsplit_>));
  m.impl("splitlines", k(&t::kernel<2, t::splitlines_>));
  m.impl("join", k(&t::kernel<2, t::join_>));
  m.impl("partition", k(&t::kernel<2, t::partition_<false>>));
  m.impl("rpartition", k(&t::kernel<2, t::partition_<true>>));
  m.impl("list", k(&t::kernel<1, t::list_>));
  m.impl("strip", k(&t::kernel<2, t::strip_<true, true>>));
  m.impl("lstrip", k(&t::kernel<2, t::strip_<true, false>>));
  m.impl("rstrip", k(&t::kernel<2, t::strip_<false, true>>));
  m.impl("replace", k(&t::kernel<4, t::replace_>));
  m.impl("startswith", k(&t::kernel<4, t::startsOrEndsWith<false>>));
  m.impl("endswith", k(&t::kernel<4, t::startsOrEndsWith<true>>));
  m.impl("find", k(&t::kernel<4, t::find_<false>>));
  m.impl("rfind", k(&t::kernel<4, t::find_<true>>));
  m.impl("count", k(&t::kernel<4, t::count_>));
  m.impl("index.str", k(&t::kernel<4, t::index_<false>>));
  m.impl("rindex", k(&t::kernel<4, t::index_<true>>));
  m.impl("center", k(&t::kernel<3, t::justify_<t::Justify::Center>>));
  m.impl("ljust", k(&t::kernel<3, t::justify_<t::Justify::Left>>));
  m.impl("rjust", k(&t::kernel<3, t::justify_<t::Justify::Right>>));
  m.impl("zfill", k(&t::kernel<2, t::zfill_>));
  m.impl("expandtabs", k(&t::kernel<2, t::expandtabs_>));
  m.impl("lower", k(&t::kernel<1, t::case_<t::Case::Lower>>));
  m.impl("upper", k(&t::kernel<1, t::case_<t::Case::Upper>>));
  m.impl("swapcase", k(&t::kernel<1, t::case_<t::Case::Swap>>));
  m.impl("capitalize", k(&t::kernel<1, t::case_<t::Case::Capitalize>>));
  m.impl("title", k(&t::kernel<1, t::case_<t::Case::Title>>));
  // torch 1.13's isdecimal/isnumeric are isdigit on bytes.
  m.impl("isdigit", k(&t::kernel<1, t::all_<t::isDigit>>));
  m.impl("isdecimal", k(&t::kernel<1, t::all_<t::isDigit>>));
  m.impl("isnumeric", k(&t::kernel<1, t::all_<t::isDigit>>));
  m.impl("isalpha", k(&t::kernel<1, t::all_<t::isAlpha>>));
  m.impl("isalnum", k(&t::kernel<1, t::all_<t::isAlnum>>));
  m.impl("isspace", k(&t::kernel<1, t::all_<t::isSpace>>));
  m.impl("islower", k(&t::kernel<1, t::isCase_<false>>));
  m.impl("isupper", k(&t::kernel<1, t::isCase_<true>>));
  m.impl("isprintable", k(&t::kernel<1, t::isprintable_>));
  m.impl("istitle", k(&t::kernel<1, t::istitle_>));
  m.impl("isidentifier", k(&t::kernel<1, t::isidentifier_>));
  m.impl("__getitem__.str", k(&t::kernel<2, t::getitem_>));
  m.impl("slice.str", k(&t::kernel<4, t::slice_>));
  m.impl("ord", k(&t::kernel<1, t::ord_>));
  m.impl("chr", k(&t::kernel<1, t::chr_>));
  m.impl("le.str", k(&t::kernel<2, t::compare_<std::less_equal<>>>));
  m.impl("ge.str", k(&t::kernel<2, t::compare_<std::greater_equal<>>>));
  m.impl("Int.str", k(&t::kernel<1, t::int_str>));
  m.impl("Float.str", k(&t::kernel<1, t::float_str>));
}

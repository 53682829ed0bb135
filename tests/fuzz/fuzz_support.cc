#include "tests/fuzz/fuzz_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace turnout {
namespace fuzz {
namespace {

std::string& currentInput() {
  static std::string* input = new std::string();
  return *input;
}

std::string escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n\n";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

void setCurrentInput(std::string_view input) {
  currentInput().assign(input.data(), input.size());
}

void fail(const std::string& message) {
  std::fprintf(stderr, "turnout fuzz: %s\n--- input (%zu bytes) ---\n%s\n---\n",
               message.c_str(), currentInput().size(),
               escaped(currentInput()).c_str());
  std::fflush(stderr);
  std::abort();
}

int nestingDepth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  int suffixes = 0;  // "[]" and "?" in a row
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[' && i + 1 < text.size() && text[i + 1] == ']') {
      ++suffixes;
      ++i;
    } else if (c == '?') {
      ++suffixes;
    } else if (c == ' ') {
      // Spaces do not end a run of suffixes ("int [] ?").
    } else {
      suffixes = 0;
    }
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    deepest = std::max({deepest, depth, suffixes});
  }
  // Blocks of the IR nest by indentation (two spaces a level).
  int indent = 0;
  bool line_start = true;
  for (char c : text) {
    if (c == '\n') {
      indent = 0;
      line_start = true;
    } else if (c == ' ' && line_start) {
      ++indent;
      deepest = std::max(deepest, indent / 2);
    } else {
      line_start = false;
    }
  }
  return deepest;
}

bool skipDeeplyNested(std::string_view text) {
  static const bool guard = [] {
    const char* shallow = std::getenv("TURNOUT_FUZZ_SHALLOW");
    return shallow != nullptr && std::string_view(shallow) == "1";
  }();
  return guard && nestingDepth(text) > kMaxNesting;
}

int runTextInput(const uint8_t* data, size_t size, bool skip_deep,
                 void (*check)(std::string_view text)) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  setCurrentInput(text);
  if (skip_deep && skipDeeplyNested(text)) return 0;
  check(text);
  return 0;
}

bool isValidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const std::string_view c = utf8CharAt(text, pos);
    if (c.size() == 1 && static_cast<unsigned char>(c[0]) >= 0x80) {
      return false;
    }
    pos += c.size();
  }
  return true;
}

void checkRejection(const Error& e, std::string_view input, const char* what) {
  FUZZ_CHECK(e.kind() == ErrorKind::InvalidArgument, what, " threw ",
             toString(e.kind()), ": ", e.message());
  FUZZ_CHECK(!e.message().empty(), what, " threw an empty message");
  FUZZ_CHECK(!isValidUtf8(input) || isValidUtf8(e.message()), what,
             " threw a message that is not UTF-8: ", e.message());
}

}  // namespace fuzz
}  // namespace turnout

#include "dispatcher/debug/json_writer.h"

#include <cstdio>

namespace turnout {

void appendJsonString(std::string* out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          *out += "\\u00";
          *out += kHex[(c >> 4) & 0xf];
          *out += kHex[c & 0xf];
        } else {
          *out += c;  // UTF-8 passes through
        }
    }
  }
  *out += '"';
}

void appendJsonMicros(std::string* out, int64_t ns) {
  // Sign first: C's % keeps the dividend's sign, which would print
  // "-1.-500".
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *out += '-';
    magnitude = 0 - magnitude;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%03llu",
                static_cast<unsigned long long>(magnitude / 1000),
                static_cast<unsigned long long>(magnitude % 1000));
  *out += buf;
}

}  // namespace turnout

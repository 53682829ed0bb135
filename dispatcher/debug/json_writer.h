// The few pieces of JSON writing that the registry snapshot, its diff and the
// profiler's Chrome trace share: a quoted, escaped string and exact
// microseconds from integer nanoseconds.
//
//   std::string out = "{\"name\": ";
//   appendJsonString(&out, "aten::add.Tensor");   // "aten::add.Tensor"
//   out += ", \"ts\": ";
//   appendJsonMicros(&out, 1234567);               // 1234.567
//   out += "}";
//
// Strings are escaped as RFC 8259 requires: '"' and '\\' with a backslash,
// \n \r \t by name, every other byte below 0x20 as \u00XX (lowercase hex).
// Other bytes pass through unchanged, so UTF-8 stays UTF-8.
//
// Thread safety: free functions over the caller's string.
#ifndef TURNOUT_DISPATCHER_DEBUG_JSON_WRITER_H_
#define TURNOUT_DISPATCHER_DEBUG_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace turnout {

/// Appends `s` to `*out` as a JSON string literal, quotes included.
void appendJsonString(std::string* out, std::string_view s);

/// Appends integer nanoseconds as microseconds with exactly three decimals
/// ("-1.500" for -1500): no rounding, so spans nested in nanoseconds stay
/// nested when read back in microseconds.
void appendJsonMicros(std::string* out, int64_t ns);

}  // namespace turnout

#endif  // TURNOUT_DISPATCHER_DEBUG_JSON_WRITER_H_

#include "dispatcher/debug/json_writer.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace turnout {
namespace {

std::string jsonString(std::string_view s) {
  std::string out;
  appendJsonString(&out, s);
  return out;
}

std::string micros(int64_t ns) {
  std::string out;
  appendJsonMicros(&out, ns);
  return out;
}

TEST(JsonWriter, StringEscapes) {
  struct Case {
    std::string in;
    std::string out;
  };
  const Case cases[] = {
      {"", R"("")"},
      {"aten::add.Tensor", R"("aten::add.Tensor")"},
      {"say \"hi\"", R"("say \"hi\"")"},
      {"C:\\dir", R"("C:\\dir")"},
      {"a\nb\rc\td", R"("a\nb\rc\td")"},
      {std::string("\x01\x1f", 2), R"("\u0001\u001f")"},
      {std::string("nul\0end", 7), R"("nul\u0000end")"},
      {"\x7f", "\"\x7f\""},  // DEL is not a control
      {"caf\xc3\xa9 \xe2\x86\x92", "\"caf\xc3\xa9 \xe2\x86\x92\""},  // UTF-8
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.out);
    EXPECT_EQ(jsonString(c.in), c.out);
  }
}

TEST(JsonWriter, StringAppends) {
  std::string out = "{\"k\": ";
  appendJsonString(&out, "v");
  out += '}';
  EXPECT_EQ(out, R"({"k": "v"})");
}

TEST(JsonWriter, MicrosAreExact) {
  struct Case {
    int64_t ns;
    const char* out;
  };
  const Case cases[] = {
      {0, "0.000"},
      {1, "0.001"},
      {999, "0.999"},
      {1000, "1.000"},
      {1234567, "1234.567"},
      {-1500, "-1.500"},
      {-1, "-0.001"},
      {INT64_MAX, "9223372036854775.807"},
      {INT64_MIN, "-9223372036854775.808"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.ns);
    EXPECT_EQ(micros(c.ns), c.out);
  }
}

}  // namespace
}  // namespace turnout

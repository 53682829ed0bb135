#include "dispatcher/core/error.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace turnout {
namespace {

TEST(Error, CheckJoinsPartsOnlyOnFailure) {
  int evaluated = 0;
  auto part = [&] {
    ++evaluated;
    return std::string("part");
  };
  // The parts are macro arguments evaluated inside the failing branch only.
  TURNOUT_CHECK(true, ErrorKind::InvalidArgument, part());
  EXPECT_EQ(evaluated, 0);
  try {
    TURNOUT_CHECK(1 + 1 == 3, ErrorKind::Index, "index ", 7, " is out of ",
                  part());
    FAIL() << "expected a throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_EQ(e.message(), "index 7 is out of part");
    EXPECT_STREQ(e.what(), "index 7 is out of part");
  }
  EXPECT_EQ(evaluated, 1);
}

TEST(Error, InternalAssertSaysItIsABug) {
  try {
    TURNOUT_INTERNAL_ASSERT(false, "table for ", "x", " is missing");
    FAIL() << "expected a throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_NE(e.message().find("table for x is missing"), std::string::npos);
    EXPECT_NE(e.message().find("bug in turnout"), std::string::npos);
    EXPECT_NE(e.message().find("error_test.cc"), std::string::npos);
  }
}

TEST(Error, InternalAssertWithoutMessage) {
  EXPECT_THROW(TURNOUT_INTERNAL_ASSERT(1 == 2), Error);
}

TEST(Error, WarningHandlerCapturesAndRestores) {
  std::vector<std::string> seen;
  WarningHandler previous =
      setWarningHandler([&](const std::string& m) { seen.push_back(m); });
  TURNOUT_WARN("overriding ", 3, " kernels");
  setWarningHandler(previous);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "overriding 3 kernels");
}

FixIt kernelFix() {
  return FixIt{FixIt::Action::RegisterKernel,
               "myops",
               "scale",
               "CPU",
               "",
               "IMPL_BLOCK(myops, CPU)\n  m.impl(\"scale\", kernel);"};
}

TEST(Error, FixItSectionIsTheIndentedCppLines) {
  Error e(ErrorKind::NotImplemented, "no kernel. To fix it:\n", kernelFix(),
          "\nCPU: missing\n");
  EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
  EXPECT_EQ(e.message(),
            "no kernel. To fix it:\n"
            "  IMPL_BLOCK(myops, CPU)\n"
            "    m.impl(\"scale\", kernel);\n"
            "\nCPU: missing\n");
  EXPECT_STREQ(e.what(), e.message().c_str());
  ASSERT_TRUE(e.fixIt().has_value());
  EXPECT_EQ(e.fixIt()->action, FixIt::Action::RegisterKernel);
  EXPECT_EQ(e.fixIt()->ns, "myops");
  EXPECT_EQ(e.fixIt()->op, "scale");
  EXPECT_EQ(e.fixIt()->key, "CPU");
}

TEST(Error, MessageWithFixItSwapsOnlyTheSection) {
  Error e(ErrorKind::NotImplemented, "before:\n", kernelFix(), "after\n");
  EXPECT_EQ(e.messageWithFixIt("  other spelling\n"),
            "before:\n  other spelling\nafter\n");
  // An error without a fix-it keeps its message whatever the section.
  Error plain(ErrorKind::Type, "bad type");
  EXPECT_FALSE(plain.fixIt().has_value());
  EXPECT_EQ(plain.messageWithFixIt("  ignored\n"), "bad type");
}

TEST(Error, WithPrefixKeepsTheFixIt) {
  Error e(ErrorKind::NotImplemented, "before:\n", kernelFix(), "after");
  Error prefixed = e.withPrefix("while running node %3\n");
  EXPECT_EQ(prefixed.kind(), ErrorKind::NotImplemented);
  EXPECT_EQ(prefixed.message(), "while running node %3\n" + e.message());
  ASSERT_TRUE(prefixed.fixIt().has_value());
  EXPECT_EQ(prefixed.messageWithFixIt("  X\n"),
            "while running node %3\nbefore:\n  X\nafter");
  EXPECT_EQ(Error(ErrorKind::Index, "i").withPrefix("at: ").message(), "at: i");
}

TEST(Utf8, CharAtTakesWholeSequences) {
  const std::string text = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";  // aé€😀
  EXPECT_EQ(utf8CharAt(text, 0), "a");
  EXPECT_EQ(utf8CharAt(text, 1), "\xc3\xa9");
  EXPECT_EQ(utf8CharAt(text, 3), "\xe2\x82\xac");
  EXPECT_EQ(utf8CharAt(text, 6), "\xf0\x9f\x98\x80");
  EXPECT_EQ(utf8CharAt(text, 10), "");
  EXPECT_EQ(utf8Length(text), 4u);
  // Not valid UTF-8: one byte at a time.
  struct Case {
    const char* bytes;
    size_t length;
  };
  const Case invalid[] = {
      {"\xa9x", 2},          // a continuation byte first
      {"\xc3", 1},           // cut short at the end
      {"\xc3x", 2},          // cut short inside
      {"\xc0\xaf", 2},       // overlong
      {"\xed\xa0\x80", 3},   // a surrogate
      {"\xf4\x90\x80\x80", 4},  // past U+10FFFF
      {"\xff", 1},
  };
  for (const Case& c : invalid) {
    SCOPED_TRACE(c.bytes);
    EXPECT_EQ(utf8CharAt(c.bytes, 0).size(), 1u);
    EXPECT_EQ(utf8Length(c.bytes), c.length);
  }
}

TEST(Error, HintIsPartOfTheMessageAndCanBeLeftOut) {
  Error e = Error::withHint(ErrorKind::InvalidArgument, "what went wrong",
                            "\nhow to fix it");
  EXPECT_TRUE(e.hasHint());
  EXPECT_EQ(e.message(), "what went wrong\nhow to fix it");
  EXPECT_STREQ(e.what(), "what went wrong\nhow to fix it");
  Error plain = e.withoutHint();
  EXPECT_FALSE(plain.hasHint());
  EXPECT_EQ(plain.kind(), ErrorKind::InvalidArgument);
  EXPECT_EQ(plain.message(), "what went wrong");
  EXPECT_EQ(e.withPrefix("op: ").withoutHint().message(), "op: what went wrong");
  Error none(ErrorKind::Type, "no hint");
  EXPECT_FALSE(none.hasHint());
  EXPECT_EQ(none.withoutHint().message(), "no hint");
}

TEST(Error, KindNames) {
  EXPECT_STREQ(toString(ErrorKind::InvalidArgument), "InvalidArgument");
  EXPECT_STREQ(toString(ErrorKind::NotImplemented), "NotImplemented");
}

}  // namespace
}  // namespace turnout

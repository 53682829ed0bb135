// Test helpers for the jit tests: the text of a file in testdata/.
//
//   const std::string text = readFile("tests/jit/testdata/loops.ir");
//   std::unique_ptr<Graph> g = parseIR(text);
#ifndef TURNOUT_TESTS_JIT_TESTING_H_
#define TURNOUT_TESTS_JIT_TESTING_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace turnout {
namespace testing {

/// The whole text of `relative` (a path from the workspace root, listed in
/// the test's `data`): found in the runfiles tree under `bazel test`, from
/// the current directory otherwise. A file that cannot be opened fails the
/// test and reads as "".
inline std::string readFile(const std::string& relative) {
  std::string path = relative;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    path = std::string(srcdir) + "/turnout/" + relative;
  }
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_JIT_TESTING_H_

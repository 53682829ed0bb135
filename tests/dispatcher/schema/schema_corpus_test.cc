// The yardstick for the schema language: every schema PyTorch 1.13 knows
// parses, prints back character for character, and parses again to an equal
// schema.
//
// testdata/pytorch_1_13_schemas.txt holds str(schema) of every schema in
// torch._C._jit_get_all_schemas(), one per line, sorted. It was generated
// with Debian's PyTorch (`apt-get install -y python3-torch`, which reports
// version 1.13.0a0) by running this under /usr/bin/python3 (not the pyenv
// python3 first on the PATH) in tests/dispatcher:
//
//   import torch
//   schemas = sorted(str(s) for s in torch._C._jit_get_all_schemas())
//   with open("testdata/pytorch_1_13_schemas.txt", "w") as f:
//       f.writelines(s + "\n" for s in schemas)
//
// Skipped, by rule: schemas that name a TorchScript custom class
// (`__torch__.torch.classes.NS.Class`, e.g. c10d's ProcessGroup). turnout has
// no custom classes; the parser rejects them with a message saying so, and
// the test checks that it does.

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "dispatcher/core/error.h"
#include "dispatcher/schema/function_schema.h"
#include "dispatcher/schema/schema_parser.h"
#include "gtest/gtest.h"

namespace turnout {
namespace {

constexpr char kCorpus[] = "tests/dispatcher/schema/testdata/pytorch_1_13_schemas.txt";

std::vector<std::string> readCorpus() {
  std::string path = kCorpus;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    path = std::string(srcdir) + "/turnout/" + kCorpus;
  }
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool namesCustomClass(const std::string& schema) {
  return schema.find("__torch__.torch.classes.") != std::string::npos;
}

TEST(SchemaCorpus, EveryPyTorchSchemaRoundTrips) {
  const std::vector<std::string> corpus = readCorpus();
  ASSERT_GT(corpus.size(), 4000u);
  size_t passed = 0;
  size_t skipped = 0;
  for (const std::string& line : corpus) {
    SCOPED_TRACE(line);
    if (namesCustomClass(line)) {
      ++skipped;
      try {
        parseSchema(line);
        ADD_FAILURE() << "a custom class schema parsed";
      } catch (const Error& e) {
        EXPECT_NE(e.message().find("custom class"), std::string::npos)
            << e.message();
      }
      continue;
    }
    try {
      FunctionSchema schema = parseSchema(line);
      std::string printed = toString(schema);
      EXPECT_EQ(printed, line);
      EXPECT_EQ(parseSchema(printed), schema);
      if (printed == line) ++passed;
    } catch (const Error& e) {
      ADD_FAILURE() << e.message();
    }
  }
  std::cout << passed << " of " << corpus.size() - skipped
            << " schemas round-trip (" << skipped
            << " skipped: they name a TorchScript custom class; "
            << corpus.size() << " in the corpus)" << std::endl;
  // The rule skips exactly the 128 custom class schemas of the corpus.
  EXPECT_EQ(skipped, 128u);
  EXPECT_EQ(passed + skipped, corpus.size());
}

}  // namespace
}  // namespace turnout

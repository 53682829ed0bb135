// The corpus replay test of a fuzz target, in the ordinary test suite (GCC;
// plain, ASan and TSan): every input of the target's checked-in corpus,
// crash regressions included, runs through LLVMFuzzerTestOneInput once. A
// failed check aborts the test binary, after printing the input.
//
// Arguments (after GoogleTest's): the corpus folders or files.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/corpus_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string>& corpusPaths() {
  static std::vector<std::string> paths;
  return paths;
}

TEST(FuzzCorpus, EveryInputPasses) {
  ASSERT_FALSE(corpusPaths().empty()) << "no corpus given";
  const std::vector<std::string> files =
      turnout::fuzz::corpusFiles(corpusPaths());
  ASSERT_FALSE(files.empty()) << "empty corpus";
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const std::string bytes = turnout::fuzz::readCorpusFile(f);
    std::fprintf(stderr, "Running: %s\n", f.c_str());
    EXPECT_EQ(LLVMFuzzerTestOneInput(
                  reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
              0);
  }
  std::fprintf(stderr, "Executed %zu inputs\n", files.size());
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  corpusPaths().assign(argv + 1, argv + argc);
  return RUN_ALL_TESTS();
}

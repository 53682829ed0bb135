// main() of a fuzz target built without libFuzzer (GCC, the ordinary
// configurations): runs each file or folder given as an argument through
// LLVMFuzzerTestOneInput once, as a libFuzzer binary does with files.
//
//   bazel run //tests/fuzz:schema_fuzzer -- tests/fuzz/corpus/schema crash-1
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tests/fuzz/corpus_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> paths(argv + 1, argv + argc);
  try {
    const std::vector<std::string> files = turnout::fuzz::corpusFiles(paths);
    for (const std::string& f : files) {
      const std::string bytes = turnout::fuzz::readCorpusFile(f);
      std::fprintf(stderr, "Running: %s\n", f.c_str());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                             bytes.size());
    }
    std::fprintf(stderr, "Executed %zu inputs\n", files.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}

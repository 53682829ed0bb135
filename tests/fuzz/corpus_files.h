// The files of a corpus: each argument is a file or a folder (its regular
// files, recursively), in sorted order so that runs are reproducible.
#ifndef TURNOUT_TESTS_FUZZ_CORPUS_FILES_H_
#define TURNOUT_TESTS_FUZZ_CORPUS_FILES_H_

#include <string>
#include <vector>

namespace turnout {
namespace fuzz {

/// Every regular file under `paths`, sorted. Throws std::runtime_error for
/// a path that does not exist.
std::vector<std::string> corpusFiles(const std::vector<std::string>& paths);

/// The bytes of `path`. Throws std::runtime_error when it cannot be read.
std::string readCorpusFile(const std::string& path);

}  // namespace fuzz
}  // namespace turnout

#endif  // TURNOUT_TESTS_FUZZ_CORPUS_FILES_H_

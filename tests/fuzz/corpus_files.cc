#include "tests/fuzz/corpus_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace turnout {
namespace fuzz {

std::vector<std::string> corpusFiles(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::recursive_directory_iterator(
               p, fs::directory_options::follow_directory_symlink)) {
        if (fs::is_regular_file(e.path())) files.push_back(e.path().string());
      }
    } else if (fs::exists(p)) {
      files.push_back(p);
    } else {
      throw std::runtime_error("no such corpus file or folder: " + p);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string readCorpusFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace fuzz
}  // namespace turnout

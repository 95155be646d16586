// The main of a fuzz target's ordinary test: runs LLVMFuzzerTestOneInput on
// every file of the corpus directory (argv[1], which must hold at least one)
// and of the optional further directories (regressions). A target that finds
// a broken invariant aborts, and so fails the test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// Regular files under `dir`, sorted so that runs are reproducible.
std::vector<std::filesystem::path> FilesUnder(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (std::filesystem::recursive_directory_iterator it(dir, error), end;
       !error && it != end; it.increment(error)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

int Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return 1;
  }
  // A copy of exactly `size` bytes, so that ASan sees reads past the end.
  std::vector<uint8_t> input(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(input.data(), input.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MORE_DIRS...]\n", argv[0]);
    return 2;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::filesystem::path> files = FilesUnder(argv[i]);
    // The corpus must be there: an empty replay would pass while testing
    // nothing. Further directories may be absent (no regressions yet).
    if (i == 1 && files.empty()) {
      std::fprintf(stderr, "replay: no inputs in %s\n", argv[i]);
      return 1;
    }
    for (const std::filesystem::path& file : files) failures += Replay(file);
    std::printf("replay: %zu inputs from %s\n", files.size(), argv[i]);
  }
  return failures == 0 ? 0 : 1;
}

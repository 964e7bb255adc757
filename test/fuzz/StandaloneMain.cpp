//===- StandaloneMain.cpp - runs a fuzz target over files, without libFuzzer
//===//
//
// Builds each fuzz target as a plain program when libFuzzer is not in use
// (gcc, or DISC_BUILD_FUZZERS=OFF), so that the saved corpus and the crash
// regressions run as ordinary tests. Usage: `fuzz_x FILE_OR_DIR...`; every
// regular file (directories are read one level deep, sorted) is passed once
// to LLVMFuzzerTestOneInput. Exits 0 when every input returned; a bug shows
// as a crash, an assertion or a sanitizer report.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-')
      continue; // libFuzzer flags are accepted and ignored.
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> dir;
      for (const auto &entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file())
          dir.push_back(entry.path().string());
      std::sort(dir.begin(), dir.end());
      files.insert(files.end(), dir.begin(), dir.end());
    } else if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or directory: %s\n", argv[0],
                   arg.c_str());
      return 2;
    }
  }
  for (const std::string &path : files) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(),
                 bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "%s: %zu inputs ran without a crash\n", argv[0],
               files.size());
  return 0;
}

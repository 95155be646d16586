// Test support for commands: a mutable argv as main() receives it, and a
// FILE* whose contents can be read back.

#ifndef VERITYD_CLIENT_TESTING_TEST_ARGV_H_
#define VERITYD_CLIENT_TESTING_TEST_ARGV_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace verity::cli {

// Owns the strings; getopt may permute the pointers. Not copyable.
class TestArgv {
 public:
  explicit TestArgv(std::vector<std::string> args) : args_(std::move(args)) {
    for (std::string& arg : args_) pointers_.push_back(&arg[0]);
    pointers_.push_back(nullptr);
  }
  TestArgv(const TestArgv&) = delete;
  TestArgv& operator=(const TestArgv&) = delete;

  int argc() const { return static_cast<int>(args_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

// An in-memory FILE*. Not copyable.
class CapturedFile {
 public:
  CapturedFile() : file_(open_memstream(&buffer_, &size_)) {}
  CapturedFile(const CapturedFile&) = delete;
  CapturedFile& operator=(const CapturedFile&) = delete;
  ~CapturedFile() {
    std::fclose(file_);
    std::free(buffer_);
  }

  std::FILE* get() { return file_; }
  std::string contents() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_TESTING_TEST_ARGV_H_

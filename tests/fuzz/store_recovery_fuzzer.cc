// Fuzzes the file store's start-up recovery with damaged store directories.
// The input is a list of steps that build a store root by hand: real blobs in
// blobs/ or quarantine/, name files, damage to a blob's files, and arbitrary
// files, directories, symlinks and FIFOs anywhere in the layout. Then
// FileStore::Open either fails or gives a consistent store: it serves only
// blobs that were put, every byte read through VerifiedBlob is the blob's own
// (or the read is DATA_LOSS), untouched blobs and their names survive, names
// of vanished blobs are dropped, tmp/ is empty, and opening again changes
// nothing. The root is removed after every input.

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/hash/hash.h"
#include "lib/testing/test_blob.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "server/store/file/file_store.h"
#include "server/store/file/store_layout.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/name_index.h"
#include "server/store/store.h"
#include "server/store/verified_blob.h"
#include "tests/fuzz/fuzz_input.h"

namespace verity::fuzz {
namespace {

namespace fs = std::filesystem;
using server::FileStore;

// Blobs of every tree shape the store serves, built once.
const std::vector<TestBlob>& Blobs() {
  static const auto* const blobs = new std::vector<TestBlob>{
      MakeRandomTestBlob(5000, TestParams(HashAlgorithm::kSha256, 1024), 1),
      MakeRandomTestBlob(300, TestParams(HashAlgorithm::kSha512, 4096), 2),
      MakeRandomTestBlob(0, TestParams(HashAlgorithm::kSha256, 4096), 3),
      MakeRandomTestBlob(40 * 1024 + 7,
                         TestParams(HashAlgorithm::kSha256, 1024, "salt"), 4),
  };
  return *blobs;
}

// A directory of this process for the store roots: under TEST_TMPDIR in a
// test, else on tmpfs when there is one (fsync is free there).
const std::string& WorkDir() {
  static const std::string* const dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string parent = base != nullptr          ? base
                         : fs::exists("/dev/shm") ? "/dev/shm"
                                                  : "/tmp";
    std::string pattern = parent + "/store_recovery_fuzzer.XXXXXX";
    FUZZ_CHECK(mkdtemp(pattern.data()) != nullptr, pattern);
    return new std::string(pattern);
  }();
  return *dir;
}

void WriteFile(const std::string& path, absl::string_view contents) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return;  // something else is in the way: fine
  std::fwrite(contents.data(), 1, contents.size(), file);
  std::fclose(file);
}

// What the steps did, for the checks after Open.
struct Built {
  std::set<size_t> touched;             // damaged, or something written inside
  std::map<std::string, size_t> names;  // valid name files, by name
  std::set<std::string> stray_name_files;  // name files under a wrong name
  bool raw = false;                        // arbitrary entries were written
  bool versioned = false;                  // VERSION was written
};

class StoreBuilder {
 public:
  StoreBuilder(std::string root, FuzzInput& in)
      : root_(std::move(root)), layout_(root_), in_(in) {}

  Built Build() {
    if (in_.Below(16) != 0) {
      WriteFile(root_ + "/VERSION", server::kStoreVersionText);
      built_.versioned = true;
    }
    for (int step = 0; step < 24 && !in_.empty(); ++step) Step();
    return std::move(built_);
  }

 private:
  size_t PickBlob() { return in_.Below(Blobs().size()); }

  void PutBlob(const std::string& dir, const TestBlob& blob) {
    WriteFile(dir + "/data", blob.data);
    WriteFile(dir + "/tree", blob.tree.tree);
    WriteFile(dir + "/descriptor", *blob.tree.descriptor.Serialize());
  }

  void Damage(size_t k) {
    const TestBlob& blob = Blobs()[k];
    const std::string dir = in_.Bool() ? layout_.BlobDir(blob.digest)
                                       : layout_.QuarantineDir(blob.digest);
    static constexpr const char* kMembers[] = {"data", "tree", "descriptor"};
    const std::string path = dir + "/" + kMembers[in_.Below(3)];
    built_.touched.insert(k);
    std::error_code error;
    switch (in_.Below(5)) {
      case 0:
        fs::resize_file(path, in_.Integer<uint16_t>(), error);
        break;
      case 1: {
        FILE* file = std::fopen(path.c_str(), "r+b");
        if (file == nullptr) break;
        const long at = static_cast<long>(in_.Integer<uint16_t>());
        const int byte = in_.Byte();
        if (std::fseek(file, at, SEEK_SET) == 0) std::fputc(byte, file);
        std::fclose(file);
        break;
      }
      case 2:
        fs::remove(path, error);
        break;
      case 3:
        fs::remove(path, error);
        fs::create_directory(path, error);
        break;
      default:
        fs::remove_all(dir, error);
    }
  }

  // A name from the input, or one of a few that steps share.
  std::string PickName() {
    static constexpr const char* kNames[] = {"a", "b/c", "d.txt"};
    if (in_.Bool()) return kNames[in_.Below(3)];
    return in_.ShortString();
  }

  void WriteName() {
    const std::string name = PickName();
    const size_t k = PickBlob();
    const std::string contents =
        server::EncodeNameFile(Blobs()[k].digest_text, name);
    if (in_.Below(4) == 0) {
      const std::string file =
          absl::StrCat(server::NameFileName(name).substr(0, 63), in_.Below(10));
      if (file == server::NameFileName(name)) return;
      WriteFile(layout_.names_dir() + "/" + file, contents);
      built_.stray_name_files.insert(file);
      return;
    }
    if (!server::ValidateBlobName(name).ok()) return;
    WriteFile(layout_.NameFile(name), contents);
    built_.names[name] = k;
  }

  // A directory of the layout to write an arbitrary entry into.
  std::string PickDir() {
    const TestBlob& blob = Blobs()[PickBlob()];
    switch (in_.Below(10)) {
      case 0:
        return root_;
      case 1:
        return layout_.blobs_dir();
      case 2:
        return layout_.AlgorithmDir(HashAlgorithm::kSha256);
      case 3:
        return layout_.AlgorithmDir(HashAlgorithm::kSha512);
      case 4:
        return layout_.ShardDir(blob.digest);
      case 5:
        return layout_.BlobDir(blob.digest);
      case 6:
        return layout_.names_dir();
      case 7:
        return layout_.quarantine_dir();
      case 8:
        return layout_.QuarantineDir(blob.digest);
      default:
        return layout_.tmp_dir();
    }
  }

  // One path component from the input: never empty, ".", ".." or with '/'.
  std::string PickEntryName() {
    std::string name = in_.ShortString();
    for (char& c : name) {
      if (c == '/' || c == '\0') c = '_';
    }
    if (name.empty() || name == "." || name == "..") name = "x";
    return name;
  }

  void WriteRaw() {
    built_.raw = true;
    const std::string dir = PickDir();
    for (size_t k = 0; k < Blobs().size(); ++k) {
      const TestBlob& blob = Blobs()[k];
      if (dir == layout_.BlobDir(blob.digest) ||
          dir == layout_.QuarantineDir(blob.digest)) {
        built_.touched.insert(k);
      }
    }
    const std::string path = dir + "/" + PickEntryName();
    std::error_code error;
    fs::create_directories(dir, error);
    switch (in_.Below(4)) {
      case 0:
        WriteFile(path, in_.String(2048));
        break;
      case 1:
        fs::create_directory(path, error);
        break;
      case 2:
        fs::create_symlink(in_.Bool() ? root_ + "/blobs" : "missing", path,
                           error);
        break;
      default:
        mkfifo(path.c_str(), 0600);
    }
  }

  void Step() {
    switch (in_.Below(6)) {
      case 0:
      case 1: {
        const size_t k = PickBlob();
        PutBlob(layout_.BlobDir(Blobs()[k].digest), Blobs()[k]);
        break;
      }
      case 2: {
        const size_t k = PickBlob();
        PutBlob(layout_.QuarantineDir(Blobs()[k].digest), Blobs()[k]);
        break;
      }
      case 3:
        WriteName();
        break;
      case 4:
        Damage(PickBlob());
        break;
      default:
        WriteRaw();
    }
  }

  const std::string root_;
  const server::StoreLayout layout_;
  FuzzInput& in_;
  Built built_;
};

// True if `path` and every directory above it up to `root` are what they seem:
// no symlinks; a regular file with `contents`, or a directory if `contents`
// is null.
bool IsIntact(const std::string& root, const std::string& path,
              const std::string* contents) {
  std::error_code error;
  for (fs::path p = path; p != root && p.has_parent_path();
       p = p.parent_path()) {
    const fs::file_status status = fs::symlink_status(p, error);
    const bool want_file = p == path && contents != nullptr;
    if (error || (want_file ? !fs::is_regular_file(status)
                            : !fs::is_directory(status))) {
      return false;
    }
  }
  if (contents == nullptr) return true;
  std::ifstream in(path, std::ios::binary);
  const std::string found((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  return in.good() || in.eof() ? found == *contents : false;
}

bool BlobIsIntact(const std::string& root, const TestBlob& blob) {
  const std::string dir = server::StoreLayout(root).BlobDir(blob.digest);
  const std::string descriptor = *blob.tree.descriptor.Serialize();
  return IsIntact(root, dir + "/data", &blob.data) &&
         IsIntact(root, dir + "/tree", &blob.tree.tree) &&
         IsIntact(root, dir + "/descriptor", &descriptor);
}

// Which of the blobs the store serves, and whether each read of it gives
// exactly the blob's bytes or DATA_LOSS.
std::set<size_t> CheckServed(const FileStore& store) {
  const absl::StatusOr<std::vector<server::BlobInfo>> listed =
      store.List("", 100);
  FUZZ_CHECK(listed.ok(), listed.status().message());
  std::set<size_t> served;
  for (const server::BlobInfo& info : *listed) {
    size_t k = 0;
    while (k < Blobs().size() && Blobs()[k].digest_text != info.digest) ++k;
    FUZZ_CHECK(k < Blobs().size(), "serves a blob that was never put");
    served.insert(k);
    const TestBlob& blob = Blobs()[k];
    FUZZ_CHECK(info.descriptor == blob.tree.descriptor, info.digest);
    absl::StatusOr<std::shared_ptr<const server::Blob>> open =
        store.OpenBlob(blob.digest);
    if (!open.ok()) {
      // Damaged after the scan (it is not here): only DATA_LOSS.
      FUZZ_CHECK(absl::IsDataLoss(open.status()), open.status().ToString());
      continue;
    }
    absl::StatusOr<std::shared_ptr<server::VerifiedBlob>> verified =
        server::VerifiedBlob::Create(*std::move(open));
    FUZZ_CHECK(verified.ok(), verified.status().ToString());
    const TreeGeometry& geometry = (*verified)->geometry();
    for (uint64_t block = 0; block < geometry.data_block_count(); ++block) {
      std::string data;
      const absl::Status read =
          server::ReadVerified(**verified, block, block + 1, &data);
      if (!read.ok()) {
        FUZZ_CHECK(absl::IsDataLoss(read), read.ToString());
        continue;
      }
      FUZZ_CHECK(data == blob.data.substr(block * geometry.block_size(),
                                          geometry.block_size()),
                 absl::StrCat(info.digest, ": block ", block,
                              " verified but is not the blob's"));
    }
  }
  return served;
}

// Each name resolves to its blob exactly when that blob is still known.
std::map<std::string, std::string> CheckNames(const FileStore& store,
                                              const Built& built) {
  std::map<std::string, std::string> resolved;
  for (const auto& [name, k] : built.names) {
    const absl::StatusOr<ParsedDigest> digest = store.ResolveName(name);
    const absl::StatusOr<std::shared_ptr<const server::Blob>> open =
        store.OpenBlob(Blobs()[k].digest);
    const bool known = open.ok() || absl::IsDataLoss(open.status());
    if (built.raw) {
      // Entries written by hand may have replaced or hidden the name file.
      if (digest.ok()) resolved[name] = digest->ToString();
      continue;
    }
    FUZZ_CHECK(digest.ok() == known, name);
    if (!digest.ok()) {
      FUZZ_CHECK(absl::IsNotFound(digest.status()), digest.status().ToString());
      continue;
    }
    FUZZ_CHECK(*digest == Blobs()[k].digest, name);
    resolved[name] = digest->ToString();
  }
  return resolved;
}

void Run(FuzzInput& in) {
  const std::string root = WorkDir() + "/store";
  std::error_code error;
  fs::remove_all(root, error);
  fs::create_directories(root, error);
  const Built built = StoreBuilder(root, in).Build();
  // Judged on the disk, as Open will find them: a later step may have undone
  // an earlier one.
  std::set<size_t> intact;
  std::set<size_t> only_quarantined;
  const server::StoreLayout layout(root);
  for (size_t k = 0; k < Blobs().size(); ++k) {
    const ParsedDigest& digest = Blobs()[k].digest;
    if (BlobIsIntact(root, Blobs()[k])) intact.insert(k);
    if (!fs::exists(fs::symlink_status(layout.BlobDir(digest), error)) &&
        fs::exists(fs::symlink_status(layout.QuarantineDir(digest), error))) {
      only_quarantined.insert(k);
    }
  }

  server::FileStoreOptions options;
  options.root = root;
  options.log = [](absl::string_view) {};
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(options);
  const bool clean = built.versioned && !built.raw && built.touched.empty();
  if (clean) FUZZ_CHECK(store.ok(), store.status().ToString());
  if (!store.ok()) {
    fs::remove_all(root, error);
    return;
  }
  FUZZ_CHECK(fs::is_empty(root + "/tmp", error), "tmp/ is not empty");
  const std::set<size_t> served = CheckServed(**store);
  for (size_t k : intact) FUZZ_CHECK(served.count(k), "an intact blob is lost");
  for (size_t k : only_quarantined) {
    const absl::Status open = (*store)->OpenBlob(Blobs()[k].digest).status();
    FUZZ_CHECK(absl::IsDataLoss(open), open.ToString());
  }
  const std::map<std::string, std::string> names = CheckNames(**store, built);
  for (const std::string& file : built.stray_name_files) {
    FUZZ_CHECK(!fs::exists(root + "/names/" + file, error),
               "a misnamed name file was kept");
  }

  // Recovery is done once: a second start finds the same store.
  store->reset();
  store = FileStore::Open(options);
  FUZZ_CHECK(store.ok(), store.status().ToString());
  FUZZ_CHECK(CheckServed(**store) == served, "reopening changed the blobs");
  FUZZ_CHECK(CheckNames(**store, built) == names, "reopening changed names");
  store->reset();
  fs::remove_all(root, error);
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::FuzzInput in(data, size);
  verity::fuzz::Run(in);
  return 0;
}

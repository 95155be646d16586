// Fuzzes tree manifests: the input is a manifest's bytes. ParseTreeManifest
// accepts only what EncodeTreeManifest writes (an accepted manifest encodes
// back to the same bytes), and what it accepts keeps every rule a tree must
// keep: paths relative with no empty, "." or ".." name and no NUL, sorted and
// each once, each parent a directory listed before it, nothing past the
// limits. And it takes time linear in the input: an input that costs more
// CPU than 250 ms, or 100 ms per MiB above that, fails (a manifest's checks
// run on every tree a client lists and every tree Put a server takes).

#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "lib/manifest/tree_manifest.h"
#include "tests/fuzz/fuzz_input.h"

namespace verity::fuzz {
namespace {

// The path rules, written again from docs/protocol.md, not through
// CheckTreePath.
bool IsTreePath(absl::string_view path) {
  if (path.empty() || path.size() > kMaxTreePathBytes ||
      path.find('\0') != absl::string_view::npos) {
    return false;
  }
  for (absl::string_view name : absl::StrSplit(path, '/')) {
    if (name.empty() || name == "." || name == ".." ||
        name.size() > kMaxTreeNameBytes) {
      return false;
    }
  }
  return true;
}

double ThreadCpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

void Run(absl::string_view bytes) {
  const double start = ThreadCpuSeconds();
  absl::StatusOr<TreeManifest> parsed = ParseTreeManifest(bytes);
  const double budget = std::max(0.25, 0.1 * bytes.size() / (1 << 20));
  FUZZ_CHECK(ThreadCpuSeconds() - start <= budget,
             "parsing took more CPU than linear time allows");
  if (!parsed.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(parsed.status()),
               parsed.status().message());
    return;
  }
  FUZZ_CHECK(parsed->entries.size() <= kMaxTreeEntries, "too many entries");
  absl::flat_hash_set<std::string> directories;
  for (size_t i = 0; i < parsed->entries.size(); ++i) {
    const TreeEntry& entry = parsed->entries[i];
    FUZZ_CHECK(IsTreePath(entry.path), "accepted a bad path");
    FUZZ_CHECK(i == 0 || parsed->entries[i - 1].path < entry.path,
               "accepted entries out of order");
    const size_t slash = entry.path.rfind('/');
    if (slash != std::string::npos) {
      FUZZ_CHECK(directories.contains(entry.path.substr(0, slash)),
                 "accepted an entry outside a listed directory");
    }
    if (entry.type == TreeEntryType::kDirectory) {
      directories.insert(entry.path);
    }
    if (entry.type == TreeEntryType::kSymlink) {
      FUZZ_CHECK(!entry.target.empty() && entry.target.front() != '/',
                 "accepted an absolute or empty symlink target");
    }
  }
  absl::StatusOr<std::string> again = EncodeTreeManifest(parsed->entries);
  FUZZ_CHECK(again.ok(), again.status().message());
  FUZZ_CHECK(*again == bytes, "an accepted manifest encodes to other bytes");
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::Run(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

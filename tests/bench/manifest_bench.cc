// How long ParseTreeManifest takes on the worst manifests that fit its
// limits (128 MiB, 2^20 entries, 4 KiB paths and targets): what a client
// pays to list or fetch a tree it was handed, and a server on every tree Put.
// Each case is built once, then parsed ROUNDS times; prints the median and
// the worst. The goal: at most 2 s each.
// Run: bazel run -c opt //tests/bench:manifest_bench -- [ROUNDS]

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/manifest/tree_manifest.h"

namespace verity {
namespace {

TreeEntry Dir(std::string path) {
  return TreeEntry::Directory(std::move(path));
}
TreeEntry File(std::string path) {
  return TreeEntry::File(
      std::move(path),
      ParsedDigest{HashAlgorithm::kSha256, std::string(32, 'd')}, 4096);
}
TreeEntry Link(std::string path, std::string target) {
  return TreeEntry::Symlink(std::move(path), std::move(target));
}

// The folder chain d, d/d, ... `depth` deep.
std::vector<TreeEntry> Chain(int depth) {
  std::vector<TreeEntry> entries;
  std::string path = "d";
  for (int i = 0; i < depth; ++i) {
    entries.push_back(Dir(path));
    path += "/d";
  }
  return entries;
}

// A target of up to 4 KiB that goes down the chain `depth` deep and back up,
// again and again, to the root: every name on the way is a folder that is
// there.
std::string Detour(int depth) {
  std::string down, up;
  for (int i = 0; i < depth; ++i) {
    down += "d/";
    up += "../";
  }
  std::string target;
  while (target.size() + down.size() + up.size() + 1 <= kMaxTreePathBytes) {
    target += down + up;
  }
  return target;
}

// 256 links whose targets go 680 names deep into folders the tree does not
// hold and back, then on through the link before: the kind of manifest that
// took 23 s to list when each link was walked again wherever it was met.
std::vector<TreeEntry> ChainedDetours() {
  std::string detour;
  for (int i = 0; i < 680; ++i) detour += "x/";
  for (int i = 0; i < 680; ++i) detour += "../";
  std::vector<TreeEntry> entries;
  for (int i = 0; i < 256; ++i) {
    entries.push_back(Link(
        absl::StrCat("l", 1000 + i),
        absl::StrCat(detour,
                     i % 40 == 0 ? "end" : absl::StrCat("l", 1000 + i - 1))));
  }
  return entries;
}

// Links with detours through a 40-deep chain: `links` of them.
std::vector<TreeEntry> Detours(int links) {
  std::vector<TreeEntry> entries = Chain(40);
  const std::string target = Detour(40);
  for (int i = 0; i < links; ++i) {
    entries.push_back(Link(absl::StrCat("l", 1000000 + i), target + "x"));
  }
  return entries;
}

// One link with a 4 KiB detour, and as many as fit of links that pass
// through it 40 times ("l/l/.../l": each a full walk of its target, unless
// remembered).
std::vector<TreeEntry> ThroughOneLink() {
  std::vector<TreeEntry> entries = Chain(40);
  entries.push_back(Link("l", Detour(40)));
  std::string through;
  for (int i = 0; i < kMaxSymlinkHops; ++i) through += "l/";
  through.pop_back();
  while (entries.size() < kMaxTreeEntries) {
    entries.push_back(
        Link(absl::StrCat("m", 1000000 + entries.size()), through));
  }
  return entries;
}

// 2^20 files, 1024 to a folder, their names as long as the manifest's size
// allows.
std::vector<TreeEntry> MostEntries() {
  std::vector<TreeEntry> entries;
  const std::string pad(60, 'p');
  for (int d = 0; entries.size() < kMaxTreeEntries; ++d) {
    const std::string folder = absl::StrCat("folder", 10000 + d);
    entries.push_back(Dir(folder));
    for (int f = 0; f < 1024 && entries.size() < kMaxTreeEntries; ++f) {
      entries.push_back(File(absl::StrCat(folder, "/", pad, 10000 + f)));
    }
  }
  return entries;
}

// Folders nested to the longest path, 2047 deep, with files at every level
// with long names, until the manifest is full.
std::vector<TreeEntry> DeepestPaths() {
  std::vector<TreeEntry> entries = Chain(2047);
  const size_t chain = entries.size();
  std::string name(200, 'f');
  for (size_t i = 0; i < chain; ++i) {
    for (int f = 0; f < 12; ++f) {
      const std::string path =
          absl::StrCat(entries[i].path, "/", name.substr(0, 190), 100 + f);
      if (path.size() > kMaxTreePathBytes) break;
      entries.push_back(File(path));
    }
  }
  return entries;
}

struct Case {
  const char* name;
  std::function<std::vector<TreeEntry>()> make;
};

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

}  // namespace
}  // namespace verity

int main(int argc, char** argv) {
  using namespace verity;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::vector<Case> cases = {
      {"256 links, 3 KiB detours, each on through the one before",
       ChainedDetours},
      {"links with 4 KiB detours, to 128 MiB", [] { return Detours(31000); }},
      {"2^20 links through one link, 40 times each", ThroughOneLink},
      {"2^20 files, 1024 per folder", MostEntries},
      {"deepest paths: 2047 folders, 4 KiB paths", DeepestPaths},
  };
  std::printf("| case | entries | bytes | parse median | worst |\n");
  std::printf("| --- | --- | --- | --- | --- |\n");
  for (const Case& c : cases) {
    const absl::StatusOr<std::string> bytes = EncodeTreeManifest(c.make());
    if (!bytes.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.name,
                   bytes.status().ToString().c_str());
      return 1;
    }
    std::vector<double> seconds;
    size_t entries = 0;
    for (int r = 0; r < rounds; ++r) {
      const absl::Time start = absl::Now();
      const absl::StatusOr<TreeManifest> parsed = ParseTreeManifest(*bytes);
      seconds.push_back(Seconds(absl::Now() - start));
      if (!parsed.ok()) {
        std::fprintf(stderr, "%s: %s\n", c.name,
                     parsed.status().ToString().c_str());
        return 1;
      }
      entries = parsed->entries.size();
    }
    std::sort(seconds.begin(), seconds.end());
    std::printf("| %s | %zu | %zu | %.3f s | %.3f s |\n", c.name, entries,
                bytes->size(), seconds[seconds.size() / 2], seconds.back());
    std::fflush(stdout);
  }
  return 0;
}

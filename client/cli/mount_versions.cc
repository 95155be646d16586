#include "client/cli/mount_versions.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "client/cli/tree_transfer.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/versioned_folder.h"
#include "verity/tree.h"

namespace verity::cli {
namespace {

// One blob as a tree of one file: named as the name's last part, or by the
// digest's hex.
std::vector<sdk::TreeEntry> SingleFile(const client::BlobRef& ref,
                                       const ResolvedBlob& blob) {
  sdk::TreeEntry file;
  file.path = ref.name.empty() ? absl::BytesToHexString(blob.digest().bytes())
                               : ref.name.substr(ref.name.rfind('/') + 1);
  file.type = sdk::TreeEntryType::kFile;
  file.digest = blob.digest();
  file.size = blob.info.size;
  return std::vector<sdk::TreeEntry>{file};
}

}  // namespace

absl::StatusOr<MountVersion> LoadVersion(sdk::Client& client,
                                         const client::BlobRef& ref,
                                         const mount::TreeFsOptions& options) {
  ASSIGN_OR_RETURN(const ResolvedBlob blob, ResolveBlob(client, ref));
  return LoadResolved(client, ref, blob, options);
}

absl::StatusOr<MountVersion> LoadResolved(sdk::Client& client,
                                          const client::BlobRef& ref,
                                          const ResolvedBlob& blob,
                                          const mount::TreeFsOptions& options) {
  std::vector<sdk::TreeEntry> entries;
  if (blob.tree) {
    ASSIGN_OR_RETURN(entries,
                     sdk::ReadTree(client, blob.digest(), sdk::FetchOptions()));
  } else {
    entries = SingleFile(ref, blob);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<mount::TreeFs> fs,
                   mount::TreeFs::Create(client, entries, options));
  return MountVersion{blob.digest(), std::move(fs), entries.size()};
}

Follower::Follower(sdk::Client& client, client::BlobRef ref,
                   mount::TreeFsOptions options, absl::Duration interval,
                   bool prefetch, mount::FollowedFs& fs, std::FILE* err)
    : client_(client),
      ref_(std::move(ref)),
      options_(std::move(options)),
      interval_(interval),
      prefetch_(prefetch),
      fs_(fs),
      err_(err),
      thread_([this] { Run(); }) {}

Follower::~Follower() {
  stop_.Notify();
  thread_.join();
}

void Follower::Run() {
  Prefetch(fs_.current_tree());
  while (!stop_.WaitForNotificationWithTimeout(interval_)) Step();
  prefetching_.reset();
}

void Follower::Prefetch(std::shared_ptr<mount::TreeFs> tree) {
  if (!prefetch_ || tree == nullptr) return;
  prefetching_.reset();  // stops the one before
  prefetching_ = std::make_unique<BackgroundPrefetch>(std::move(tree), err_);
}

// What the name means now, checked, before anything of it is read: the
// version shown costs one Stat.
absl::StatusOr<std::optional<MountVersion>> Follower::Next() {
  ASSIGN_OR_RETURN(const ResolvedBlob blob, ResolveBlob(client_, ref_));
  if (VersionedFolder::IdOf(blob.digest().ToString()) == fs_.current()) {
    return std::nullopt;
  }
  return LoadResolved(client_, ref_, blob, options_);
}

void Follower::Step() {
  absl::StatusOr<std::optional<MountVersion>> next = Next();
  if (!next.ok()) {
    PrintLine(err_, "verity mount",
              absl::StrCat(ref_.ToString(), ": not followed, still showing ",
                           fs_.current(), ": ", next.status().ToString()));
    return;
  }
  if (!next->has_value()) return;
  MountVersion& version = **next;
  const std::string id = VersionedFolder::IdOf(version.digest.ToString());
  std::shared_ptr<mount::TreeFs> tree = std::move(version.fs);
  fs_.Show(id, tree);
  PrintLine(
      err_, "verity mount",
      absl::StrCat(ref_.ToString(), ": now showing ", version.digest.ToString(),
                   " (", version.entries, " entries)"));
  Prefetch(std::move(tree));
}

BackgroundPrefetch::BackgroundPrefetch(std::shared_ptr<mount::TreeFs> fs,
                                       std::FILE* err)
    : fs_(std::move(fs)), thread_([this, err] { Run(*fs_, err); }) {}

BackgroundPrefetch::~BackgroundPrefetch() {
  stop_.store(true);
  thread_.join();
}

void BackgroundPrefetch::Run(mount::TreeFs& fs, std::FILE* err) {
  const absl::Time start = absl::Now();
  const absl::StatusOr<mount::PrefetchStats> stats = fs.Prefetch(stop_);
  if (!stats.ok()) {
    PrintLine(err, "verity mount",
              absl::StrCat("prefetch failed: ", stats.status().ToString()));
    return;
  }
  PrintLine(
      err, "verity mount",
      absl::StrCat("prefetch ",
                   stats->stopped      ? "stopped"
                   : stats->cache_full ? "ended as the cache would be full"
                                       : "done",
                   ": ", stats->files, " files in the cache, ", stats->bytes,
                   " bytes fetched, ", stats->failed, " files failed, in ",
                   absl::FormatDuration(absl::Now() - start)));
}

}  // namespace verity::cli

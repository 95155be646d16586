#include "client/mount/follower.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/manifest/versioned_folder.h"
#include "verity/tree.h"

namespace verity::mount {
namespace {

// One blob as a tree of one file: named as the name's last part, or by the
// digest's hex.
std::vector<sdk::TreeEntry> SingleFile(const client::BlobRef& ref,
                                       const client::ResolvedBlob& blob) {
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
                                         const TreeFsOptions& options) {
  ASSIGN_OR_RETURN(const client::ResolvedBlob blob,
                   client::ResolveBlob(client, ref));
  return LoadResolved(client, ref, blob, options);
}

absl::StatusOr<MountVersion> LoadResolved(sdk::Client& client,
                                          const client::BlobRef& ref,
                                          const client::ResolvedBlob& blob,
                                          const TreeFsOptions& options) {
  std::vector<sdk::TreeEntry> entries;
  if (blob.tree) {
    ASSIGN_OR_RETURN(entries,
                     sdk::ReadTree(client, blob.digest(), sdk::FetchOptions()));
  } else {
    entries = SingleFile(ref, blob);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<TreeFs> fs,
                   TreeFs::Create(client, entries, options));
  return MountVersion{blob.digest(), std::move(fs), entries.size()};
}

BackgroundPrefetch::BackgroundPrefetch(std::shared_ptr<TreeFs> fs, LogLine log)
    : fs_(std::move(fs)), log_(std::move(log)), thread_([this] { Run(); }) {}

BackgroundPrefetch::~BackgroundPrefetch() {
  stop_.store(true);
  thread_.join();
}

void BackgroundPrefetch::Run() {
  const absl::Time start = absl::Now();
  const absl::StatusOr<PrefetchStats> stats = fs_->Prefetch(stop_);
  if (!stats.ok()) {
    log_(absl::StrCat("prefetch failed: ", stats.status().ToString()));
    return;
  }
  log_(absl::StrCat("prefetch ",
                    stats->stopped      ? "stopped"
                    : stats->cache_full ? "ended as the cache would be full"
                                        : "done",
                    ": ", stats->files, " files in the cache, ", stats->bytes,
                    " bytes fetched, ", stats->failed, " files failed, in ",
                    absl::FormatDuration(absl::Now() - start)));
}

VersionPoller::VersionPoller(sdk::Client& client, client::BlobRef ref,
                             TreeFsOptions options, bool prefetch,
                             FollowedFs& fs, LogLine log)
    : client_(client),
      ref_(std::move(ref)),
      options_(std::move(options)),
      prefetch_(prefetch),
      fs_(fs),
      log_(std::move(log)) {}

void VersionPoller::Start() { Prefetch(fs_.current_tree()); }

void VersionPoller::Prefetch(std::shared_ptr<TreeFs> tree) {
  if (!prefetch_ || tree == nullptr) return;
  prefetching_.reset();  // stops the one before
  prefetching_ = std::make_unique<BackgroundPrefetch>(std::move(tree), log_);
}

// What the name means now, checked, before anything of it is read.
absl::StatusOr<std::optional<MountVersion>> VersionPoller::Next() {
  ASSIGN_OR_RETURN(const client::ResolvedBlob blob,
                   client::ResolveBlob(client_, ref_));
  if (VersionedFolder::IdOf(blob.digest().ToString()) == fs_.current()) {
    return std::nullopt;
  }
  return LoadResolved(client_, ref_, blob, options_);
}

void VersionPoller::Poll() {
  absl::StatusOr<std::optional<MountVersion>> next = Next();
  if (!next.ok()) {
    log_(absl::StrCat(ref_.ToString(), ": not followed, still showing ",
                      fs_.current(), ": ", next.status().ToString()));
    return;
  }
  if (!next->has_value()) return;
  MountVersion& version = **next;
  const std::string id = VersionedFolder::IdOf(version.digest.ToString());
  std::shared_ptr<TreeFs> tree = std::move(version.fs);
  fs_.Show(id, tree);
  log_(absl::StrCat(ref_.ToString(), ": now showing ",
                    version.digest.ToString(), " (", version.entries,
                    " entries)"));
  Prefetch(std::move(tree));
}

Follower::Follower(std::unique_ptr<VersionPoller> poller,
                   absl::Duration interval)
    : poller_(std::move(poller)),
      interval_(interval),
      thread_([this] { Run(); }) {}

Follower::~Follower() {
  stop_.Notify();
  thread_.join();
}

void Follower::Run() {
  poller_->Start();
  while (!stop_.WaitForNotificationWithTimeout(interval_)) poller_->Poll();
}

}  // namespace verity::mount

// The versions `verity mount` serves, and what runs beside it: a version
// loaded (the name resolved and checked as `verity get` checks it, the
// manifest read), `--follow`'s polling for the next one (VersionPoller, one
// poll; Follower, a poll every interval on a thread of its own), and
// `--prefetch` (BackgroundPrefetch).

#ifndef VERITYD_CLIENT_MOUNT_FOLLOWER_H_
#define VERITYD_CLIENT_MOUNT_FOLLOWER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "client/mount/followed_fs.h"
#include "client/mount/tree_fs.h"
#include "client/names/blob_ref.h"
#include "client/names/resolved_blob.h"
#include "verity/client.h"

namespace verity::mount {

// Where the follower and the prefetch say what they did, a line at a time;
// called from their threads.
using LogLine = std::function<void(absl::string_view line)>;

// One version of `ref`: what it means now (checked: trust, rollback), and
// the file system of it (a tree's, or one blob as a single file named as the
// name's last part, or by the digest's hex).
struct MountVersion {
  sdk::Digest digest;
  std::unique_ptr<TreeFs> fs;
  size_t entries = 0;
};
absl::StatusOr<MountVersion> LoadVersion(sdk::Client& client,
                                         const client::BlobRef& ref,
                                         const TreeFsOptions& options);
// The same for `blob`, what `ref` was resolved to (ResolveBlob).
absl::StatusOr<MountVersion> LoadResolved(sdk::Client& client,
                                          const client::BlobRef& ref,
                                          const client::ResolvedBlob& blob,
                                          const TreeFsOptions& options);

// Runs TreeFs::Prefetch on a thread of its own until it ends or this is
// destroyed (which stops and joins it), and logs what it did.
class BackgroundPrefetch {
 public:
  BackgroundPrefetch(std::shared_ptr<TreeFs> fs, LogLine log);
  ~BackgroundPrefetch();

 private:
  void Run();

  const std::shared_ptr<TreeFs> fs_;  // kept while it runs
  const LogLine log_;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started once the rest is built
};

// What `--follow` does at each poll. Thread-compatible: one poll at a time.
class VersionPoller {
 public:
  // With `prefetch`, each version shown is prefetched (a newer one stops the
  // one before); Start() prefetches the one shown first.
  VersionPoller(sdk::Client& client, client::BlobRef ref, TreeFsOptions options,
                bool prefetch, FollowedFs& fs, LogLine log);

  // Prefetches the version `fs` shows, with `prefetch`.
  void Start();
  // Looks at what the name means now, and shows it in `fs` if it is a new
  // version that passes every check; one that fails any is logged and never
  // shown. The version shown costs one Stat.
  void Poll();

 private:
  absl::StatusOr<std::optional<MountVersion>> Next();
  void Prefetch(std::shared_ptr<TreeFs> tree);

  sdk::Client& client_;
  const client::BlobRef ref_;
  const TreeFsOptions options_;
  const bool prefetch_;
  FollowedFs& fs_;
  const LogLine log_;
  std::unique_ptr<BackgroundPrefetch> prefetching_;
};

// A VersionPoller polled every `interval` on a thread of its own; stops
// (joined, its prefetch too) when destroyed.
class Follower {
 public:
  Follower(std::unique_ptr<VersionPoller> poller, absl::Duration interval);
  ~Follower();

 private:
  void Run();

  const std::unique_ptr<VersionPoller> poller_;  // the thread's
  const absl::Duration interval_;
  absl::Notification stop_;
  std::thread thread_;  // last: started once the rest is built
};

}  // namespace verity::mount

#endif  // VERITYD_CLIENT_MOUNT_FOLLOWER_H_

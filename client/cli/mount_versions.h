// The versions `verity mount` serves, and what runs beside it: a version
// loaded (the name resolved and checked as `verity get` checks it, the
// manifest read), `--follow`'s polling for the next one, and `--prefetch`.

#ifndef VERITYD_CLIENT_CLI_MOUNT_VERSIONS_H_
#define VERITYD_CLIENT_CLI_MOUNT_VERSIONS_H_

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "client/cli/blob_ref.h"
#include "client/cli/tree_transfer.h"
#include "client/mount/followed_fs.h"
#include "client/mount/tree_fs.h"
#include "verity/client.h"

namespace verity::cli {

// One version of `ref`: what it means now (checked: trust, rollback), and
// the file system of it (a tree's, or one blob as a single file named as the
// name's last part, or by the digest's hex).
struct MountVersion {
  sdk::Digest digest;
  std::unique_ptr<mount::TreeFs> fs;
  size_t entries = 0;
};
absl::StatusOr<MountVersion> LoadVersion(sdk::Client& client,
                                         const client::BlobRef& ref,
                                         const mount::TreeFsOptions& options);
// The same for `blob`, what `ref` was resolved to (ResolveBlob).
absl::StatusOr<MountVersion> LoadResolved(sdk::Client& client,
                                          const client::BlobRef& ref,
                                          const ResolvedBlob& blob,
                                          const mount::TreeFsOptions& options);

class BackgroundPrefetch;

// Looks for a new version of the name `ref` every `interval` on a thread of
// its own, and shows one that passes every check in `fs`; one that fails
// any is logged and never shown. With `prefetch`, each version shown is
// prefetched (BackgroundPrefetch; a newer one stops the one before), the
// first from the start. Stops (joined) when destroyed.
class Follower {
 public:
  Follower(sdk::Client& client, client::BlobRef ref,
           mount::TreeFsOptions options, absl::Duration interval, bool prefetch,
           mount::FollowedFs& fs, std::FILE* err);
  ~Follower();

 private:
  void Run();
  void Step();
  // The name's version; nullopt if it is the one shown.
  absl::StatusOr<std::optional<MountVersion>> Next();
  void Prefetch(std::shared_ptr<mount::TreeFs> tree);

  sdk::Client& client_;
  const client::BlobRef ref_;
  const mount::TreeFsOptions options_;
  const absl::Duration interval_;
  const bool prefetch_;
  mount::FollowedFs& fs_;
  std::FILE* const err_;
  std::unique_ptr<BackgroundPrefetch> prefetching_;  // the follower's thread's
  absl::Notification stop_;
  std::thread thread_;  // last: started once the rest is built
};

// Runs TreeFs::Prefetch on a thread of its own until it ends or this is
// destroyed (which stops and joins it), and logs what it did.
class BackgroundPrefetch {
 public:
  BackgroundPrefetch(std::shared_ptr<mount::TreeFs> fs, std::FILE* err);
  ~BackgroundPrefetch();

 private:
  void Run(mount::TreeFs& fs, std::FILE* err);

  const std::shared_ptr<mount::TreeFs> fs_;  // kept while it runs
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: started once the rest is built
};

}  // namespace verity::cli

#endif  // VERITYD_CLIENT_CLI_MOUNT_VERSIONS_H_

#include "client/mount/fuse_mount.h"

#define FUSE_USE_VERSION 314
#include <fuse3/fuse_lowlevel.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "client/mount/fuse_connection.h"
#include "lib/base/executor.h"
#include "lib/base/printable.h"
#include "lib/base/status_macros.h"
#include "lib/base/stop_signals.h"

namespace verity::mount {
namespace {

struct Served {
  Served(ReadOnlyFs& fs, const FuseMountOptions& options, std::FILE* err)
      : fs(fs), options(options), err(err) {}

  ReadOnlyFs& fs;
  const FuseMountOptions& options;
  std::FILE* const err;
  std::string mountpoint;        // absolute, resolved once at the start
  std::string device;            // "0:NN", once mounted
  std::once_flag initialized;    // the kernel has taken INIT's reply
  std::atomic<int64_t> open{0};  // files and folders open
  // Reads run here, never on the session's threads, so that a read that
  // waits on the network holds up no LOOKUP, GETATTR or READDIR.
  std::unique_ptr<Executor> reads;
  // The session has ended: reads still queued answer EIO at once.
  std::atomic<bool> ended{false};
};

void Log(Served& served, absl::string_view line) {
  PrintLine(served.err, "verity mount", line);
}

// Every request but INIT: the kernel sends none before it took INIT's reply,
// which lowers read-ahead to at most 128 KiB. Raised past it here, so that a
// sequential reader's window arrives as several large requests at once,
// each a verified stream (best effort: sysfs may be read-only in a
// container).
Served& ServedOf(fuse_req_t req) {
  Served& served = *static_cast<Served*>(fuse_req_userdata(req));
  std::call_once(served.initialized, [&served] {
    const absl::Status raised =
        SetReadAhead(served.device, served.options.read_ahead);
    if (!raised.ok()) {
      Log(served,
          absl::StrCat("read-ahead stays the kernel's: ", raised.ToString()));
    }
  });
  return served;
}

int ErrnoOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      return ENOENT;
    case absl::StatusCode::kFailedPrecondition:
      return ENOTDIR;
    case absl::StatusCode::kInvalidArgument:
      return EINVAL;
    default:
      return EIO;  // DATA_LOSS, DEADLINE_EXCEEDED, UNAVAILABLE...
  }
}

void Init(void* userdata, fuse_conn_info* conn) {
  const FuseMountOptions& options = static_cast<Served*>(userdata)->options;
  conn->max_read = options.max_read;
  // The kernel offers its read-ahead (128 KiB) and takes no more from INIT:
  // RaiseReadAhead raises it after the mount.
  conn->max_readahead = std::min(options.max_read, conn->max_readahead);
  conn->max_background = 64;                // read-ahead requests in flight
  conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;  // content never changes
  if (conn->capable & FUSE_CAP_CACHE_SYMLINKS) {
    conn->want |= FUSE_CAP_CACHE_SYMLINKS;
  }
}

void ReplyEntry(fuse_req_t req, uint64_t inode) {
  Served& served = ServedOf(req);
  fuse_entry_param entry = {};
  entry.entry_timeout = served.options.cache_seconds;
  if (inode != 0) {  // 0: a negative entry, cached as long
    absl::StatusOr<struct stat> attr = served.fs.Attr(inode);
    if (!attr.ok()) {
      fuse_reply_err(req, ErrnoOf(attr.status()));
      return;
    }
    entry.ino = inode;
    entry.generation = 1;
    entry.attr = *attr;
    entry.attr_timeout = served.options.cache_seconds;
  }
  fuse_reply_entry(req, &entry);
}

void Lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  absl::StatusOr<uint64_t> inode = ServedOf(req).fs.Lookup(parent, name);
  if (!inode.ok() && inode.status().code() != absl::StatusCode::kNotFound) {
    fuse_reply_err(req, ErrnoOf(inode.status()));
    return;
  }
  ReplyEntry(req, inode.value_or(0));
}

void GetAttr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Served& served = ServedOf(req);
  absl::StatusOr<struct stat> attr = served.fs.Attr(ino);
  if (!attr.ok()) {
    fuse_reply_err(req, ErrnoOf(attr.status()));
    return;
  }
  fuse_reply_attr(req, &*attr, served.options.cache_seconds);
}

void ReadLink(fuse_req_t req, fuse_ino_t ino) {
  absl::StatusOr<std::string> target = ServedOf(req).fs.ReadLink(ino);
  if (!target.ok()) {
    fuse_reply_err(req, ErrnoOf(target.status()));
    return;
  }
  fuse_reply_readlink(req, target->c_str());
}

// The listing is taken once, when the folder is opened, and kept with the
// open folder (fi->fh): each READDIR then costs what it returns.
void OpenDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Served& served = ServedOf(req);
  absl::StatusOr<Listing> listing = served.fs.List(ino);
  if (!listing.ok()) {
    fuse_reply_err(req, ErrnoOf(listing.status()));
    return;
  }
  fi->fh = reinterpret_cast<uint64_t>(new Listing(*std::move(listing)));
  fi->cache_readdir = 1;
  fi->keep_cache = 1;
  served.open++;
  served.fs.Opened(ino);
  if (fuse_reply_open(req, fi) != 0) {
    // The opener is gone (interrupted): no RELEASEDIR will come.
    delete reinterpret_cast<Listing*>(fi->fh);
    served.open--;
    served.fs.Released(ino);
  }
}

// Entry i of a listing: ".", "..", then the entries.
void ReadDir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
             fuse_file_info* fi) {
  const Listing* listing = reinterpret_cast<const Listing*>(fi->fh);
  std::vector<char> buf(size);
  size_t used = 0;
  const size_t count = listing->entries.size() + 2;
  for (size_t i = std::max<off_t>(offset, 0); i < count; ++i) {
    struct stat st = {};
    const char* name = nullptr;
    if (i < 2) {
      name = i == 0 ? "." : "..";
      st.st_ino = i == 0 ? ino : listing->parent;
      st.st_mode = S_IFDIR;
    } else {
      const DirEntry& entry = listing->entries[i - 2];
      name = entry.name.c_str();
      st.st_ino = entry.inode;
      st.st_mode = entry.type;
    }
    const size_t need = fuse_add_direntry(req, buf.data() + used, size - used,
                                          name, &st, i + 1);
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void Open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if ((fi->flags & O_ACCMODE) != O_RDONLY) {
    fuse_reply_err(req, EROFS);
    return;
  }
  absl::StatusOr<struct stat> attr = ServedOf(req).fs.Attr(ino);
  if (!attr.ok()) {
    fuse_reply_err(req, ErrnoOf(attr.status()));
    return;
  }
  fi->keep_cache = 1;  // the kernel's cached pages stay valid: immutable
  fi->noflush = 1;
  ServedOf(req).open++;
  ServedOf(req).fs.Opened(ino);
  fuse_reply_open(req, fi);
}

void Release(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  ServedOf(req).open--;
  ServedOf(req).fs.Released(ino);
  fuse_reply_err(req, 0);
}

void ReleaseDir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  delete reinterpret_cast<Listing*>(fi->fh);
  Release(req, ino, fi);
}

// Answered later, on a thread of served.reads: the session's thread is free
// for the next request as soon as this returns.
void Read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset,
          fuse_file_info*) {
  Served& served = ServedOf(req);
  const absl::Time asked = absl::Now();
  const absl::Status queued =
      served.reads->Submit([&served, req, ino, size, offset, asked] {
        if (served.ended.load()) {
          fuse_reply_err(req, EIO);
          return;
        }
        absl::StatusOr<Buffer> bytes = served.fs.Read(ino, offset, size, asked);
        if (!bytes.ok()) {
          fuse_reply_err(req, ErrnoOf(bytes.status()) == EINVAL ? EISDIR : EIO);
          return;
        }
        fuse_reply_buf(req, bytes->view().data(), bytes->size());
      });
  if (!queued.ok()) fuse_reply_err(req, EIO);
}

void StatFs(fuse_req_t req, fuse_ino_t) {
  const struct statvfs st = ServedOf(req).fs.StatFs();
  fuse_reply_statfs(req, &st);
}

fuse_lowlevel_ops Operations() {
  fuse_lowlevel_ops ops = {};
  ops.init = Init;
  ops.lookup = Lookup;
  ops.getattr = GetAttr;
  ops.readlink = ReadLink;
  ops.opendir = OpenDir;
  ops.readdir = ReadDir;
  ops.open = Open;
  ops.release = Release;
  ops.releasedir = ReleaseDir;
  ops.read = Read;
  ops.statfs = StatFs;
  return ops;
}

// The kernel's caches of the session, for a file system that changes
// (FollowedFs). What the kernel has not cached is no error.
class SessionCache final : public KernelCache {
 public:
  explicit SessionCache(fuse_session* se) : se_(se) {}
  void ForgetEntry(uint64_t parent, absl::string_view name) override {
    fuse_lowlevel_notify_inval_entry(se_, parent, name.data(), name.size());
  }
  void ForgetInode(uint64_t inode) override {
    fuse_lowlevel_notify_inval_inode(se_, inode, 0, 0);
  }

 private:
  fuse_session* const se_;
};

// The mount options, as `mount -o` takes them.
std::string MountOptionsOf(const FuseMountOptions& options) {
  // fsname may hold neither ',' nor a space.
  std::string source = absl::StrReplaceAll(options.source, {{",", "_"}});
  std::string text = absl::StrCat("ro,nosuid,nodev,default_permissions,",
                                  "subtype=verity,fsname=", source,
                                  ",max_read=", options.max_read);
  if (options.allow_other) absl::StrAppend(&text, ",allow_other");
  return text;
}

// After a stop, how long the session may outlive the detached mount with no
// file open before its connection is aborted.
constexpr absl::Duration kStopGrace = absl::Seconds(5);

// Waits for SIGTERM, SIGINT or SIGHUP (blocked in every thread) until
// `done`; on one, detaches the mount lazily: new opens no longer find it,
// files open are served until closed, and the kernel ends the session when
// the last is. Should the session outlive that by kStopGrace (a process's
// working directory inside it, a request the kernel still waits for),
// aborts its connection.
void WaitForStop(Served& served, const std::atomic<bool>& done) {
  const sigset_t signals = StopSignals();
  const timespec tick = {0, 100 * 1000 * 1000};
  std::optional<absl::Time> idle_since;  // stopped, and no file open
  bool aborted = false;
  while (!done.load()) {
    if (idle_since.has_value()) {
      nanosleep(&tick, nullptr);
      if (served.open.load() > 0) {
        idle_since = absl::Now();
      } else if (!aborted && absl::Now() - *idle_since > kStopGrace) {
        Log(served,
            "the session outlived its unmount with no file open: "
            "aborting its connection");
        const absl::Status status = AbortConnection(served.device);
        if (!status.ok()) Log(served, status.ToString());
        aborted = true;
      }
      continue;
    }
    const int signal = sigtimedwait(&signals, nullptr, &tick);
    if (signal <= 0) continue;
    const std::string& mountpoint = served.mountpoint;
    Log(served, absl::StrCat("signal ", signal, ": unmounting ", mountpoint,
                             "; ", served.open.load(),
                             " files and folders open are served until "
                             "closed"));
    // The path resolved at the start, and never through a symlink.
    if (umount2(mountpoint.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0) {
      Log(served, absl::StrCat("umount ", mountpoint, ": ", strerror(errno)));
    }
    idle_since = absl::Now();
  }
}

// The mountpoint as an absolute path with no symlink in it.
absl::StatusOr<std::string> ResolveMountpoint(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot mount on ", path, ": ", strerror(errno)));
  }
  return std::string(resolved);
}

}  // namespace

absl::Status ServeFuse(ReadOnlyFs& fs, const FuseMountOptions& options,
                       std::FILE* err) {
  Served served(fs, options, err);
  ASSIGN_OR_RETURN(served.mountpoint, ResolveMountpoint(options.mountpoint));
  const std::string mount_options = MountOptionsOf(options);
  std::vector<const char*> argv = {"verity", "-o", mount_options.c_str()};
  if (options.debug) argv.push_back("-d");
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()),
                                  const_cast<char**>(argv.data()));
  // fuse_session_new may copy and extend `args`: its copy is freed here.
  absl::Cleanup free_args = [&args] { fuse_opt_free_args(&args); };
  const fuse_lowlevel_ops ops = Operations();
  fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), &served);
  if (se == nullptr) {
    return absl::InternalError("fuse_session_new failed (see above)");
  }
  absl::Cleanup destroy = [se] { fuse_session_destroy(se); };
  if (fuse_session_mount(se, served.mountpoint.c_str()) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot mount on ", served.mountpoint,
        " (needs /dev/fuse and CAP_SYS_ADMIN or fusermount3; see above)"));
  }
  absl::StatusOr<std::string> device = FuseDeviceOf(served.mountpoint);
  if (!device.ok()) {
    fuse_session_unmount(se);
    return device.status();
  }
  served.device = *device;
  ExecutorOptions reads;
  reads.threads = options.max_threads;
  reads.max_queued = 4096;
  reads.name = "fuse-read";
  served.reads = std::make_unique<Executor>(reads);
  SessionCache kernel(se);
  fs.SetKernelCache(&kernel);
  std::atomic<bool> done{false};
  std::thread stopper(WaitForStop, std::ref(served), std::cref(done));
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(config, options.max_threads);
  fuse_loop_cfg_set_idle_threads(config, options.max_threads);
  const int loop = fuse_session_loop_mt(se, config);
  fuse_loop_cfg_destroy(config);
  // The kernel has let go of the session: nothing is told it from here on,
  // reads still queued fail at once, those running end within their
  // timeout.
  fs.SetKernelCache(nullptr);
  served.ended.store(true);
  served.reads.reset();
  done.store(true);
  stopper.join();
  fuse_session_unmount(se);
  if (loop != 0 && !fuse_session_exited(se)) {
    return absl::InternalError(
        absl::StrCat("the FUSE session ended with ", strerror(-loop)));
  }
  return absl::OkStatus();
}

}  // namespace verity::mount

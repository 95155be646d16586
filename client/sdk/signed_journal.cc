// Implements SignedJournal: O_APPEND lines under a lock, fsync'd.

#include "client/sdk/signed_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/sdk/seen_names.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::client {
namespace {

bool IsLowerHex(absl::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) {
    return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
  });
}

}  // namespace

SignedJournal::SignedJournal(std::string dir, const std::string& key_id)
    : dir_(std::move(dir)),
      path_(JoinPath(dir_, absl::StrCat("signed-", key_id, ".journal"))),
      lock_path_(absl::StrCat(path_, ".lock")) {}

absl::Status SignedJournal::Append(const NameStatement& statement) const {
  RETURN_IF_ERROR(MakeStateDir(dir_));
  ASSIGN_OR_RETURN(const UniqueFd lock, LockExclusive(lock_path_));
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(path_, O_RDWR | O_APPEND | O_CREAT, 0600));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path_);
  std::string line = absl::StrCat(Sha256Hex(statement.body), "\n");
  if (st.st_size > 0) {
    char last = '\n';
    if (pread(fd.get(), &last, 1, st.st_size - 1) != 1) {
      return ErrnoStatus(errno, "pread", path_);
    }
    // A line a crash cut short stays a line of its own.
    if (last != '\n') line.insert(0, "\n");
  }
  RETURN_IF_ERROR(WriteAll(fd.get(), AsBytes(line), path_));
  RETURN_IF_ERROR(Fsync(fd.get(), path_));
  RETURN_IF_ERROR(fd.Close(path_));
  // A new journal's name, durable too.
  return st.st_size == 0 ? FsyncDir(dir_) : absl::OkStatus();
}

absl::StatusOr<absl::flat_hash_set<std::string>> SignedJournal::Load() const {
  // A directory others can write into could hold any journal: one that
  // claims a stolen key's statements as the publisher's.
  RETURN_IF_ERROR(CheckOwnDirectory(dir_, /*absent_ok=*/true));
  absl::StatusOr<std::string> text =
      ReadSmallRegularFile(path_, kMaxSignedJournalBytes);
  if (absl::IsNotFound(text.status())) {
    return absl::flat_hash_set<std::string>();
  }
  RETURN_IF_ERROR(text.status());
  const std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
  absl::flat_hash_set<std::string> hashes;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    // The text after the last newline: empty, or a line never finished
    // (its statement was never published).
    if (i + 1 == lines.size()) break;
    if (!IsLowerHex(line) || line.size() > 64) {
      return absl::DataLossError(
          absl::StrCat("the journal ", path_, " is damaged at line ", i + 1));
    }
    // Shorter: a line a crash cut short, ended by the next append.
    if (line.size() == 64) hashes.insert(std::string(line));
  }
  return hashes;
}

}  // namespace verity::client

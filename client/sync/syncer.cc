#include "client/sync/syncer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/names/resolved_blob.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"

namespace verity::sync {
namespace {

std::vector<std::string> TopLevelNames(
    const std::vector<sdk::TreeEntry>& entries) {
  std::vector<std::string> names;
  for (const sdk::TreeEntry& entry : entries) {
    if (entry.path.find('/') == std::string::npos) names.push_back(entry.path);
  }
  return names;
}

}  // namespace

Syncer::Syncer(sdk::Client& client, SyncerOptions options,
               VersionedFolder folder)
    : client_(client),
      options_(std::move(options)),
      ref_{std::nullopt, options_.name},
      folder_(std::move(folder)) {}

absl::Status Syncer::Attempt() {
  state_.last_attempt = options_.now();
  absl::StatusOr<bool> switched = Update();
  state_.last_error =
      switched.ok() ? "" : std::string(switched.status().message());
  if (switched.ok()) {
    state_.last_success = state_.last_attempt;
    if (options_.metrics != nullptr) {
      options_.metrics->Succeeded(state_.last_success);
    }
  } else {
    Log(absl::StrCat("failed, keeping ",
                     state_.digest.empty() ? "nothing" : state_.digest, ": ",
                     switched.status().ToString()));
    if (options_.metrics != nullptr) {
      options_.metrics->Failed(switched.status());
    }
  }
  const absl::Status written = WriteStatus();
  if (!written.ok()) Log(absl::StrCat("status: ", written.ToString()));
  return switched.status();
}

void Syncer::Log(absl::string_view line) const {
  if (options_.log) options_.log(line);
}

absl::Status Syncer::WriteStatus() {
  const std::string text = StatusText(state_);
  if (!options_.status_file.empty()) {
    return ReplaceFileDurably(options_.status_file + ".tmp",
                              options_.status_file, text);
  }
  return folder_.WriteFile(kStatusFile, text);
}

// True if what the folder holds of the version `id` is known to be its
// tree: written by this process, or checked by it.
bool Syncer::Known(const std::string& id) const {
  return folder_.Wrote(id) || checked_ == id;
}

// True once the newest version is in place (switched to now or before).
absl::StatusOr<bool> Syncer::Update() {
  // ..data read again, and a switch a crash or an error left half done
  // finished.
  RETURN_IF_ERROR(folder_.Repair());
  ASSIGN_OR_RETURN(const client::ResolvedBlob blob,
                   client::ResolveBlob(client_, ref_));
  RETURN_IF_ERROR(client::CheckTree(blob, ref_, /*insist=*/true));
  const std::string digest = blob.digest().ToString();
  const std::string id = VersionedFolder::IdOf(digest);
  if (blob.info.name_statement.has_value()) {
    state_.version = blob.info.name_statement->version;
  }
  if (id == folder_.current() && Known(id)) {
    state_.digest = digest;
    Prune();
    return true;
  }
  ASSIGN_OR_RETURN(std::vector<sdk::TreeEntry> entries,
                   sdk::ReadTree(client_, blob.digest(), sdk::FetchOptions()));
  // Before anything is staged: a name the layout cannot show.
  RETURN_IF_ERROR(VersionedFolder::CheckTopNames(TopLevelNames(entries)));
  if (id == folder_.current() && KeptInPlace(id, entries)) {
    current_entries_ = std::move(entries);
    state_.digest = digest;
    Prune();
    return true;
  }
  ASSIGN_OR_RETURN(const sdk::FetchTreeResult result, Write(id, entries));
  RETURN_IF_ERROR(folder_.Switch(id));
  current_entries_ = std::move(entries);
  state_.digest = digest;
  Switched(result);
  return true;
}

// The version in place, not written by this process, checked whole: true if
// it is its tree (and so known from now on), else logged.
bool Syncer::KeptInPlace(const std::string& id,
                         const std::vector<sdk::TreeEntry>& entries) {
  const absl::Status held = CheckInPlace(id, entries);
  if (held.ok()) {
    checked_ = id;
    return true;
  }
  Log(absl::StrCat("the version in place is not its tree, fetching it again: ",
                   held.message()));
  return false;
}

// After a switch: counted, logged, the app told, then what it replaced
// pruned.
void Syncer::Switched(const sdk::FetchTreeResult& result) {
  state_.switches++;
  if (options_.metrics != nullptr) options_.metrics->Switched(result);
  Log(absl::StrCat("switched to ", state_.digest, " (version ", state_.version,
                   "): ", result.files, " files, ", result.files_fetched,
                   " fetched (", result.bytes_fetched, " bytes), ",
                   result.files_reused, " reused, ", result.files_copied,
                   " copied"));
  if (options_.on_switch) {
    const absl::Status told = options_.on_switch(state_.digest);
    if (!told.ok()) Log(told.ToString());
  }
  // Only now, the app told: the versions before the one just replaced.
  Prune();
}

// What failed attempts, a crash or versions before the last one left.
void Syncer::Prune() {
  const absl::Status pruned = folder_.Prune();
  if (!pruned.ok()) Log(absl::StrCat("pruning: ", pruned.ToString()));
}

sdk::FetchTreeOptions Syncer::WriteOptions() const {
  sdk::FetchTreeOptions options;
  options.parallel = options_.parallel;
  options.read_only = true;
  return options;
}

absl::Status Syncer::CheckInPlace(const std::string& id,
                                  const std::vector<sdk::TreeEntry>& entries) {
  ASSIGN_OR_RETURN(const UniqueFd version, folder_.OpenVersion(id));
  return sdk::VerifyFolder(version.get(), folder_.PathOf(id), entries,
                           WriteOptions());
}

absl::StatusOr<sdk::FetchTreeResult> Syncer::Write(
    const std::string& id, const std::vector<sdk::TreeEntry>& entries) {
  ASSIGN_OR_RETURN(const UniqueFd staged, folder_.Stage(id));
  sdk::FetchTreeOptions options = WriteOptions();
  UniqueFd reuse;
  const std::string& current = folder_.current();
  if (!current.empty()) {
    reuse = folder_.OpenVersion(current).value_or(UniqueFd());
    // What this process wrote or checked there is not hashed again; any
    // other version's files are.
    if (Known(current)) options.reuse_entries = current_entries_;
  }
  absl::StatusOr<sdk::FetchTreeResult> result =
      sdk::WriteTreeAt(client_, entries, staged.get(),
                       folder_.PathOf("staging-" + id), reuse.get(), options);
  if (!result.ok()) folder_.Discard(id).IgnoreError();
  return result;
}

}  // namespace verity::sync

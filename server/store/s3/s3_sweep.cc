// Implements garbage collection's sweep of an S3 store from listings and
// multi-object deletes: no request for a blob it keeps, and about one (the
// GET of its used/ time) for a blob it frees, whose objects go a thousand
// keys to a DeleteObjects.

#include <openssl/md5.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "lib/base/status_macros.h"
#include "server/store/s3/s3_store.h"
#include "server/store/s3/s3_xml.h"

namespace verity::server {
namespace {

// S3's most keys in one DeleteObjects.
constexpr size_t kDeleteKeys = 1000;
// used/ GETs in flight at once.
constexpr size_t kUsedReadsInFlight = 16;

std::string ContentMd5(absl::string_view body) {
  uint8_t md5[MD5_DIGEST_LENGTH];
  MD5(reinterpret_cast<const uint8_t*>(body.data()), body.size(), md5);
  return absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(md5), sizeof(md5)));
}

// Runs `requests` on `client`, at most kUsedReadsInFlight at a time; their
// responses in the same order.
std::vector<S3Response> CallAll(S3Client& client,
                                std::vector<S3Request> requests) {
  std::vector<S3Response> responses(requests.size());
  absl::Mutex mu;
  size_t running = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](size_t* n) { return *n < kUsedReadsInFlight; }, &running));
      ++running;
    }
    client.Start(std::move(requests[i]),
                 [&mu, &running, &responses, i](S3Response response) {
                   absl::MutexLock lock(&mu);
                   responses[i] = std::move(response);
                   --running;
                 });
  }
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](size_t* n) { return *n == 0; }, &running));
  return responses;
}

}  // namespace

absl::StatusOr<std::vector<StoredBlob>> S3Store::ListStored(
    absl::string_view after, size_t limit) const {
  // Quarantined blobs are not served: ListQuarantined has them.
  ASSIGN_OR_RETURN(const std::vector<std::string> marks,
                   ListKeys(layout_.QuarantinePrefix()));
  const absl::flat_hash_set<std::string> quarantined(marks.begin(),
                                                     marks.end());
  std::vector<StoredBlob> blobs;
  // Records (no data object): where in `blobs`, their sizes, and the GETs
  // of their footers.
  std::vector<size_t> records;
  std::vector<uint64_t> record_sizes;
  std::vector<S3Request> footers;
  // A blob's data object lists before its descriptor: the last one seen.
  std::string data_key;
  uint64_t data_size = 0;
  std::string token;
  const std::string start_after = layout_.ListStartAfter(after);
  while (blobs.size() < limit) {
    ASSIGN_OR_RETURN(const S3Listing listing,
                     ListPage(layout_.blobs_prefix(), start_after, token));
    for (const S3Listing::Object& object : listing.objects) {
      if (blobs.size() == limit) break;
      const std::optional<ParsedDigest> digest =
          layout_.ParseDescriptorKey(object.key);
      if (!digest.has_value()) {
        data_key = object.key;
        data_size = object.size;
        continue;
      }
      if (quarantined.contains(layout_.QuarantineKey(*digest))) continue;
      if (data_key == layout_.BlobKey(*digest, BlobObject::kData)) {
        blobs.push_back({*digest, data_size});
        continue;
      }
      // A record: its data size is in its footer.
      records.push_back(blobs.size());
      record_sizes.push_back(object.size);
      blobs.push_back({*digest, 0});
      S3Request footer;
      footer.op = "GetRecordFooter";
      footer.key = object.key;
      const uint64_t from =
          object.size - std::min<uint64_t>(object.size, kRecordFooterSize);
      footer.headers.push_back(absl::StrCat(
          "Range: bytes=", from, "-", std::max<uint64_t>(object.size, 1) - 1));
      footers.push_back(std::move(footer));
    }
    if (!listing.truncated) break;
    token = listing.next_continuation_token;
  }
  const std::vector<S3Response> answers = CallAll(*client_, std::move(footers));
  for (size_t i = 0; i < records.size(); ++i) {
    StoredBlob& blob = blobs[records[i]];
    // Deleted since the listing, or damaged: counted as empty, as a blob of
    // objects whose data object is gone.
    if (absl::IsNotFound(answers[i].status) ||
        absl::IsOutOfRange(answers[i].status)) {
      continue;
    }
    RETURN_IF_ERROR(answers[i].status);
    const absl::StatusOr<RecordFooter> footer = DecodeRecordFooter(
        answers[i].body, record_sizes[i], blob.digest.ToString());
    if (footer.ok()) blob.data_size = footer->data_size;
  }
  return blobs;
}

absl::StatusOr<std::vector<S3Store::UsedRecord>> S3Store::ReadUsedOf(
    absl::Span<const ParsedDigest> blobs, UsedOf of) const {
  std::vector<S3Request> reads;
  for (const ParsedDigest& digest : blobs) {
    S3Request get;
    get.op = "GetUsed";
    get.key = layout_.UsedKey(digest);
    reads.push_back(std::move(get));
  }
  const std::vector<S3Response> answers = CallAll(*client_, std::move(reads));
  std::vector<UsedRecord> records;
  for (const S3Response& answer : answers) {
    if (!answer.status.ok() && !absl::IsNotFound(answer.status)) {
      return answer.status;
    }
    records.push_back(ParseUsed(answer, of));
  }
  return records;
}

absl::StatusOr<std::vector<absl::Time>> S3Store::LastUsedOf(
    absl::Span<const ParsedDigest> blobs) const {
  ASSIGN_OR_RETURN(const std::vector<UsedRecord> used,
                   ReadUsedOf(blobs, UsedOf::kStoredBlob));
  std::vector<absl::Time> times;
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (used[i].doomed) {
      times.push_back(absl::InfinitePast());
    } else if (used[i].time.has_value()) {
      times.push_back(*used[i].time);
    } else {
      // None, or damaged: LastUsed starts its grace (or finds it gone).
      absl::StatusOr<absl::Time> last = LastUsed(blobs[i]);
      if (absl::IsNotFound(last.status())) last = absl::InfiniteFuture();
      RETURN_IF_ERROR(last.status());
      times.push_back(*last);
    }
  }
  return times;
}

absl::StatusOr<std::vector<ParsedDigest>> S3Store::MarkDoomed(
    absl::Span<const ParsedDigest> blobs, const std::vector<UsedRecord>& used,
    absl::Time cutoff, bool leftovers) const {
  const std::string mark = DoomedMark(absl::Now(), leftovers);
  std::vector<ParsedDigest> doomed;
  std::vector<size_t> marking;  // indexes into `blobs`
  std::vector<S3Request> puts;
  for (size_t i = 0; i < blobs.size(); ++i) {
    // Marked by a sweep before ours that did not finish: marked again, so
    // that a use or a Put taking over its stale mark meanwhile keeps it.
    if (!used[i].doomed &&
        (!used[i].time.has_value() || *used[i].time >= cutoff)) {
      continue;
    }
    S3Request put;
    put.op = "MarkDoomed";
    put.method = "PUT";
    put.key = layout_.UsedKey(blobs[i]);
    put.body = mark;
    put.headers = {S3PutCondition(used[i].version)};
    put.idempotent = false;
    puts.push_back(std::move(put));
    marking.push_back(i);
  }
  const std::vector<S3Response> answers = CallAll(*client_, std::move(puts));
  for (size_t m = 0; m < marking.size(); ++m) {
    const size_t i = marking[m];
    // Replaced since the read: a use, so kept.
    if (absl::IsFailedPrecondition(answers[m].status)) continue;
    if (!answers[m].status.ok()) {
      // Whether it landed (radosgw's 500 on racing conditional PUTs): a
      // mark other than the one read says.
      ASSIGN_OR_RETURN(const UsedRecord now,
                       ReadUsed(blobs[i], UsedOf::kAnyBlob));
      if (!now.doomed || now.version == used[i].version) continue;
    }
    doomed.push_back(blobs[i]);
  }
  // In the order given.
  std::vector<ParsedDigest> ordered;
  for (const ParsedDigest& digest : blobs) {
    if (std::find(doomed.begin(), doomed.end(), digest) != doomed.end()) {
      ordered.push_back(digest);
    }
  }
  return ordered;
}

absl::StatusOr<std::vector<ParsedDigest>> S3Store::DeleteUnusedSince(
    absl::Span<const ParsedDigest> blobs, absl::Time cutoff) {
  ASSIGN_OR_RETURN(std::vector<UsedRecord> used,
                   ReadUsedOf(blobs, UsedOf::kStoredBlob));
  for (size_t i = 0; i < blobs.size(); ++i) {
    if (used[i].doomed || used[i].time.has_value()) continue;
    // None, or damaged: LastUsed times it now (kept this time), or finds it
    // quarantined with no time (InfinitePast) or gone.
    absl::StatusOr<absl::Time> last = LastUsed(blobs[i]);
    if (absl::IsNotFound(last.status())) last = absl::InfiniteFuture();
    RETURN_IF_ERROR(last.status());
    ASSIGN_OR_RETURN(used[i], ReadUsed(blobs[i], UsedOf::kStoredBlob));
    if (!used[i].doomed && !used[i].time.has_value()) used[i].time = *last;
  }
  ASSIGN_OR_RETURN(const std::vector<ParsedDigest> doomed,
                   MarkDoomed(blobs, used, cutoff, /*leftovers=*/false));
  if (doomed.empty()) return doomed;
  // As DeleteBlob, many at a time (an unreachable blob has no name to
  // delete first): the tree manifest marks, then the descriptors, the
  // commit point; then everything else under each blob's prefix and its
  // damage and quarantine marks; its used/ mark last (a delete cut short
  // before then leaves a blob prefix without a descriptor, which
  // SweepLeftovers takes a grace later, or a mark the next sweep finishes;
  // one cut short after the rest leaves a mark alone, which a use or a Put
  // of the content takes over once it is stale).
  std::vector<std::string> keys;
  for (const ParsedDigest& d : doomed) {
    keys.push_back(layout_.BlobKey(d, BlobObject::kTreeManifestMark));
  }
  RETURN_IF_ERROR(DeleteObjects(keys));
  keys.clear();
  for (const ParsedDigest& d : doomed) {
    keys.push_back(layout_.BlobKey(d, BlobObject::kDescriptor));
  }
  RETURN_IF_ERROR(DeleteObjects(keys));
  ASSIGN_OR_RETURN(keys, KeysOf(doomed));
  for (const ParsedDigest& d : doomed) {
    keys.push_back(layout_.DamagedKey(d));
    keys.push_back(layout_.QuarantineKey(d));
  }
  RETURN_IF_ERROR(DeleteObjects(keys));
  {
    absl::MutexLock lock(&quarantine_mu_);
    for (const ParsedDigest& d : doomed) {
      quarantine_keys_.erase(layout_.QuarantineKey(d));
    }
  }
  keys.clear();
  for (const ParsedDigest& d : doomed) keys.push_back(layout_.UsedKey(d));
  RETURN_IF_ERROR(DeleteObjects(keys));
  return doomed;
}

absl::StatusOr<std::vector<std::string>> S3Store::KeysOf(
    std::vector<ParsedDigest> blobs) const {
  std::sort(blobs.begin(), blobs.end(),
            [](const ParsedDigest& a, const ParsedDigest& b) {
              return a.ToString() < b.ToString();
            });
  absl::flat_hash_set<std::string> prefixes;
  for (const ParsedDigest& d : blobs) prefixes.insert(layout_.BlobPrefix(d));
  const std::string first = layout_.BlobPrefix(blobs.front());
  const std::string last = layout_.BlobPrefix(blobs.back());
  // One listing from the first blob's objects to the last's.
  std::vector<std::string> keys;
  std::string token;
  while (true) {
    ASSIGN_OR_RETURN(const S3Listing listing,
                     ListPage(layout_.blobs_prefix(),
                              first.substr(0, first.size() - 1), token));
    for (const S3Listing::Object& object : listing.objects) {
      if (object.key > last && !absl::StartsWith(object.key, last)) {
        return keys;
      }
      size_t prefix_size = 0;
      if (layout_.ParseBlobKey(object.key, &prefix_size).has_value() &&
          prefixes.contains(object.key.substr(0, prefix_size))) {
        keys.push_back(object.key);
      }
    }
    if (!listing.truncated) return keys;
    token = listing.next_continuation_token;
  }
}

absl::Status S3Store::DeleteObjects(absl::Span<const std::string> keys) const {
  for (size_t at = 0; at < keys.size(); at += kDeleteKeys) {
    S3Request request;
    request.op = "DeleteObjects";
    request.method = "POST";
    request.query = {{"delete", ""}};
    request.body = DeleteObjectsBody(
        keys.subspan(at, std::min(kDeleteKeys, keys.size() - at)));
    request.headers = {absl::StrCat("Content-MD5: ", ContentMd5(request.body)),
                       "Content-Type: application/xml"};
    const S3Response response = client_->Call(std::move(request));
    RETURN_IF_ERROR(response.status);
    ASSIGN_OR_RETURN(const std::vector<S3DeleteError> errors,
                     ParseDeleteResult(response.body));
    for (const S3DeleteError& error : errors) {
      if (error.error.code == "NoSuchKey") continue;
      return absl::UnavailableError(
          absl::StrCat("S3 did not delete ", error.key, ": ", error.error.code,
                       " ", error.error.message));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LeftoverPage> S3Store::SweepLeftovers(absl::string_view after,
                                                     absl::Time cutoff,
                                                     bool dry_run) {
  const bool uploads = absl::StartsWith(after, layout_.uploads_prefix());
  const std::string prefix =
      uploads ? layout_.uploads_prefix() : layout_.blobs_prefix();
  ASSIGN_OR_RETURN(S3Listing listing, ListPage(prefix, std::string(after), ""));
  LeftoverPage page;
  if (uploads) {
    // A staged upload older than the cutoff is one its Put abandoned.
    std::vector<std::string> doomed;
    for (const S3Listing::Object& object : listing.objects) {
      if (object.last_modified >= cutoff) continue;
      doomed.push_back(object.key);
      page.bytes += object.size;
    }
    page.next = listing.truncated ? listing.objects.back().key : "";
    page.objects = doomed.size();
    if (!dry_run) RETURN_IF_ERROR(DeleteObjects(doomed));
    return page;
  }
  LeftoverGroups found = GroupLeftovers(listing, cutoff);
  // Past the blobs: the staged uploads, from the start.
  page.next = listing.truncated ? found.next : layout_.uploads_prefix();
  std::vector<LeftoverGroup> groups = std::move(found.groups);
  if (!dry_run) {
    ASSIGN_OR_RETURN(groups, MarkLeftoversDoomed(std::move(groups), cutoff));
  }
  std::vector<std::string> keys, used;
  for (const LeftoverGroup& group : groups) {
    page.objects += group.keys.size();
    page.bytes += group.bytes;
    keys.insert(keys.end(), group.keys.begin(), group.keys.end());
    // Its damage and quarantine marks go with it, its time (mark) last.
    keys.push_back(layout_.DamagedKey(group.digest));
    keys.push_back(layout_.QuarantineKey(group.digest));
    used.push_back(layout_.UsedKey(group.digest));
  }
  if (dry_run) return page;
  RETURN_IF_ERROR(DeleteObjects(keys));
  RETURN_IF_ERROR(DeleteObjects(used));
  return page;
}

absl::StatusOr<std::vector<S3Store::LeftoverGroup>>
S3Store::MarkLeftoversDoomed(std::vector<LeftoverGroup> groups,
                             absl::Time cutoff) const {
  std::vector<ParsedDigest> digests;
  for (const LeftoverGroup& group : groups) digests.push_back(group.digest);
  ASSIGN_OR_RETURN(std::vector<UsedRecord> used,
                   ReadUsedOf(digests, UsedOf::kAnyBlob));
  // None (or damaged): nothing but the listing's times, which found them
  // old.
  for (UsedRecord& record : used) {
    if (!record.doomed && !record.time.has_value()) {
      record.time = absl::InfinitePast();
    }
  }
  // A Put claims used/ before it writes: a recent time, or a claim that
  // lands before the mark, keeps the group.
  ASSIGN_OR_RETURN(const std::vector<ParsedDigest> doomed,
                   MarkDoomed(digests, used, cutoff, /*leftovers=*/true));
  std::vector<LeftoverGroup> kept;
  size_t next = 0;
  for (LeftoverGroup& group : groups) {
    if (next < doomed.size() && doomed[next] == group.digest) {
      kept.push_back(std::move(group));
      ++next;
    }
  }
  return kept;
}

S3Store::LeftoverGroups S3Store::GroupLeftovers(const S3Listing& listing,
                                                absl::Time cutoff) const {
  LeftoverGroups result;
  // One blob's objects at a time: left over if none is its descriptor and
  // every one was written before the cutoff.
  std::vector<const S3Listing::Object*> group;
  std::string group_prefix;
  const auto judge = [&]() {
    bool leftover = !group.empty();
    for (const S3Listing::Object* object : group) {
      leftover = leftover && object->last_modified < cutoff &&
                 object->key.substr(group_prefix.size()) != "descriptor";
    }
    if (!leftover) return;
    LeftoverGroup found{*layout_.ParseBlobKey(group.front()->key), {}, 0};
    for (const S3Listing::Object* object : group) {
      found.keys.push_back(object->key);
      found.bytes += object->size;
    }
    result.groups.push_back(std::move(found));
  };
  for (const S3Listing::Object& object : listing.objects) {
    size_t prefix_size = 0;
    if (!layout_.ParseBlobKey(object.key, &prefix_size).has_value()) continue;
    if (object.key.compare(0, prefix_size, group_prefix) != 0) {
      judge();
      group.clear();
      group_prefix = object.key.substr(0, prefix_size);
    }
    group.push_back(&object);
  }
  if (!listing.truncated) {
    judge();
    return result;
  }
  // The last blob's objects may go on in the next page: judged there. One
  // that fills a page alone (a thousand name hints) is not judged at all:
  // the next page starts past it, for a page that began inside a blob's
  // objects cannot tell whether its descriptor came before.
  result.next = group.size() == listing.objects.size()
                    ? group_prefix + "~"
                    : group_prefix.substr(0, group_prefix.size() - 1);
  return result;
}

}  // namespace verity::server

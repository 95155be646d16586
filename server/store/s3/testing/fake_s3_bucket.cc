// FakeS3's bucket: what S3 answers to each request S3Store makes, on maps in
// memory. Only what verityd sends is understood; the rest is 400.

#include <openssl/md5.h>

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/store/s3/testing/fake_s3.h"

namespace verity::server {
namespace {

constexpr int kMaxKeys = 1000;

const std::string* Query(const S3Request& request, absl::string_view name) {
  for (const auto& [key, value] : request.query) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string Header(const S3Request& request, absl::string_view name) {
  for (absl::string_view header : request.headers) {
    if (absl::StartsWithIgnoreCase(header, name) &&
        header.size() > name.size() && header[name.size()] == ':') {
      return std::string(
          absl::StripAsciiWhitespace(header.substr(name.size() + 1)));
    }
  }
  return "";
}

S3Response Answer(int http, std::string body = "") {
  S3Response response;
  response.http_status = http;
  response.bytes = body.size();
  response.body = std::move(body);
  return response;
}

S3Response Refuse(const S3Request& request, int http, absl::string_view code) {
  S3Response response =
      Answer(http, absl::StrCat("<Error><Code>", code, "</Code></Error>"));
  response.error_code = std::string(code);
  response.status = S3HttpStatus(request, http, code, "");
  return response;
}

// "bytes=A-B" into [first, last]; false if there is no Range header.
bool ParseRange(const S3Request& request, uint64_t* first, uint64_t* last) {
  const std::string header = Header(request, "Range");
  absl::string_view range = header;
  if (!absl::ConsumePrefix(&range, "bytes=")) return false;
  const std::vector<std::string> ends = absl::StrSplit(range, '-');
  return ends.size() == 2 && absl::SimpleAtoi(ends[0], first) &&
         absl::SimpleAtoi(ends[1], last);
}

// The bucket-relative key of "x-amz-copy-source: /BUCKET/KEY" (verityd's
// keys need no unescaping).
std::string CopySource(const S3Request& request) {
  const std::string source = Header(request, "x-amz-copy-source");
  const size_t slash = source.find('/', 1);
  return slash == std::string::npos ? "" : source.substr(slash + 1);
}

size_t CountOf(absl::string_view text, absl::string_view what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != absl::string_view::npos;
       at = text.find(what, at + what.size())) {
    ++count;
  }
  return count;
}

}  // namespace

std::vector<std::string> FakeS3::Keys(const std::string& prefix) const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> keys;
  for (auto it = objects_.lower_bound(prefix);
       it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    keys.push_back(it->first);
  }
  return keys;
}

void FakeS3::Backdate(const std::string& prefix, absl::Duration by) {
  absl::MutexLock lock(&mu_);
  for (auto it = times_.lower_bound(prefix);
       it != times_.end() && absl::StartsWith(it->first, prefix); ++it) {
    it->second -= by;
  }
}

size_t FakeS3::uploads() const {
  absl::MutexLock lock(&mu_);
  return uploads_.size();
}

S3Response FakeS3::Handle(const S3Request& request) {
  const std::string& method = request.method;
  if (method == "GET") {
    if (Query(request, "list-type") != nullptr) return List(request);
    if (Query(request, "uploads") != nullptr) return ListUploads();
    return Get(request);
  }
  if (method == "HEAD") {
    if (objects_.count(request.key) == 0) return Refuse(request, 404, "");
    S3Response response = Answer(200);
    response.etag = etags_[request.key];
    return response;
  }
  if (method == "PUT") return Put(request);
  if (method == "POST") return Post(request);
  if (method == "DELETE") return Delete(request);
  return Refuse(request, 400, "NotImplemented");
}

S3Response FakeS3::Get(const S3Request& request) {
  const auto it = objects_.find(request.key);
  if (it == objects_.end()) return Refuse(request, 404, "NoSuchKey");
  const std::string& object = it->second;
  uint64_t first = 0, last = object.size() == 0 ? 0 : object.size() - 1;
  const bool ranged = ParseRange(request, &first, &last);
  if (ranged && first >= object.size()) {
    return Refuse(request, 416, "InvalidRange");
  }
  last = std::min<uint64_t>(last, object.size() - 1);
  std::string bytes =
      object.empty() ? "" : object.substr(first, last - first + 1);
  if (request.into.empty()) {
    S3Response response = Answer(ranged ? 206 : 200, bytes);
    response.etag = etags_[request.key];
    return response;
  }
  if (bytes.size() > request.into.size()) {
    S3Response overflow;
    overflow.status = absl::DataLossError("more bytes came back");
    return overflow;
  }
  std::copy(bytes.begin(), bytes.end(), request.into.begin());
  S3Response response = Answer(ranged ? 206 : 200);
  response.bytes = bytes.size();
  return response;
}

S3Response FakeS3::Put(const S3Request& request) {
  if (const std::string* id = Query(request, "uploadId")) {
    const auto upload = uploads_.find(*id);
    const std::string* number = Query(request, "partNumber");
    int part = 0;
    if (upload == uploads_.end() || number == nullptr ||
        !absl::SimpleAtoi(*number, &part)) {
      return Refuse(request, 404, "NoSuchUpload");
    }
    upload->second.parts[part] = request.body;
    S3Response response = Answer(200);
    response.etag = absl::StrCat("\"part-", part, "\"");
    return response;
  }
  if (Header(request, "If-None-Match") == "*" &&
      objects_.count(request.key) > 0) {
    return Refuse(request, 412, "PreconditionFailed");
  }
  const std::string if_match = Header(request, "If-Match");
  if (!if_match.empty()) {
    const auto etag = etags_.find(request.key);
    // S3 answers 404 for a missing object; either way nothing is written.
    if (etag == etags_.end()) return Refuse(request, 404, "NoSuchKey");
    // Quoted or not, as S3 takes it.
    if (absl::StripSuffix(absl::StripPrefix(etag->second, "\""), "\"") !=
        absl::StripSuffix(absl::StripPrefix(if_match, "\""), "\"")) {
      return Refuse(request, 412, "PreconditionFailed");
    }
  }
  const std::string source = CopySource(request);
  S3Response response = Answer(200);
  if (!source.empty()) {
    const auto it = objects_.find(source);
    if (it == objects_.end()) return Refuse(request, 404, "NoSuchKey");
    response.etag = SetObject(request.key, it->second);
  } else {
    response.etag = SetObject(request.key, request.body);
  }
  return response;
}

std::string FakeS3::SetObject(const std::string& key, std::string bytes) {
  objects_[key] = std::move(bytes);
  times_[key] = absl::Now();
  return etags_[key] = absl::StrCat("\"etag-", ++next_etag_, "\"");
}

S3Response FakeS3::Post(const S3Request& request) {
  if (Query(request, "delete") != nullptr) return DeleteMany(request);
  if (Query(request, "uploads") != nullptr) {
    const std::string id = absl::StrCat("upload-", ++next_upload_);
    uploads_[id].key = request.key;
    return Answer(200,
                  absl::StrCat("<InitiateMultipartUploadResult><UploadId>", id,
                               "</UploadId>"
                               "</InitiateMultipartUploadResult>"));
  }
  const std::string* id = Query(request, "uploadId");
  const auto upload = id == nullptr ? uploads_.end() : uploads_.find(*id);
  if (upload == uploads_.end()) return Refuse(request, 404, "NoSuchUpload");
  // S3 assembles the parts the body lists: here, all of them, which must be
  // as many.
  const std::map<int, std::string>& parts = upload->second.parts;
  if (CountOf(request.body, "<PartNumber>") != parts.size()) {
    return Refuse(request, 400, "InvalidPart");
  }
  std::string object;
  for (const auto& [number, bytes] : parts) object += bytes;
  SetObject(upload->second.key, std::move(object));
  uploads_.erase(upload);
  return Answer(200, "<CompleteMultipartUploadResult/>");
}

S3Response FakeS3::Delete(const S3Request& request) {
  if (const std::string* id = Query(request, "uploadId")) {
    if (uploads_.erase(*id) == 0) return Refuse(request, 404, "NoSuchUpload");
    return Answer(204);
  }
  objects_.erase(request.key);
  etags_.erase(request.key);
  times_.erase(request.key);
  return Answer(204);
}

S3Response FakeS3::DeleteMany(const S3Request& request) {
  // S3 refuses a DeleteObjects without a checksum of its body.
  uint8_t md5[MD5_DIGEST_LENGTH];
  MD5(reinterpret_cast<const uint8_t*>(request.body.data()),
      request.body.size(), md5);
  if (Header(request, "Content-MD5") !=
      absl::Base64Escape(
          absl::string_view(reinterpret_cast<char*>(md5), sizeof(md5)))) {
    return Refuse(request, 400, "InvalidDigest");
  }
  if (CountOf(request.body, "<Object>") > kMaxKeys) {
    return Refuse(request, 400, "MalformedXML");
  }
  // verityd's keys need no unescaping.
  for (absl::string_view rest = request.body;;) {
    const size_t open = rest.find("<Key>");
    if (open == absl::string_view::npos) break;
    rest.remove_prefix(open + 5);
    const std::string key(rest.substr(0, rest.find("</Key>")));
    objects_.erase(key);
    etags_.erase(key);
    times_.erase(key);
  }
  return Answer(200, "<DeleteResult></DeleteResult>");
}

S3Response FakeS3::List(const S3Request& request) const {
  const std::string* prefix_value = Query(request, "prefix");
  const std::string prefix = prefix_value ? *prefix_value : "";
  std::string after;
  if (const std::string* token = Query(request, "continuation-token")) {
    after = *token;
  } else if (const std::string* start = Query(request, "start-after")) {
    after = *start;
  }
  int max_keys = kMaxKeys;
  if (const std::string* max = Query(request, "max-keys")) {
    if (!absl::SimpleAtoi(*max, &max_keys)) max_keys = kMaxKeys;
  }
  std::string body = "<ListBucketResult>";
  std::string last;
  int listed = 0;
  bool truncated = false;
  // As S3: from the prefix itself (an object named so is listed), or past
  // `after`.
  for (auto it = after >= prefix ? objects_.upper_bound(after)
                                 : objects_.lower_bound(prefix);
       it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    if (listed == max_keys) {
      truncated = true;
      break;
    }
    absl::StrAppend(&body, "<Contents><Key>", it->first, "</Key><Size>",
                    it->second.size(), "</Size><LastModified>",
                    absl::FormatTime(absl::RFC3339_full, times_.at(it->first),
                                     absl::UTCTimeZone()),
                    "</LastModified></Contents>");
    last = it->first;
    ++listed;
  }
  absl::StrAppend(&body, "<IsTruncated>", truncated ? "true" : "false",
                  "</IsTruncated>");
  if (truncated) {
    absl::StrAppend(&body, "<NextContinuationToken>", last,
                    "</NextContinuationToken>");
  }
  return Answer(200, body + "</ListBucketResult>");
}

S3Response FakeS3::ListUploads() const {
  std::string body = "<ListMultipartUploadsResult>";
  for (const auto& [id, upload] : uploads_) {
    // Long ago: every upload left is one a crashed process abandoned.
    absl::StrAppend(&body, "<Upload><Key>", upload.key, "</Key><UploadId>", id,
                    "</UploadId><Initiated>2000-01-01T00:00:00Z</Initiated>"
                    "</Upload>");
  }
  return Answer(200, body +
                         "<IsTruncated>false</IsTruncated>"
                         "</ListMultipartUploadsResult>");
}

}  // namespace verity::server

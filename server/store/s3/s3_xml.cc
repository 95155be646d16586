// Implements the S3 XML parsing on pugixml's DOM. S3's answers are input like
// any other: a malformed one is an INTERNAL error, never a crash.

#include "server/store/s3/s3_xml.h"

#include <pugixml.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace verity::server {
namespace {

absl::StatusOr<pugi::xml_node> Root(const pugi::xml_document& doc,
                                    absl::string_view body,
                                    const char* expected) {
  pugi::xml_node root = doc.document_element();
  if (std::string(root.name()) != expected) {
    return absl::InternalError(absl::StrCat("S3 answered without a <", expected,
                                            "> element: '", body.substr(0, 200),
                                            "'"));
  }
  return root;
}

bool Load(pugi::xml_document& doc, absl::string_view body) {
  return doc.load_buffer(body.data(), body.size(), pugi::parse_default,
                         pugi::encoding_utf8);
}

std::string Text(pugi::xml_node node, const char* child) {
  return node.child(child).text().as_string();
}

// XML-escapes an ETag (quotes and all).
std::string Escape(absl::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace

S3Error ParseS3Error(absl::string_view body) {
  pugi::xml_document doc;
  if (!Load(doc, body)) return {};
  pugi::xml_node root = doc.document_element();
  if (std::string(root.name()) != "Error") return {};
  return {Text(root, "Code"), Text(root, "Message")};
}

absl::StatusOr<S3Listing> ParseListObjects(absl::string_view body) {
  pugi::xml_document doc;
  if (!Load(doc, body)) return absl::InternalError("S3 sent a bad listing");
  absl::StatusOr<pugi::xml_node> root = Root(doc, body, "ListBucketResult");
  if (!root.ok()) return root.status();
  S3Listing listing;
  for (pugi::xml_node contents : root->children("Contents")) {
    S3Listing::Object object;
    object.key = Text(contents, "Key");
    if (!absl::SimpleAtoi(Text(contents, "Size"), &object.size)) {
      return absl::InternalError("S3 listed an object without a size");
    }
    std::string error;
    if (!absl::ParseTime(absl::RFC3339_full, Text(contents, "LastModified"),
                         &object.last_modified, &error)) {
      object.last_modified = absl::InfiniteFuture();
    }
    listing.objects.push_back(std::move(object));
  }
  for (pugi::xml_node prefix : root->children("CommonPrefixes")) {
    listing.common_prefixes.push_back(Text(prefix, "Prefix"));
  }
  listing.truncated = Text(*root, "IsTruncated") == "true";
  listing.next_continuation_token = Text(*root, "NextContinuationToken");
  return listing;
}

absl::StatusOr<std::string> ParseUploadId(absl::string_view body) {
  pugi::xml_document doc;
  if (!Load(doc, body)) return absl::InternalError("S3 sent a bad answer");
  absl::StatusOr<pugi::xml_node> root =
      Root(doc, body, "InitiateMultipartUploadResult");
  if (!root.ok()) return root.status();
  std::string id = Text(*root, "UploadId");
  if (id.empty()) return absl::InternalError("S3 gave no UploadId");
  return id;
}

absl::StatusOr<S3Uploads> ParseListUploads(absl::string_view body) {
  pugi::xml_document doc;
  if (!Load(doc, body)) return absl::InternalError("S3 sent a bad listing");
  absl::StatusOr<pugi::xml_node> root =
      Root(doc, body, "ListMultipartUploadsResult");
  if (!root.ok()) return root.status();
  S3Uploads result;
  for (pugi::xml_node upload : root->children("Upload")) {
    result.uploads.push_back({Text(upload, "Key"), Text(upload, "UploadId"),
                              Text(upload, "Initiated")});
  }
  result.truncated = Text(*root, "IsTruncated") == "true";
  result.next_key_marker = Text(*root, "NextKeyMarker");
  result.next_upload_id_marker = Text(*root, "NextUploadIdMarker");
  return result;
}

std::string CompleteMultipartBody(const std::vector<std::string>& etags) {
  std::string body = "<CompleteMultipartUpload>";
  for (size_t i = 0; i < etags.size(); ++i) {
    absl::StrAppend(&body, "<Part><PartNumber>", i + 1, "</PartNumber><ETag>",
                    Escape(etags[i]), "</ETag></Part>");
  }
  body += "</CompleteMultipartUpload>";
  return body;
}

std::string DeleteObjectsBody(absl::Span<const std::string> keys) {
  std::string body = "<Delete><Quiet>true</Quiet>";
  for (const std::string& key : keys) {
    absl::StrAppend(&body, "<Object><Key>", Escape(key), "</Key></Object>");
  }
  body += "</Delete>";
  return body;
}

absl::StatusOr<std::vector<S3DeleteError>> ParseDeleteResult(
    absl::string_view body) {
  pugi::xml_document doc;
  if (!Load(doc, body)) return absl::InternalError("S3 sent a bad answer");
  absl::StatusOr<pugi::xml_node> root = Root(doc, body, "DeleteResult");
  if (!root.ok()) return root.status();
  std::vector<S3DeleteError> errors;
  for (pugi::xml_node error : root->children("Error")) {
    errors.push_back(
        {Text(error, "Key"), {Text(error, "Code"), Text(error, "Message")}});
  }
  return errors;
}

}  // namespace verity::server

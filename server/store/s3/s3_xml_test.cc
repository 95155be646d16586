// The S3 answers verityd parses, as radosgw and AWS write them, and bodies
// that are not what they should be.

#include "server/store/s3/s3_xml.h"

#include "gtest/gtest.h"

namespace verity::server {
namespace {

TEST(S3XmlTest, Error) {
  const S3Error error = ParseS3Error(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code>"
      "<Message>The specified key does not exist.</Message><Key>a/b</Key>"
      "<RequestId>tx1</RequestId></Error>");
  EXPECT_EQ(error.code, "NoSuchKey");
  EXPECT_EQ(error.message, "The specified key does not exist.");
  EXPECT_EQ(ParseS3Error("").code, "");
  EXPECT_EQ(ParseS3Error("<ListBucketResult/>").code, "");
  EXPECT_EQ(ParseS3Error("<Error><Code>x").code, "");
}

TEST(S3XmlTest, Listing) {
  absl::StatusOr<S3Listing> listing = ParseListObjects(
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>"
      "<IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>tok+/=</NextContinuationToken>"
      "<Contents><Key>p/a</Key><Size>10</Size>"
      "<LastModified>2026-12-06T05:01:02.345Z</LastModified></Contents>"
      "<Contents><Key>p/b &amp; c</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>p/d/</Prefix></CommonPrefixes>"
      "</ListBucketResult>");
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_EQ(listing->objects.size(), 2u);
  EXPECT_EQ(listing->objects[0].key, "p/a");
  EXPECT_EQ(listing->objects[0].size, 10u);
  EXPECT_EQ(listing->objects[0].last_modified,
            absl::FromUnixMillis(1796533262345));
  // None: never taken for old.
  EXPECT_EQ(listing->objects[1].last_modified, absl::InfiniteFuture());
  EXPECT_EQ(listing->objects[1].key, "p/b & c");
  EXPECT_EQ(listing->common_prefixes, std::vector<std::string>{"p/d/"});
  EXPECT_TRUE(listing->truncated);
  EXPECT_EQ(listing->next_continuation_token, "tok+/=");
  EXPECT_FALSE(ParseListObjects("<Error/>").ok());
  EXPECT_FALSE(ParseListObjects("not xml").ok());
  EXPECT_FALSE(ParseListObjects("<ListBucketResult><Contents><Key>k</Key>"
                                "<Size>big</Size></Contents>"
                                "</ListBucketResult>")
                   .ok());
}

TEST(S3XmlTest, UploadsAndTheirCompletion) {
  EXPECT_EQ(*ParseUploadId("<InitiateMultipartUploadResult><Bucket>b</Bucket>"
                           "<Key>k</Key><UploadId>2~abc</UploadId>"
                           "</InitiateMultipartUploadResult>"),
            "2~abc");
  EXPECT_FALSE(ParseUploadId("<InitiateMultipartUploadResult/>").ok());
  absl::StatusOr<S3Uploads> uploads = ParseListUploads(
      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
      "<Upload><Key>k</Key><UploadId>u1</UploadId>"
      "<Initiated>2026-12-01T10:00:00.000Z</Initiated></Upload>"
      "</ListMultipartUploadsResult>");
  ASSERT_TRUE(uploads.ok()) << uploads.status();
  ASSERT_EQ(uploads->uploads.size(), 1u);
  EXPECT_EQ(uploads->uploads[0].upload_id, "u1");
  EXPECT_EQ(uploads->uploads[0].initiated, "2026-12-01T10:00:00.000Z");
  EXPECT_EQ(CompleteMultipartBody({"\"e1\"", "\"e2\""}),
            "<CompleteMultipartUpload>"
            "<Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            "</CompleteMultipartUpload>");
}

TEST(S3XmlTest, DeleteObjects) {
  EXPECT_EQ(DeleteObjectsBody({"a/b", "c&d"}),
            "<Delete><Quiet>true</Quiet><Object><Key>a/b</Key></Object>"
            "<Object><Key>c&amp;d</Key></Object></Delete>");
  absl::StatusOr<std::vector<S3DeleteError>> errors = ParseDeleteResult(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult "
      "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Error><Key>a/b</Key>"
      "<Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
      "</DeleteResult>");
  ASSERT_TRUE(errors.ok()) << errors.status();
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0].key, "a/b");
  EXPECT_EQ((*errors)[0].error.code, "AccessDenied");
  EXPECT_TRUE(ParseDeleteResult("<DeleteResult/>")->empty());
  EXPECT_FALSE(ParseDeleteResult("<Error/>").ok());
}

}  // namespace
}  // namespace verity::server

// Implements FakeS3StoreOptions.

#include "server/store/s3/testing/fake_s3_store.h"

#include <utility>

namespace verity::server {

S3StoreOptions FakeS3StoreOptions(std::shared_ptr<S3Transport> transport) {
  S3StoreOptions options;
  options.client.endpoint = "http://127.0.0.1:1";  // never dialled
  options.client.bucket = "bucket";
  options.prefix = "p/";
  options.part_bytes = size_t{5} << 20;
  options.log = [](absl::string_view) {};
  options.make_client =
      [transport = std::move(transport)](const S3ClientOptions& client)
      -> absl::StatusOr<std::unique_ptr<S3Client>> {
    return S3Client::WithTransport(client, transport);
  };
  return options;
}

absl::StatusOr<std::string> ReadObject(S3Client& client,
                                       const std::string& key) {
  S3Request request;
  request.op = "GetObject";
  request.key = key;
  S3Response response = client.Call(std::move(request));
  if (!response.status.ok()) return response.status;
  return std::move(response.body);
}

absl::Status WriteObject(S3Client& client, const std::string& key,
                         std::string body) {
  S3Request request;
  request.op = "PutObject";
  request.method = "PUT";
  request.key = key;
  request.body = std::move(body);
  return client.Call(std::move(request)).status;
}

}  // namespace verity::server

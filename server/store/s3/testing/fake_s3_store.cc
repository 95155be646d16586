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

}  // namespace verity::server

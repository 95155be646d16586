// The parts of sdk::Client that are the same for every implementation:
// conveniences built on the virtual calls. Client::Create lives in
// client_impl.cc.

#include "verity/client.h"

#include <utility>

namespace verity::sdk {

absl::StatusOr<std::string> Client::ReadRange(const Digest& digest,
                                              uint64_t offset, uint64_t length,
                                              FetchOptions options) {
  options.offset = offset;
  options.length = length;
  MemorySink sink;
  absl::Status status = Fetch(digest, sink, options);
  if (!status.ok()) return status;
  return sink.Release();
}

absl::StatusOr<std::vector<BlobInfo>> Client::ListAll() {
  std::vector<BlobInfo> all;
  std::string token;
  do {
    absl::StatusOr<ListPage> page = List(token, 0);
    if (!page.ok()) return page.status();
    // Tokens are opaque, but one that repeats would loop forever.
    if (!page->next_page_token.empty() && page->next_page_token == token) {
      return absl::InternalError(
          "the server returned the same page token twice");
    }
    for (BlobInfo& info : page->blobs) all.push_back(std::move(info));
    token = std::move(page->next_page_token);
  } while (!token.empty());
  return all;
}

}  // namespace verity::sdk

// The SDK's Client: one channel, its stub and Read caller, one tree cache and
// the counters, shared by every call.

#ifndef VERITYD_CLIENT_SDK_CLIENT_IMPL_H_
#define VERITYD_CLIENT_SDK_CLIENT_IMPL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "client/sdk/fetch_counters.h"
#include "client/sdk/log_trust.h"
#include "client/sdk/name_trust.h"
#include "client/sdk/read_stream_verifier.h"
#include "client/sdk/received_read.h"
#include "client/sdk/signature_check.h"
#include "lib/tree/descriptor.h"
#include "proto/verity/v1/verity.grpc.pb.h"
#include "verity/client.h"

namespace verity::client {

// Thread-safe: the stub and the Read caller are, the cache and counters are,
// the name trust is, and the rest is immutable.
class ClientImpl final : public sdk::Client {
 public:
  // `channel` may be any channel, e.g. an in-process one.
  // `trust` checks names; null takes names as the server's word.
  // `signature` checks fs-verity signatures; null reads unsigned blobs.
  // `log` checks names against the transparency log; null does not.
  ClientImpl(const sdk::ClientOptions& options,
             std::shared_ptr<grpc::ChannelInterface> channel,
             std::unique_ptr<NameTrust> trust,
             std::unique_ptr<SignatureCheck> signature = nullptr,
             std::unique_ptr<LogTrust> log = nullptr);

  absl::Status Fetch(const sdk::Digest& digest, sdk::Sink& sink,
                     const sdk::FetchOptions& options) override;
  absl::Status FetchName(absl::string_view name, sdk::Sink& sink,
                         const sdk::FetchOptions& options) override;
  absl::StatusOr<sdk::PutResult> PutFile(
      absl::string_view path, const sdk::PutOptions& options) override;
  absl::StatusOr<sdk::PutResult> PutStream(
      const sdk::ByteSource& source, const sdk::PutOptions& options) override;
  using sdk::Client::Stat;
  absl::StatusOr<sdk::BlobInfo> Stat(const sdk::Digest& digest,
                                     absl::Time deadline) override;
  absl::StatusOr<sdk::BlobInfo> StatName(absl::string_view name) override;
  absl::StatusOr<sdk::BlobInfo> SetName(
      absl::string_view name, const sdk::Digest& digest,
      absl::string_view name_statement) override;
  absl::StatusOr<sdk::LogConsistencyAnswer> LogConsistency(
      uint64_t old_size, uint64_t new_size) override;
  absl::StatusOr<std::string> ReadLog(absl::string_view path) override;
  absl::StatusOr<std::vector<sdk::NameVersionInfo>> History(
      absl::string_view name) override;
  absl::StatusOr<sdk::CollectResult> Collect(bool dry_run) override;
  absl::StatusOr<sdk::ScrubResult> Scrub(bool wait) override;
  absl::StatusOr<sdk::ListPage> List(absl::string_view page_token,
                                     uint32_t page_size) override;
  absl::StatusOr<std::vector<sdk::Digest>> FindMissing(
      const std::vector<sdk::Digest>& digests) override;
  absl::StatusOr<std::vector<absl::Status>> BatchUpdate(
      const std::vector<sdk::BatchUpdateBlob>& blobs) override;
  absl::StatusOr<std::vector<absl::StatusOr<std::string>>> BatchRead(
      const std::vector<sdk::Digest>& digests,
      const sdk::FetchOptions& options) override;
  absl::Status Delete(const sdk::Digest& digest, bool force) override;
  absl::Status DeleteName(absl::string_view name) override;
  sdk::ClientStats Stats() const override;

 private:
  // The blob's authenticated tree, from the cache or a Stat.
  absl::StatusOr<std::shared_ptr<VerifiedTree>> Describe(
      const ParsedDigest& digest, absl::Time deadline);
  // StatName's work: the name's blob, its statement checked if keys are set,
  // its fs-verity signature if certificates are and `check_signature`.
  absl::StatusOr<sdk::BlobInfo> ResolveName(absl::string_view name,
                                            absl::Time deadline,
                                            bool check_signature);
  // OK without pinned certificates; else SignatureCheck::Check of `info`'s
  // signature for `digest`.
  absl::Status CheckSignature(const ParsedDigest& digest,
                              const v1::BlobInfo& info) const;
  absl::StatusOr<v1::BlobInfo> StatRpc(const v1::StatRequest& request,
                                       absl::Time deadline);
  // A Stat by `name`; with a log key, only with the log's proof of its
  // statement (LogTrust::Check), asked consistent with the newest seen.
  absl::StatusOr<v1::BlobInfo> StatNameRpc(absl::string_view name,
                                           absl::Time deadline);
  absl::Status DeleteRpc(const v1::DeleteRequest& request);
  // BatchUpdate against a server without it: one Put per blob.
  std::vector<absl::Status> PutEach(
      const std::vector<sdk::BatchUpdateBlob>& blobs);
  // BatchRead against a server without it: one Fetch per blob.
  std::vector<absl::StatusOr<std::string>> FetchEach(
      const std::vector<sdk::Digest>& digests,
      const sdk::FetchOptions& options);
  void SetDeadline(grpc::ClientContext* context) const;

  const sdk::ClientOptions options_;
  const std::unique_ptr<v1::Verity::StubInterface> stub_;
  const ReceivedReadCaller read_;
  ReadStreamVerifier::TreeCache cache_;
  FetchCounters counters_;
  const std::unique_ptr<NameTrust> trust_;  // null without trusted keys
  const std::unique_ptr<SignatureCheck> signature_;  // null without certs
  const std::unique_ptr<LogTrust> log_;              // null without a log key
};

}  // namespace verity::client

#endif  // VERITYD_CLIENT_SDK_CLIENT_IMPL_H_

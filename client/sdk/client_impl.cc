// Implements ClientImpl, and Client::Create as LevelDB's DB::Open lives
// beside DBImpl. Fetches go to RunFetch; the other calls are one RPC each,
// their answers checked before they are believed.

#include "client/sdk/client_impl.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "client/sdk/backoff.h"
#include "client/sdk/batch_read.h"
#include "client/sdk/blob_info_check.h"
#include "client/sdk/cancellation.h"
#include "client/sdk/channel.h"
#include "client/sdk/fetch_runner.h"
#include "client/sdk/file_upload.h"
#include "client/sdk/grpc_status.h"
#include "client/sdk/rpc_retry.h"
#include "client/sdk/sdk_convert.h"
#include "client/sdk/stream_upload.h"
#include "lib/base/retained_memory.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"
#include "lib/tree/verified_tree.h"
#include "proto/convert.h"
#include "proto/limits.h"

namespace verity::sdk {

absl::StatusOr<std::unique_ptr<Client>> Client::Create(
    const ClientOptions& options) {
  RETURN_IF_ERROR(client::ValidateRetryPolicy(options.retry));
  ASSIGN_OR_RETURN(std::unique_ptr<client::NameTrust> trust,
                   client::NameTrust::Create(options));
  ASSIGN_OR_RETURN(std::unique_ptr<client::SignatureCheck> signature,
                   client::SignatureCheck::Create(options));
  ASSIGN_OR_RETURN(std::unique_ptr<client::LogTrust> log,
                   client::LogTrust::Create(options));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   client::CreateClientChannel(options));
  if (options.retain_receive_memory) {
    // Eight streams' windows.
    RetainFreedMemory(8 * options.receive_window_bytes);
  }
  return std::make_unique<client::ClientImpl>(
      options, std::move(channel), std::move(trust), std::move(signature),
      std::move(log));
}

}  // namespace verity::sdk

namespace verity::client {
namespace {

// Put messages must stay below the server's 8 MiB limit, header included.
constexpr size_t kMaxPutChunkBytes = size_t{4} << 20;

absl::Status CheckChunkBytes(size_t chunk_bytes) {
  if (chunk_bytes == 0 || chunk_bytes > kMaxPutChunkBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("chunk_bytes must be from 1 to ", kMaxPutChunkBytes));
  }
  return absl::OkStatus();
}

// The SDK's PutOptions as both uploads take them.
absl::Status ToPutSettings(const sdk::PutOptions& options,
                           PutSettings* settings) {
  RETURN_IF_ERROR(CheckChunkBytes(options.chunk_bytes));
  ASSIGN_OR_RETURN(settings->params, MerkleParamsOf(options));
  if (!options.name_statement.empty() && options.name.empty()) {
    return absl::InvalidArgumentError("a name statement needs a name");
  }
  settings->name = options.name;
  settings->name_statement = options.name_statement;
  settings->fsverity_signature = options.fsverity_signature;
  settings->tree_manifest = options.tree_manifest;
  if (options.expected_digest.has_value()) {
    settings->expected = ToParsedDigest(*options.expected_digest);
  }
  settings->chunk_size = options.chunk_bytes;
  return absl::OkStatus();
}

LruCacheOptions TreeCacheOptions(const sdk::ClientOptions& options) {
  LruCacheOptions cache;
  cache.max_bytes = options.tree_cache_bytes;
  return cache;
}

absl::StatusOr<sdk::PutResult> ToPutResult(const UploadResult& result) {
  ASSIGN_OR_RETURN(sdk::BlobInfo info,
                   BlobInfoFromProto(result.info, &result.digest));
  return sdk::PutResult{std::move(info), result.already_present};
}

}  // namespace

ClientImpl::ClientImpl(const sdk::ClientOptions& options,
                       std::shared_ptr<grpc::ChannelInterface> channel,
                       std::unique_ptr<NameTrust> trust,
                       std::unique_ptr<SignatureCheck> signature,
                       std::unique_ptr<LogTrust> log)
    : options_(options),
      stub_(v1::Verity::NewStub(channel)),
      read_(std::move(channel)),
      cache_(TreeCacheOptions(options)),
      trust_(std::move(trust)),
      signature_(std::move(signature)),
      log_(std::move(log)) {}

absl::Status ClientImpl::Fetch(const sdk::Digest& digest, sdk::Sink& sink,
                               const sdk::FetchOptions& options) {
  Cancellation cancellation;
  FetchPlan plan;
  plan.target.read = &read_;
  plan.target.trusted = ToParsedDigest(digest);
  plan.target.priority = PriorityClassToProto(
      ToPriorityClass(options.priority.value_or(options_.default_priority)));
  plan.target.cache = &cache_;
  plan.target.counters = &counters_;
  plan.target.signature = signature_.get();
  plan.retry = options_.retry;
  plan.rpc_timeout = options_.rpc_timeout;
  plan.deadline = options.deadline;
  plan.cancellation = &cancellation;
  const DescribeFn describe = [this, &plan] {
    return Describe(plan.target.trusted, plan.deadline);
  };
  return RunFetch(plan, options, describe, sink);
}

absl::Status ClientImpl::FetchName(absl::string_view name, sdk::Sink& sink,
                                   const sdk::FetchOptions& options) {
  // The name is settled before the first Read: a refused one never starts
  // the sink, and every stream of the fetch reads the one digest, by digest.
  // The fetch checks the signature (Fetch's streams or Describe).
  absl::StatusOr<sdk::BlobInfo> info =
      ResolveName(name, options.deadline, /*check_signature=*/false);
  if (!info.ok()) {
    sink.Abort();
    return info.status();
  }
  return Fetch(info->digest, sink, options);
}

absl::StatusOr<std::shared_ptr<VerifiedTree>> ClientImpl::Describe(
    const ParsedDigest& digest, absl::Time deadline) {
  if (std::shared_ptr<VerifiedTree> tree = cache_.Find(digest)) return tree;
  v1::StatRequest request;
  request.set_digest(digest.ToString());
  ASSIGN_OR_RETURN(const v1::BlobInfo info, StatRpc(request, deadline));
  ASSIGN_OR_RETURN(const CheckedBlobInfo checked, CheckBlobInfo(info, &digest));
  // Cached trees are ones whose signature passed: a fetch that reads no
  // byte (an empty range, empty parts) still checks it here.
  RETURN_IF_ERROR(CheckSignature(digest, info));
  ASSIGN_OR_RETURN(std::shared_ptr<VerifiedTree> tree,
                   VerifiedTree::Create(checked.descriptor, digest));
  return cache_.Insert(std::move(tree));
}

absl::Status ClientImpl::CheckSignature(const ParsedDigest& digest,
                                        const v1::BlobInfo& info) const {
  if (signature_ == nullptr) return absl::OkStatus();
  return signature_->Check(digest, info.fsverity_signature());
}

absl::StatusOr<sdk::PutResult> ClientImpl::PutFile(
    absl::string_view path, const sdk::PutOptions& options) {
  UploadOptions upload;
  RETURN_IF_ERROR(ToPutSettings(options, &upload));
  upload.hash_threads = std::max(1, options.hash_threads);
  grpc::ClientContext context;
  SetDeadline(&context);
  ASSIGN_OR_RETURN(const UploadResult result,
                   UploadFile(*stub_, &context, path, upload));
  return ToPutResult(result);
}

absl::StatusOr<sdk::PutResult> ClientImpl::PutStream(
    const sdk::ByteSource& source, const sdk::PutOptions& options) {
  StreamUploadOptions upload;
  RETURN_IF_ERROR(ToPutSettings(options, &upload));
  grpc::ClientContext context;
  SetDeadline(&context);
  ASSIGN_OR_RETURN(const UploadResult result,
                   UploadStream(*stub_, &context, source, upload));
  return ToPutResult(result);
}

absl::StatusOr<sdk::BlobInfo> ClientImpl::Stat(const sdk::Digest& digest,
                                               absl::Time deadline) {
  v1::StatRequest request;
  request.set_digest(digest.ToString());
  ASSIGN_OR_RETURN(const v1::BlobInfo info, StatRpc(request, deadline));
  const ParsedDigest expected = ToParsedDigest(digest);
  ASSIGN_OR_RETURN(sdk::BlobInfo checked, BlobInfoFromProto(info, &expected));
  RETURN_IF_ERROR(CheckSignature(expected, info));
  return checked;
}

absl::StatusOr<sdk::BlobInfo> ClientImpl::StatName(absl::string_view name) {
  return ResolveName(name, absl::InfiniteFuture(), /*check_signature=*/true);
}

absl::StatusOr<sdk::BlobInfo> ClientImpl::ResolveName(absl::string_view name,
                                                      absl::Time deadline,
                                                      bool check_signature) {
  ASSIGN_OR_RETURN(const v1::BlobInfo info, StatNameRpc(name, deadline));
  std::optional<NameStatement> statement;
  if (trust_ != nullptr) {
    ASSIGN_OR_RETURN(statement, trust_->Check(name, info, absl::Now()));
  }
  ASSIGN_OR_RETURN(
      sdk::BlobInfo checked,
      BlobInfoFromProto(info, statement ? &statement->claim.digest : nullptr));
  if (statement.has_value()) {
    checked.name_statement = ToNameStatementInfo(*statement, /*verified=*/true);
  }
  if (check_signature) {
    RETURN_IF_ERROR(CheckSignature(ToParsedDigest(checked.digest), info));
  }
  return checked;
}

absl::StatusOr<sdk::BlobInfo> ClientImpl::SetName(
    absl::string_view name, const sdk::Digest& digest,
    absl::string_view name_statement) {
  v1::SetNameRequest request;
  request.set_name(std::string(name));
  request.set_digest(digest.ToString());
  request.set_name_statement(std::string(name_statement));
  // Not retried, as Put is not: a repeat whose first try landed is refused
  // as stale by a server with --name_keys.
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::BlobInfo info;
  RETURN_IF_ERROR(FromGrpcStatus(stub_->SetName(&context, request, &info)));
  const ParsedDigest expected = ToParsedDigest(digest);
  return BlobInfoFromProto(info, &expected);
}

absl::StatusOr<v1::BlobInfo> ClientImpl::StatNameRpc(absl::string_view name,
                                                     absl::Time deadline) {
  v1::StatRequest request;
  request.set_name(std::string(name));
  if (log_ == nullptr) return StatRpc(request, deadline);
  // Another client of the state directory may record a newer checkpoint
  // between the two: the proof asked for is then from the wrong size.
  constexpr int kAttempts = 3;
  absl::Status checked;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    ASSIGN_OR_RETURN(const uint64_t seen, log_->SeenSize());
    request.set_log_size_seen(seen);
    ASSIGN_OR_RETURN(v1::BlobInfo info, StatRpc(request, deadline));
    checked = log_->Check(name, info.name_statement(),
                          info.has_log_proof() ? &info.log_proof() : nullptr);
    if (checked.ok()) return info;
    if (!absl::IsAborted(checked)) return checked;
  }
  return checked;
}

absl::StatusOr<v1::BlobInfo> ClientImpl::StatRpc(const v1::StatRequest& request,
                                                 absl::Time deadline) {
  v1::BlobInfo info;
  RETURN_IF_ERROR(RetryUnary(options_.retry, options_.rpc_timeout, deadline,
                             [&](grpc::ClientContext* context) {
                               return FromGrpcStatus(
                                   stub_->Stat(context, request, &info));
                             }));
  return info;
}

absl::StatusOr<std::vector<sdk::NameVersionInfo>> ClientImpl::History(
    absl::string_view name) {
  v1::HistoryRequest request;
  request.set_name(std::string(name));
  v1::HistoryResponse response;
  RETURN_IF_ERROR(RetryUnary(
      options_.retry, options_.rpc_timeout, absl::InfiniteFuture(),
      [&](grpc::ClientContext* context) {
        return FromGrpcStatus(stub_->History(context, request, &response));
      }));
  std::vector<sdk::NameVersionInfo> versions;
  for (const v1::NameVersion& proto : response.versions()) {
    ASSIGN_OR_RETURN(sdk::Digest digest, sdk::Digest::Parse(proto.digest()));
    sdk::NameVersionInfo version{std::move(digest)};
    if (proto.written_unix_seconds() != 0) {
      version.written = absl::FromUnixSeconds(proto.written_unix_seconds());
    }
    absl::StatusOr<NameStatement> statement =
        ParseNameStatement(proto.name_statement());
    if (statement.ok()) {
      const bool verified =
          trust_ != nullptr &&
          statement->claim.digest == ToParsedDigest(version.digest) &&
          CheckNameStatementSigned(*statement, trust_->keys(), name).ok();
      version.statement = ToNameStatementInfo(*statement, verified);
    }
    versions.push_back(std::move(version));
  }
  return versions;
}

absl::StatusOr<sdk::LogConsistencyAnswer> ClientImpl::LogConsistency(
    uint64_t old_size, uint64_t new_size) {
  v1::LogConsistencyRequest request;
  request.set_old_size(old_size);
  request.set_new_size(new_size);
  v1::LogConsistencyResponse response;
  RETURN_IF_ERROR(RetryUnary(options_.retry, options_.rpc_timeout,
                             absl::InfiniteFuture(),
                             [&](grpc::ClientContext* context) {
                               return FromGrpcStatus(stub_->LogConsistency(
                                   context, request, &response));
                             }));
  sdk::LogConsistencyAnswer answer;
  answer.checkpoint = std::move(*response.mutable_checkpoint());
  answer.old_size = response.old_size();
  answer.new_size = response.new_size();
  answer.proof.assign(response.proof().begin(), response.proof().end());
  return answer;
}

absl::StatusOr<std::string> ClientImpl::ReadLog(absl::string_view path) {
  v1::ReadLogRequest request;
  request.set_path(std::string(path));
  v1::ReadLogResponse response;
  RETURN_IF_ERROR(RetryUnary(
      options_.retry, options_.rpc_timeout, absl::InfiniteFuture(),
      [&](grpc::ClientContext* context) {
        return FromGrpcStatus(stub_->ReadLog(context, request, &response));
      }));
  return std::move(*response.mutable_data());
}

absl::StatusOr<sdk::CollectResult> ClientImpl::Collect(bool dry_run) {
  v1::CollectRequest request;
  request.set_dry_run(dry_run);
  // No deadline: a collection takes as long as the store is large.
  grpc::ClientContext context;
  v1::CollectResponse response;
  RETURN_IF_ERROR(FromGrpcStatus(stub_->Collect(&context, request, &response)));
  sdk::CollectResult result;
  result.blobs = response.blobs();
  result.bytes = response.bytes();
  result.reachable = response.reachable();
  result.reachable_bytes = response.reachable_bytes();
  result.quarantined = response.quarantined();
  result.quarantined_freed = response.quarantined_freed();
  result.leftovers = response.leftovers();
  result.leftover_bytes = response.leftover_bytes();
  result.freed = response.freed();
  result.freed_bytes = response.freed_bytes();
  result.young = response.young();
  result.names = response.names();
  result.trees = response.trees();
  result.took = absl::Seconds(response.seconds());
  return result;
}

absl::StatusOr<sdk::ScrubResult> ClientImpl::Scrub(bool wait) {
  v1::ScrubRequest request;
  request.set_wait(wait);
  // No deadline: a pass takes as long as the store is large.
  grpc::ClientContext context;
  v1::ScrubResponse response;
  RETURN_IF_ERROR(FromGrpcStatus(stub_->Scrub(&context, request, &response)));
  sdk::ScrubResult result;
  result.running = response.running();
  result.pass_started = absl::FromUnixSeconds(response.pass_started());
  result.last_completed = absl::FromUnixSeconds(response.last_completed());
  result.waited = response.waited();
  result.blobs = response.blobs();
  result.bytes = response.bytes();
  result.bad_blocks = response.bad_blocks();
  result.repaired_blocks = response.repaired_blocks();
  result.unrepairable = response.unrepairable();
  result.unread = response.unread();
  result.took = absl::Seconds(response.seconds());
  return result;
}

absl::StatusOr<sdk::ListPage> ClientImpl::List(absl::string_view page_token,
                                               uint32_t page_size) {
  v1::ListRequest request;
  request.set_page_token(std::string(page_token));
  request.set_page_size(page_size);
  v1::ListResponse response;
  RETURN_IF_ERROR(RetryUnary(
      options_.retry, options_.rpc_timeout, absl::InfiniteFuture(),
      [&](grpc::ClientContext* context) {
        return FromGrpcStatus(stub_->List(context, request, &response));
      }));
  sdk::ListPage page;
  for (const v1::BlobInfo& info : response.blobs()) {
    ASSIGN_OR_RETURN(sdk::BlobInfo checked, BlobInfoFromProto(info));
    page.blobs.push_back(std::move(checked));
  }
  page.next_page_token = response.next_page_token();
  return page;
}

absl::StatusOr<std::vector<sdk::Digest>> ClientImpl::FindMissing(
    const std::vector<sdk::Digest>& digests) {
  constexpr size_t kBatch = v1::kMaxFindMissingDigests;
  std::vector<std::string> unique;
  absl::flat_hash_set<std::string> seen;
  for (const sdk::Digest& digest : digests) {
    std::string text = digest.ToString();
    if (seen.insert(text).second) unique.push_back(std::move(text));
  }
  std::vector<sdk::Digest> missing;
  for (size_t first = 0; first < unique.size(); first += kBatch) {
    v1::FindMissingRequest request;
    const size_t end = std::min(unique.size(), first + kBatch);
    for (size_t i = first; i < end; ++i) request.add_digests(unique[i]);
    v1::FindMissingResponse response;
    RETURN_IF_ERROR(RetryUnary(options_.retry, options_.rpc_timeout,
                               absl::InfiniteFuture(),
                               [&](grpc::ClientContext* context) {
                                 response.Clear();
                                 return FromGrpcStatus(stub_->FindMissing(
                                     context, request, &response));
                               }));
    for (const std::string& text : response.missing()) {
      ASSIGN_OR_RETURN(sdk::Digest digest, sdk::Digest::Parse(text));
      missing.push_back(std::move(digest));
    }
  }
  return missing;
}

absl::StatusOr<std::vector<absl::Status>> ClientImpl::BatchUpdate(
    const std::vector<sdk::BatchUpdateBlob>& blobs) {
  uint64_t bytes = 0;
  v1::BatchUpdateRequest request;
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    bytes += blob.data.size();
    v1::BatchUpdateRequest::Blob* out = request.add_blobs();
    out->set_digest(blob.digest.ToString());
    out->set_data(blob.data);
    MerkleParams params;
    params.hash_algorithm = ToParsedDigest(blob.digest).algorithm;
    *out->mutable_params() = TreeParamsToProto(params);
  }
  if (blobs.size() > sdk::kMaxBatchUpdateBlobs ||
      bytes > sdk::kMaxBatchUpdateBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchUpdate stores at most ", sdk::kMaxBatchUpdateBlobs,
                     " blobs of at most ", sdk::kMaxBatchUpdateBytes,
                     " bytes; given ", blobs.size(), " of ", bytes));
  }
  v1::BatchUpdateResponse response;
  const absl::Status rpc = RetryUnary(
      options_.retry, options_.rpc_timeout, absl::InfiniteFuture(),
      [&](grpc::ClientContext* context) {
        response.Clear();
        return FromGrpcStatus(stub_->BatchUpdate(context, request, &response));
      });
  if (rpc.code() == absl::StatusCode::kUnimplemented) return PutEach(blobs);
  RETURN_IF_ERROR(rpc);
  if (static_cast<size_t>(response.blobs_size()) != blobs.size()) {
    return absl::DataLossError(absl::StrCat("BatchUpdate sent ", blobs.size(),
                                            " blobs and the server answered ",
                                            response.blobs_size()));
  }
  std::vector<absl::Status> statuses;
  statuses.reserve(blobs.size());
  for (const v1::BatchUpdateResponse::Blob& blob : response.blobs()) {
    statuses.push_back(FromGrpcStatus(grpc::Status(
        static_cast<grpc::StatusCode>(blob.code()), blob.message())));
  }
  return statuses;
}

std::vector<absl::Status> ClientImpl::PutEach(
    const std::vector<sdk::BatchUpdateBlob>& blobs) {
  std::vector<absl::Status> statuses;
  for (const sdk::BatchUpdateBlob& blob : blobs) {
    sdk::PutOptions put;
    put.hash_algorithm = blob.digest.algorithm();
    put.expected_digest = blob.digest;
    absl::string_view rest = blob.data;
    statuses.push_back(
        PutStream(
            [&rest](absl::Span<uint8_t> buffer) -> absl::StatusOr<size_t> {
              const size_t n = std::min(buffer.size(), rest.size());
              std::copy_n(rest.data(), n, buffer.data());
              rest.remove_prefix(n);
              return n;
            },
            put)
            .status());
  }
  return statuses;
}

absl::StatusOr<std::vector<absl::StatusOr<std::string>>> ClientImpl::BatchRead(
    const std::vector<sdk::Digest>& digests, const sdk::FetchOptions& options) {
  if (digests.size() > sdk::kMaxBatchReadBlobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("BatchRead reads at most ", sdk::kMaxBatchReadBlobs,
                     " blobs; asked for ", digests.size()));
  }
  v1::BatchReadRequest request;
  for (const sdk::Digest& digest : digests) {
    request.add_digests(digest.ToString());
  }
  request.set_priority_class(PriorityClassToProto(
      ToPriorityClass(options.priority.value_or(options_.default_priority))));
  v1::BatchReadResponse response;
  const absl::Status rpc = RetryUnary(
      options_.retry, options_.rpc_timeout, options.deadline,
      [&](grpc::ClientContext* context) {
        response.Clear();
        FetchCounters::Add(counters_.batch_reads, 1);
        return FromGrpcStatus(stub_->BatchRead(context, request, &response));
      });
  if (rpc.code() == absl::StatusCode::kUnimplemented) {
    return FetchEach(digests, options);
  }
  RETURN_IF_ERROR(rpc);
  if (static_cast<size_t>(response.blobs_size()) != digests.size()) {
    return absl::DataLossError(
        absl::StrCat("BatchRead asked for ", digests.size(),
                     " blobs and the server answered ", response.blobs_size()));
  }
  std::vector<absl::StatusOr<std::string>> blobs;
  blobs.reserve(digests.size());
  for (size_t i = 0; i < digests.size(); ++i) {
    blobs.push_back(CheckBatchBlob(*response.mutable_blobs(i),
                                   ToParsedDigest(digests[i]),
                                   signature_.get()));
    if (!blobs.back().ok()) continue;
    FetchCounters::Add(counters_.batch_blobs, 1);
    FetchCounters::Add(counters_.data_bytes_verified, blobs.back()->size());
    FetchCounters::Add(counters_.bytes_delivered, blobs.back()->size());
  }
  return blobs;
}

std::vector<absl::StatusOr<std::string>> ClientImpl::FetchEach(
    const std::vector<sdk::Digest>& digests, const sdk::FetchOptions& options) {
  sdk::FetchOptions whole = options;
  whole.offset = 0;
  whole.length.reset();
  whole.parallel_streams = 1;
  std::vector<absl::StatusOr<std::string>> blobs;
  for (const sdk::Digest& digest : digests) {
    sdk::MemorySink sink(sdk::kMaxBatchReadBytes);
    const absl::Status status = Fetch(digest, sink, whole);
    if (status.ok()) {
      blobs.push_back(sink.data());
    } else {
      blobs.push_back(status);
    }
  }
  return blobs;
}

absl::Status ClientImpl::Delete(const sdk::Digest& digest, bool force) {
  v1::DeleteRequest request;
  request.set_digest(digest.ToString());
  request.set_force(force);
  return DeleteRpc(request);
}

absl::Status ClientImpl::DeleteName(absl::string_view name) {
  v1::DeleteRequest request;
  request.set_name(std::string(name));
  return DeleteRpc(request);
}

absl::Status ClientImpl::DeleteRpc(const v1::DeleteRequest& request) {
  // Not retried: a Delete whose answer was lost would come back NOT_FOUND.
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::DeleteResponse response;
  return FromGrpcStatus(stub_->Delete(&context, request, &response));
}

sdk::ClientStats ClientImpl::Stats() const {
  sdk::ClientStats stats = counters_.Snapshot();
  stats.tree_cache_bytes = cache_.bytes();
  stats.tree_cache_blobs = cache_.size();
  return stats;
}

void ClientImpl::SetDeadline(grpc::ClientContext* context) const {
  if (options_.rpc_timeout > absl::ZeroDuration()) {
    context->set_deadline(
        absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  }
}

}  // namespace verity::client

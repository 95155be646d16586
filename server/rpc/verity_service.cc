// Implements VerityService. Stat and List touch only the store's in-memory
// index, so they answer on the callback thread; Delete renames and fsyncs, so
// it runs on the store's I/O executor.

#include "server/rpc/verity_service.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"
#include "server/rpc/grpc_status.h"
#include "server/rpc/put_reactor.h"
#include "server/rpc/read_reactor.h"

namespace verity::server {
namespace {

constexpr size_t kMaxPageSize = 1000;

grpc::ServerUnaryReactor* Reply(grpc::CallbackServerContext* call,
                                CallTimer& timer, const absl::Status& status) {
  timer.set_code(status.code());
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

template <typename Request>
absl::StatusOr<ParsedDigest> Resolve(const ServiceContext& context,
                                     const Request& request) {
  RETURN_IF_ERROR(context.CheckServing());
  return ResolveBlob(*context.store, request.digest(), request.name(),
                     request.blob_case() == Request::kName);
}

absl::Status DoStat(const ServiceContext& context,
                    const v1::StatRequest& request, v1::BlobInfo* response) {
  ASSIGN_OR_RETURN(ParsedDigest digest, Resolve(context, request));
  ASSIGN_OR_RETURN(BlobInfo info, context.store->Stat(digest));
  *response = BlobInfoToProto(info);
  return absl::OkStatus();
}

absl::Status DoList(const ServiceContext& context,
                    const v1::ListRequest& request,
                    v1::ListResponse* response) {
  RETURN_IF_ERROR(context.CheckServing());
  const size_t page_size =
      request.page_size() == 0
          ? kMaxPageSize
          : std::min<size_t>(request.page_size(), kMaxPageSize);
  // The page token is the last digest of the previous page: stable under
  // concurrent puts.
  ASSIGN_OR_RETURN(std::vector<BlobInfo> blobs,
                   context.store->List(request.page_token(), page_size + 1));
  const bool more = blobs.size() > page_size;
  if (more) blobs.pop_back();
  for (const BlobInfo& info : blobs) {
    *response->add_blobs() = BlobInfoToProto(info);
  }
  if (more) response->set_next_page_token(blobs.back().digest);
  return absl::OkStatus();
}

absl::Status DoDelete(ServiceContext* context,
                      const v1::DeleteRequest& request) {
  ASSIGN_OR_RETURN(ParsedDigest digest, Resolve(*context, request));
  if (request.blob_case() == v1::DeleteRequest::kName) {
    return context->store->DeleteName(request.name());
  }
  RETURN_IF_ERROR(context->store->DeleteBlob(digest));
  context->cache->Erase(digest);
  return absl::OkStatus();
}

}  // namespace

grpc::ServerReadReactor<v1::PutRequest>* VerityService::Put(
    grpc::CallbackServerContext* call, v1::PutResponse* response) {
  return new PutReactor(context_, call, response);
}

grpc::ServerWriteReactor<v1::ReadResponse>* VerityService::Read(
    grpc::CallbackServerContext* /*call*/, const v1::ReadRequest* request) {
  return new ReadReactor(context_, *request);
}

grpc::ServerUnaryReactor* VerityService::Stat(grpc::CallbackServerContext* call,
                                              const v1::StatRequest* request,
                                              v1::BlobInfo* response) {
  CallTimer timer(context_->metrics, RpcMethod::kStat);
  return Reply(call, timer, DoStat(*context_, *request, response));
}

grpc::ServerUnaryReactor* VerityService::List(grpc::CallbackServerContext* call,
                                              const v1::ListRequest* request,
                                              v1::ListResponse* response) {
  CallTimer timer(context_->metrics, RpcMethod::kList);
  return Reply(call, timer, DoList(*context_, *request, response));
}

grpc::ServerUnaryReactor* VerityService::Delete(
    grpc::CallbackServerContext* call, const v1::DeleteRequest* request,
    v1::DeleteResponse* /*response*/) {
  // Deleting renames and fsyncs: on the store's I/O threads. The call, and so
  // `request`, lives until the reactor finishes.
  auto timer =
      std::make_shared<CallTimer>(context_->metrics, RpcMethod::kDelete);
  grpc::ServerUnaryReactor* reactor = call->DefaultReactor();
  absl::Status queued = context_->io->Submit([this, request, reactor, timer] {
    const absl::Status status = DoDelete(context_, *request);
    timer->set_code(status.code());
    reactor->Finish(ToGrpcStatus(status));
  });
  if (!queued.ok()) {
    timer->set_code(queued.code());
    reactor->Finish(ToGrpcStatus(queued));
  }
  return reactor;
}

}  // namespace verity::server

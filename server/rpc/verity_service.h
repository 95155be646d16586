// The verity.v1.Verity gRPC service on the callback API: Put and Read are
// streams with their own reactors, as are ReadSmall, a Read in one message,
// and BatchRead, whole small blobs in one; Stat, List, Delete, SetName,
// FindMissing and BatchUpdate (whole small blobs stored in one) are unary.

#ifndef VERITYD_SERVER_RPC_VERITY_SERVICE_H_
#define VERITYD_SERVER_RPC_VERITY_SERVICE_H_

#include <grpcpp/grpcpp.h>

#include "proto/verity/v1/verity.grpc.pb.h"
#include "server/rpc/service_context.h"

namespace verity::server {

// Thread-safe; does not own the context, which must outlive the server.
// Read, ReadSmall and BatchRead are raw methods: their reactors serialize their
// own messages, so that chunks are sent without a copy.
class VerityService final : public v1::Verity::WithRawCallbackMethod_Read<
                                v1::Verity::WithRawCallbackMethod_ReadSmall<
                                    v1::Verity::WithRawCallbackMethod_BatchRead<
                                        v1::Verity::CallbackService>>> {
 public:
  explicit VerityService(ServiceContext* context) : context_(context) {}

  grpc::ServerReadReactor<v1::PutRequest>* Put(
      grpc::CallbackServerContext* call, v1::PutResponse* response) override;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Read(
      grpc::CallbackServerContext* call,
      const grpc::ByteBuffer* request) override;
  grpc::ServerUnaryReactor* ReadSmall(grpc::CallbackServerContext* call,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* BatchRead(grpc::CallbackServerContext* call,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Stat(grpc::CallbackServerContext* call,
                                 const v1::StatRequest* request,
                                 v1::BlobInfo* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* call,
                                 const v1::ListRequest* request,
                                 v1::ListResponse* response) override;
  grpc::ServerUnaryReactor* Delete(grpc::CallbackServerContext* call,
                                   const v1::DeleteRequest* request,
                                   v1::DeleteResponse* response) override;
  grpc::ServerUnaryReactor* History(grpc::CallbackServerContext* call,
                                    const v1::HistoryRequest* request,
                                    v1::HistoryResponse* response) override;
  grpc::ServerUnaryReactor* Scrub(grpc::CallbackServerContext* call,
                                  const v1::ScrubRequest* request,
                                  v1::ScrubResponse* response) override;
  grpc::ServerUnaryReactor* Collect(grpc::CallbackServerContext* call,
                                    const v1::CollectRequest* request,
                                    v1::CollectResponse* response) override;
  grpc::ServerUnaryReactor* SetName(grpc::CallbackServerContext* call,
                                    const v1::SetNameRequest* request,
                                    v1::BlobInfo* response) override;
  grpc::ServerUnaryReactor* FindMissing(
      grpc::CallbackServerContext* call, const v1::FindMissingRequest* request,
      v1::FindMissingResponse* response) override;
  grpc::ServerUnaryReactor* BatchUpdate(
      grpc::CallbackServerContext* call, const v1::BatchUpdateRequest* request,
      v1::BatchUpdateResponse* response) override;
  grpc::ServerUnaryReactor* LogConsistency(
      grpc::CallbackServerContext* call,
      const v1::LogConsistencyRequest* request,
      v1::LogConsistencyResponse* response) override;
  grpc::ServerUnaryReactor* ReadLog(grpc::CallbackServerContext* call,
                                    const v1::ReadLogRequest* request,
                                    v1::ReadLogResponse* response) override;

 private:
  ServiceContext* const context_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_VERITY_SERVICE_H_

#include "server/rpc/read_response_wire.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/support/slice.h>

#include <string>
#include <utility>

namespace verity::server {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

// The slice's destroy callback: gRPC calls it once, on whichever thread
// drops the last reference.
void ReleaseBuffer(void* buffer) { delete static_cast<Buffer*>(buffer); }

}  // namespace

grpc::ByteBuffer SerializeReadResponse(const v1::ReadResponse& head,
                                       Buffer data) {
  std::string prefix = head.SerializeAsString();
  if (data.empty()) {  // proto3 leaves an empty field out
    grpc::Slice slice(prefix);
    return grpc::ByteBuffer(&slice, 1);
  }
  const uint32_t tag =
      WireFormatLite::MakeTag(v1::ReadResponse::kDataFieldNumber,
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  uint8_t field[10];  // two varint32s of at most 5 bytes each
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(tag, field);
  end = CodedOutputStream::WriteVarint32ToArray(
      static_cast<uint32_t>(data.size()), end);
  prefix.append(reinterpret_cast<const char*>(field), end - field);
  auto* owned = new Buffer(std::move(data));
  grpc::Slice slices[] = {
      grpc::Slice(prefix),
      grpc::Slice(owned->data(), owned->size(), ReleaseBuffer, owned)};
  return grpc::ByteBuffer(slices, 2);
}

}  // namespace verity::server

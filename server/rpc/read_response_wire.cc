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

// Appends a length-delimited field's tag and length to `out`.
void AppendFieldHead(int number, size_t length, std::string* out) {
  const uint32_t tag = WireFormatLite::MakeTag(
      number, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  uint8_t field[10];  // two varint32s of at most 5 bytes each
  uint8_t* end = CodedOutputStream::WriteVarint32ToArray(tag, field);
  end = CodedOutputStream::WriteVarint32ToArray(static_cast<uint32_t>(length),
                                                end);
  out->append(reinterpret_cast<const char*>(field), end - field);
}

}  // namespace

grpc::ByteBuffer SerializeReadResponse(const v1::ReadResponse& head,
                                       Buffer data) {
  std::string prefix = head.SerializeAsString();
  if (data.empty()) {  // proto3 leaves an empty field out
    grpc::Slice slice(prefix);
    return grpc::ByteBuffer(&slice, 1);
  }
  AppendFieldHead(v1::ReadResponse::kDataFieldNumber, data.size(), &prefix);
  auto* owned = new Buffer(std::move(data));
  grpc::Slice slices[] = {
      grpc::Slice(prefix),
      grpc::Slice(owned->data(), owned->size(), ReleaseBuffer, owned)};
  return grpc::ByteBuffer(slices, 2);
}

grpc::ByteBuffer SerializeBatchReadResponse(std::vector<BatchReadPart>& parts) {
  std::vector<grpc::Slice> slices;
  for (BatchReadPart& part : parts) {
    std::vector<grpc::Slice> read;
    if (part.status.ok() && !part.read.Dump(&read).ok()) {
      part.status = absl::InternalError("an unreadable response buffer");
    }
    // The Blob message: the read as its field 3, or the code and message.
    std::string blob;
    if (part.status.ok()) {
      size_t length = 0;
      for (const grpc::Slice& slice : read) length += slice.size();
      AppendFieldHead(v1::BatchReadResponse::Blob::kReadFieldNumber, length,
                      &blob);
    } else {
      read.clear();
      v1::BatchReadResponse::Blob failed;
      failed.set_code(static_cast<int>(part.status.code()));
      failed.set_message(std::string(part.status.message()));
      blob = failed.SerializeAsString();
    }
    size_t length = blob.size();
    for (const grpc::Slice& slice : read) length += slice.size();
    std::string head;
    AppendFieldHead(v1::BatchReadResponse::kBlobsFieldNumber, length, &head);
    head += blob;
    slices.emplace_back(head);
    for (grpc::Slice& slice : read) slices.push_back(std::move(slice));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace verity::server

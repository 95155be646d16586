// Implements ParseReadResponsePieces by walking the message's top-level
// fields (tag, then a varint, a fixed-size value, a length and payload, or a
// group up to its end tag): the data field's payload is kept in place, every
// other field's bytes are gathered for protobuf's own parser.

#include "proto/read_response_pieces.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"

namespace verity {
namespace {

using google::protobuf::internal::WireFormatLite;

// A field's place in the message: `header` bytes of tag (and length, for
// length-delimited fields), then `payload` bytes.
struct Field {
  uint32_t number = 0;
  WireFormatLite::WireType type = WireFormatLite::WIRETYPE_VARINT;
  size_t header = 0;
  size_t payload = 0;
};

// The size of the group field that starts `rest`, to its end tag, which only
// a walk of its nested fields finds. ReadResponse has no group field, so an
// unknown one is skipped as protobuf skips it; rare, so `rest` is copied.
absl::Status GroupSize(const ByteChain& rest, size_t* size) {
  const std::string bytes = rest.ToString();
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  if (!WireFormatLite::SkipField(&in, in.ReadTag())) {
    return absl::InvalidArgumentError("a group field does not end");
  }
  *size = in.CurrentPosition();
  return absl::OkStatus();
}

// The field at the start of `rest`.
absl::Status NextField(const ByteChain& rest, Field* field) {
  // A tag and a length are two varints of at most 5 and 10 bytes; a varint
  // value at most 10.
  uint8_t head[20];
  const size_t have = rest.CopyOut(0, absl::MakeSpan(head));
  google::protobuf::io::CodedInputStream in(head, static_cast<int>(have));
  const uint32_t tag = in.ReadTag();
  if (tag == 0) return absl::InvalidArgumentError("a field has no valid tag");
  field->number = WireFormatLite::GetTagFieldNumber(tag);
  field->type = WireFormatLite::GetTagWireType(tag);
  uint64_t value = 0;
  switch (field->type) {
    case WireFormatLite::WIRETYPE_VARINT: {
      const int start = in.CurrentPosition();
      if (!in.ReadVarint64(&value)) break;
      field->header = start;
      field->payload = in.CurrentPosition() - start;
      return absl::OkStatus();
    }
    case WireFormatLite::WIRETYPE_FIXED64:
    case WireFormatLite::WIRETYPE_FIXED32:
      field->header = in.CurrentPosition();
      field->payload = field->type == WireFormatLite::WIRETYPE_FIXED64 ? 8 : 4;
      return absl::OkStatus();
    case WireFormatLite::WIRETYPE_LENGTH_DELIMITED:
      if (!in.ReadVarint64(&value)) break;
      field->header = in.CurrentPosition();
      field->payload = value;
      return absl::OkStatus();
    case WireFormatLite::WIRETYPE_START_GROUP:
      return GroupSize(rest, &field->header);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("field ", field->number, " has wire type ", field->type,
                       ", which is not valid here"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("field ", field->number, " has a malformed varint"));
}

}  // namespace

absl::Status ParseReadResponsePieces(const ByteChain& message,
                                     v1::ReadResponse* head,
                                     std::vector<ByteChain::Piece>* data) {
  head->Clear();
  data->clear();
  std::string other_fields;
  ByteChain rest = message;
  while (!rest.empty()) {
    Field field;
    if (absl::Status status = NextField(rest, &field); !status.ok()) {
      return status;
    }
    if (field.header > rest.size() ||
        field.payload > rest.size() - field.header) {
      return absl::InvalidArgumentError(
          absl::StrCat("field ", field.number, " runs past the message"));
    }
    const size_t size = field.header + field.payload;
    if (field.number == v1::ReadResponse::kDataFieldNumber &&
        field.type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      // As protobuf does for a repeated singular field, the last one wins.
      data->clear();
      rest.Sub(field.header, field.payload).ForEachPiece([data](auto piece) {
        data->push_back(piece);
        return true;
      });
    } else {
      rest.Sub(0, size).ForEachPiece([&other_fields](auto piece) {
        other_fields.append(reinterpret_cast<const char*>(piece.data()),
                            piece.size());
        return true;
      });
    }
    rest = rest.Sub(size, rest.size() - size);
  }
  if (!head->ParseFromString(other_fields)) {
    return absl::InvalidArgumentError("the message does not parse");
  }
  return absl::OkStatus();
}

}  // namespace verity

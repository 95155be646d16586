// Fuzzes the service's request checks (server/rpc/request_checks.h) with wire
// messages: the first byte picks Read, Put header, List, Stat or Delete, the
// rest is parsed as that message. A check accepts exactly what the protocol
// allows (predicates.h and the rules below), refuses with INVALID_ARGUMENT,
// and passes the request's fields on unchanged.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "lib/hash/hash.h"
#include "lib/tree/descriptor.h"
#include "lib/trust/fsverity_signature.h"
#include "lib/trust/name_statement.h"
#include "proto/verity/v1/verity.pb.h"
#include "server/rpc/request_checks.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/predicates.h"

namespace verity::fuzz {
namespace {

using server::BlobSelector;

void CheckRefusal(const absl::Status& status) {
  FUZZ_CHECK(status.code() == absl::StatusCode::kInvalidArgument,
             status.ToString());
}

// Accepted exactly when the named blob is well-formed, and then it is the one
// the request named.
template <typename Request>
void CheckSelector(const Request& request) {
  const bool by_name = request.blob_case() == Request::kName;
  const absl::StatusOr<BlobSelector> blob =
      server::CheckBlobSelector(request.digest(), request.name(), by_name);
  const bool valid = by_name ? LooksLikeName(request.name())
                             : LooksLikeDigest(request.digest());
  FUZZ_CHECK(blob.ok() == valid, blob.status().message());
  if (!blob.ok()) return CheckRefusal(blob.status());
  FUZZ_CHECK(blob->by_name == by_name, "");
  if (by_name) {
    FUZZ_CHECK(blob->name == request.name(), blob->name);
  } else {
    FUZZ_CHECK(
        blob->digest.ToString() == absl::AsciiStrToLower(request.digest()),
        blob->digest.ToString());
  }
}

void CheckRead(const v1::ReadRequest& request) {
  CheckSelector(request);
  const absl::StatusOr<server::CheckedRead> read =
      server::CheckReadRequest(request);
  const bool by_name = request.blob_case() == v1::ReadRequest::kName;
  const bool blob_valid = by_name ? LooksLikeName(request.name())
                                  : LooksLikeDigest(request.digest());
  const int priority = request.priority_class();
  const bool end_fits = request.offset() + request.length() >= request.offset();
  FUZZ_CHECK(
      read.ok() == (blob_valid && priority >= 0 && priority <= 3 && end_fits),
      read.status().message());
  if (!read.ok()) return CheckRefusal(read.status());
  FUZZ_CHECK(static_cast<int>(read->priority_class) == priority, "");
  FUZZ_CHECK(read->offset == request.offset(), "");
  FUZZ_CHECK(read->length.has_value() == (request.length() != 0), "");
  FUZZ_CHECK(read->length.value_or(0) == request.length(), "");
}

// TreeParams as the protocol gives them: unset fields take fs-verity's
// defaults (SHA-256, 4096, fs-verity); a block size is a power of two holding
// at least two hashes, at most 2^30; a salt has at most 32 bytes. A dm-verity
// tree (format 1): blocks of 512 B to 512 KiB, a salt of at most 256 bytes.
bool ParamsValid(const v1::TreeParams& params, int* algorithm) {
  *algorithm = params.hash_algorithm() == 0 ? 1 : params.hash_algorithm();
  if (*algorithm != 1 && *algorithm != 2) return false;
  const int format = params.format();
  if (format != 0 && format != 1) return false;
  const uint64_t block = params.block_size() == 0 ? 4096 : params.block_size();
  const uint64_t min_block = format == 1 ? 512 : *algorithm == 1 ? 64 : 128;
  const uint64_t max_block = format == 1 ? 512 * 1024 : uint64_t{1} << 30;
  const bool power_of_two = (block & (block - 1)) == 0;
  return power_of_two && block >= min_block && block <= max_block &&
         params.salt().size() <= (format == 1 ? 256u : 32u);
}

// A dm-verity Put that gives its size must give whole blocks, at least one.
bool SizeValid(const v1::PutHeader& header) {
  if (header.params().format() != 1 || !header.has_content_size()) return true;
  const uint64_t block =
      header.params().block_size() == 0 ? 4096 : header.params().block_size();
  const uint64_t size = header.content_size();
  return size != 0 && size % block == 0 && size <= (~uint64_t{0} >> 1);
}

void CheckPutHeader(const v1::PutHeader& header) {
  const absl::StatusOr<server::CheckedPutHeader> checked =
      server::CheckPutHeader(header);
  int algorithm = 0;
  bool valid = ParamsValid(header.params(), &algorithm);
  valid = valid && SizeValid(header);
  const std::string& expected = header.expected_digest();
  if (!expected.empty()) {
    valid = valid && LooksLikeDigest(expected) &&
            (absl::StartsWith(expected, "sha256") ? 1 : 2) == algorithm;
  }
  if (!header.name().empty()) valid = valid && LooksLikeName(header.name());
  const std::string& statement = header.name_statement();
  valid = valid && statement.size() <= kMaxNameStatementSize &&
          (statement.empty() || !header.name().empty());
  // Whether bytes are detached PKCS#7 SignedData is lib's to say (and
  // fuzzed there); here, that the header check asks it.
  const std::string& signature = header.fsverity_signature();
  if (!signature.empty()) {
    valid = valid && CheckFsveritySignatureFormat(signature).ok();
  }
  FUZZ_CHECK(checked.ok() == valid, checked.status().message());
  if (!checked.ok()) return CheckRefusal(checked.status());
  FUZZ_CHECK(static_cast<int>(checked->params.hash_algorithm) == algorithm, "");
  FUZZ_CHECK(checked->params.salt == header.params().salt(), "");
  FUZZ_CHECK(
      static_cast<int>(checked->params.format) == header.params().format(), "");
  FUZZ_CHECK(checked->name == header.name(), "");
  FUZZ_CHECK(checked->name_statement == statement, "");
  FUZZ_CHECK(checked->fsverity_signature == signature, "");
  FUZZ_CHECK(checked->expected.has_value() == !expected.empty(), "");
  if (checked->expected) {
    FUZZ_CHECK(checked->expected->ToString() == absl::AsciiStrToLower(expected),
               expected);
  }
}

void CheckSetName(const v1::SetNameRequest& request) {
  const absl::StatusOr<server::CheckedSetName> checked =
      server::CheckSetNameRequest(request);
  const bool valid = LooksLikeName(request.name()) &&
                     LooksLikeDigest(request.digest()) &&
                     request.name_statement().size() <= kMaxNameStatementSize;
  FUZZ_CHECK(checked.ok() == valid, checked.status().message());
  if (!checked.ok()) return CheckRefusal(checked.status());
  FUZZ_CHECK(checked->name == request.name(), "");
  FUZZ_CHECK(
      checked->digest.ToString() == absl::AsciiStrToLower(request.digest()),
      request.digest());
  FUZZ_CHECK(checked->name_statement == request.name_statement(), "");
}

void CheckList(const v1::ListRequest& request) {
  const size_t size = server::ListPageSize(request);
  const uint32_t asked = request.page_size();
  FUZZ_CHECK(size >= 1 && size <= server::kMaxListPageSize, "");
  FUZZ_CHECK(size == (asked == 0 || asked > 1000 ? 1000 : asked), "");
}

template <typename Message>
bool Parse(absl::string_view bytes, Message* message) {
  return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// The first byte picks the message, the rest is its wire form.
void Run(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const absl::string_view bytes(reinterpret_cast<const char*>(data) + 1,
                                size - 1);
  switch (data[0] % 6) {
    case 0: {
      v1::ReadRequest request;
      if (Parse(bytes, &request)) CheckRead(request);
      break;
    }
    case 1: {
      v1::PutRequest request;
      if (Parse(bytes, &request)) CheckPutHeader(request.header());
      break;
    }
    case 2: {
      v1::ListRequest request;
      if (Parse(bytes, &request)) CheckList(request);
      break;
    }
    case 3: {
      v1::StatRequest request;
      if (Parse(bytes, &request)) CheckSelector(request);
      break;
    }
    case 4: {
      v1::DeleteRequest request;
      if (Parse(bytes, &request)) CheckSelector(request);
      break;
    }
    default: {
      v1::SetNameRequest request;
      if (Parse(bytes, &request)) CheckSetName(request);
    }
  }
}

}  // namespace
}  // namespace verity::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verity::fuzz::Run(data, size);
  return 0;
}

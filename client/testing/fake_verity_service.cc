// Implements the fake: MerkleBuilder for Put, HonestReadStream for Read, and
// plain maps for everything else.

#include "client/testing/fake_verity_service.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"

namespace verity::client {
namespace {

grpc::Status NotFound(const std::string& what) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("no blob ", what));
}

}  // namespace

void FakeVerityService::Add(const TestBlob& blob, const std::string& name) {
  absl::MutexLock lock(&mu_);
  blobs_[blob.digest_text] = blob;
  if (!name.empty()) names_[name] = blob.digest_text;
}

void FakeVerityService::SetStatement(const std::string& name,
                                     std::string statement) {
  absl::MutexLock lock(&mu_);
  if (statement.empty()) {
    statements_.erase(name);
  } else {
    statements_[name] = std::move(statement);
  }
}

void FakeVerityService::SetSignature(const std::string& digest_text,
                                     std::string signature) {
  absl::MutexLock lock(&mu_);
  if (signature.empty()) {
    signatures_.erase(digest_text);
  } else {
    signatures_[digest_text] = std::move(signature);
  }
}

std::string FakeVerityService::Statement(const std::string& name) const {
  absl::MutexLock lock(&mu_);
  return StatementLocked(name);
}

void FakeVerityService::SetTamper(Tamper tamper) {
  absl::MutexLock lock(&mu_);
  tamper_ = std::move(tamper);
}

void FakeVerityService::SetMaxPageSize(uint32_t max_page_size) {
  absl::MutexLock lock(&mu_);
  max_page_size_ = max_page_size;
}

std::string FakeVerityService::Content(const std::string& digest_text) const {
  absl::MutexLock lock(&mu_);
  auto it = blobs_.find(digest_text);
  return it == blobs_.end() ? "" : it->second.data;
}

void FakeVerityService::SetReadStatus(std::function<grpc::Status()> status) {
  absl::MutexLock lock(&mu_);
  read_status_ = std::move(status);
}

verity::v1::ReadRequest FakeVerityService::last_read() const {
  absl::MutexLock lock(&mu_);
  return reads_.empty() ? verity::v1::ReadRequest() : reads_.back();
}

std::vector<verity::v1::ReadRequest> FakeVerityService::reads() const {
  absl::MutexLock lock(&mu_);
  return reads_;
}

grpc::Status FakeVerityService::Put(
    grpc::ServerContext*, grpc::ServerReader<verity::v1::PutRequest>* reader,
    verity::v1::PutResponse* response) {
  verity::v1::PutRequest request;
  if (!reader->Read(&request) || !request.has_header()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no header");
  }
  const verity::v1::PutHeader header = request.header();
  absl::StatusOr<MerkleParams> params = TreeParamsFromProto(header.params());
  if (!params.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(params.status().message()));
  }
  std::string data;
  while (reader->Read(&request)) data += request.data();
  const TestBlob blob = MakeTestBlob(std::move(data), *params);
  if (!header.expected_digest().empty() &&
      header.expected_digest() != blob.digest_text) {
    return grpc::Status(grpc::StatusCode::DATA_LOSS, "digest mismatch");
  }
  absl::MutexLock lock(&mu_);
  response->set_already_present(blobs_.count(blob.digest_text) > 0);
  blobs_[blob.digest_text] = blob;
  if (!header.fsverity_signature().empty()) {
    signatures_[blob.digest_text] = header.fsverity_signature();
  }
  if (!header.name().empty()) {
    SetNameLocked(header.name(), blob.digest_text, header.name_statement());
  }
  *response->mutable_info() = InfoOf(blob.digest_text);
  return grpc::Status::OK;
}

grpc::Status FakeVerityService::Read(
    grpc::ServerContext*, const verity::v1::ReadRequest* request,
    grpc::ServerWriter<verity::v1::ReadResponse>* writer) {
  std::optional<TestBlob> blob;
  std::string statement;
  std::string signature;
  Tamper tamper;
  std::function<grpc::Status()> read_status;
  {
    absl::MutexLock lock(&mu_);
    reads_.push_back(*request);
    read_status = read_status_;
    const std::string digest = Resolve(request->digest(), request->name());
    if (digest.empty()) return NotFound(request->digest() + request->name());
    blob = blobs_.at(digest);
    if (!request->name().empty()) statement = StatementLocked(request->name());
    if (auto it = signatures_.find(digest); it != signatures_.end()) {
      signature = it->second;
    }
    tamper = tamper_;
  }
  const uint64_t size = blob->data.size();
  if (request->offset() > size ||
      request->length() > size - request->offset()) {
    return grpc::Status(grpc::StatusCode::OUT_OF_RANGE, "range past the end");
  }
  std::vector<verity::v1::ReadResponse> stream = StreamFor(*request, *blob);
  if (!stream.empty()) {
    stream.front().set_name_statement(statement);
    stream.front().set_fsverity_signature(signature);
  }
  if (tamper) tamper(&stream);
  for (const verity::v1::ReadResponse& msg : stream) {
    if (!writer->Write(msg)) break;
  }
  return read_status ? read_status() : grpc::Status::OK;
}

grpc::Status FakeVerityService::Stat(grpc::ServerContext*,
                                     const verity::v1::StatRequest* request,
                                     verity::v1::BlobInfo* response) {
  absl::MutexLock lock(&mu_);
  const std::string digest = Resolve(request->digest(), request->name());
  if (digest.empty()) return NotFound(request->digest() + request->name());
  *response = InfoOf(digest);
  if (!request->name().empty()) {
    response->set_name_statement(StatementLocked(request->name()));
  }
  return grpc::Status::OK;
}

grpc::Status FakeVerityService::SetName(
    grpc::ServerContext*, const verity::v1::SetNameRequest* request,
    verity::v1::BlobInfo* response) {
  absl::MutexLock lock(&mu_);
  if (blobs_.count(request->digest()) == 0) return NotFound(request->digest());
  SetNameLocked(request->name(), request->digest(), request->name_statement());
  *response = InfoOf(request->digest());
  response->set_name_statement(request->name_statement());
  return grpc::Status::OK;
}

grpc::Status FakeVerityService::List(grpc::ServerContext*,
                                     const verity::v1::ListRequest* request,
                                     verity::v1::ListResponse* response) {
  absl::MutexLock lock(&mu_);
  const uint32_t page_size = std::min(
      request->page_size() ? request->page_size() : 1000, max_page_size_);
  for (auto it = blobs_.upper_bound(request->page_token()); it != blobs_.end();
       ++it) {
    if (static_cast<uint32_t>(response->blobs_size()) == page_size) {
      response->set_next_page_token(response->blobs().rbegin()->digest());
      break;
    }
    *response->add_blobs() = InfoOf(it->first);
  }
  return grpc::Status::OK;
}

grpc::Status FakeVerityService::Delete(grpc::ServerContext*,
                                       const verity::v1::DeleteRequest* request,
                                       verity::v1::DeleteResponse*) {
  absl::MutexLock lock(&mu_);
  const std::string digest = Resolve(request->digest(), request->name());
  if (digest.empty()) return NotFound(request->digest() + request->name());
  if (!request->name().empty()) {
    names_.erase(request->name());
    statements_.erase(request->name());
    return grpc::Status::OK;
  }
  blobs_.erase(digest);
  signatures_.erase(digest);
  for (auto it = names_.begin(); it != names_.end();) {
    if (it->second != digest) {
      ++it;
      continue;
    }
    statements_.erase(it->first);
    it = names_.erase(it);
  }
  return grpc::Status::OK;
}

std::string FakeVerityService::Resolve(const std::string& digest,
                                       const std::string& name) const {
  if (!name.empty()) {
    auto it = names_.find(name);
    return it == names_.end() ? "" : it->second;
  }
  return blobs_.count(digest) ? digest : "";
}

std::string FakeVerityService::StatementLocked(const std::string& name) const {
  auto it = statements_.find(name);
  return it == statements_.end() ? "" : it->second;
}

void FakeVerityService::SetNameLocked(const std::string& name,
                                      const std::string& digest_text,
                                      const std::string& statement) {
  names_[name] = digest_text;
  if (statement.empty()) {
    statements_.erase(name);
  } else {
    statements_[name] = statement;
  }
}

verity::v1::BlobInfo FakeVerityService::InfoOf(
    const std::string& digest_text) const {
  const TestBlob& blob = blobs_.at(digest_text);
  verity::v1::BlobInfo info;
  info.set_digest(digest_text);
  SetDescriptor(blob.tree.descriptor, &info);
  info.set_tree_size(blob.tree.tree.size());
  if (auto it = signatures_.find(digest_text); it != signatures_.end()) {
    info.set_fsverity_signature(it->second);
  }
  for (const auto& [name, digest] : names_) {
    if (digest == digest_text) info.add_names(name);
  }
  return info;
}

std::vector<verity::v1::ReadResponse> FakeVerityService::StreamFor(
    const verity::v1::ReadRequest& request, const TestBlob& blob) const {
  StreamShape shape;
  shape.have_tree_blocks.insert(request.have_tree_blocks().begin(),
                                request.have_tree_blocks().end());
  if (request.have_whole_tree()) {
    const uint64_t blocks =
        blob.tree.tree.size() >> blob.tree.descriptor.log_block_size;
    for (uint64_t i = 0; i < blocks; ++i) shape.have_tree_blocks.insert(i);
  }
  std::optional<uint64_t> length;
  if (request.length() != 0) length = request.length();
  return HonestReadStream(blob, request.offset(), length, shape);
}

FakeVerityServer::FakeVerityServer() {
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service_);
  server_ = builder.BuildAndStart();
  address_ = absl::StrCat("127.0.0.1:", port);
}

FakeVerityServer::~FakeVerityServer() { server_->Shutdown(); }

}  // namespace verity::client

// verityd's start-up and transport: the import directory, health, TLS and mTLS,
// and the refusal of plaintext off loopback.

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "lib/base/file_system.h"
#include "tests/testing/health.grpc.pb.h"
#include "tests/testing/self_signed_cert.h"
#include "tests/testing/test_server.h"

namespace verity::testing {
namespace {

using ::absl::StatusCode;

void WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

grpc::health::v1::HealthCheckResponse::ServingStatus Health(
    std::shared_ptr<grpc::Channel> channel) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status =
      stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.status();
}

TEST(ServerSetupTest, ImportsNestedFoldersAndRefusesEscapingSymlinks) {
  const std::string dir = NewTempDir();
  ASSERT_EQ(mkdir((dir + "/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((dir + "/a/b").c_str(), 0755), 0);
  const std::string deep = RandomBytes(70000, 1), top = "top level\n";
  WriteFile(dir + "/a/b/deep.bin", deep);
  WriteFile(dir + "/top.txt", top);
  const std::string outside = NewTempDir() + "/secret";
  WriteFile(outside, "not for export");
  ASSERT_EQ(symlink("a/b/deep.bin", (dir + "/inside-link").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (dir + "/escape").c_str()), 0);
  ASSERT_EQ(
      symlink("../../../etc/hostname", (dir + "/a/b/relative-escape").c_str()),
      0);

  server::ServerOptions options;
  options.import_dir = dir;
  auto server = TestServer::Start(options);
  EXPECT_EQ(Health(server->channel()),
            grpc::health::v1::HealthCheckResponse::SERVING);
  ReadResult read = ReadBlob(server->stub(), "", 0, 0, "a/b/deep.bin");
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == deep);
  EXPECT_EQ(ReadBlob(server->stub(), "", 0, 0, "top.txt").data, top);
  EXPECT_TRUE(ReadBlob(server->stub(), "", 0, 0, "inside-link").data == deep);
  EXPECT_EQ(ReadBlob(server->stub(), "", 0, 0, "escape").status.code(),
            StatusCode::kNotFound);
  EXPECT_EQ(
      ReadBlob(server->stub(), "", 0, 0, "a/b/relative-escape").status.code(),
      StatusCode::kNotFound);
  EXPECT_EQ(ReadBlob(server->stub(), DigestOf("not for export")).status.code(),
            StatusCode::kNotFound);
}

// The real file system, except that the first Rename into the store's blobs
// (a Put publishing its blob) waits until the test releases it: an import
// held in progress.
class HeldRenameFileSystem final : public FileSystem {
 public:
  absl::Notification reached, release;

  absl::StatusOr<UniqueFd> OpenAt(int dir_fd, const std::string& path,
                                  int flags, mode_t mode) override {
    return fs_.OpenAt(dir_fd, path, flags, mode);
  }
  absl::StatusOr<size_t> Write(int fd, absl::Span<const uint8_t> data,
                               absl::string_view path) override {
    return fs_.Write(fd, data, path);
  }
  absl::StatusOr<size_t> Pwrite(int fd, uint64_t offset,
                                absl::Span<const uint8_t> data,
                                absl::string_view path) override {
    return fs_.Pwrite(fd, offset, data, path);
  }
  absl::StatusOr<size_t> Pread(int fd, uint64_t offset, absl::Span<uint8_t> out,
                               absl::string_view path) override {
    return fs_.Pread(fd, offset, out, path);
  }
  absl::Status Fsync(int fd, absl::string_view path) override {
    return fs_.Fsync(fd, path);
  }
  absl::Status SyncFs(int fd, absl::string_view path) override {
    return fs_.SyncFs(fd, path);
  }
  void StartWriteback(int fd, uint64_t offset, uint64_t length) override {
    fs_.StartWriteback(fd, offset, length);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (absl::StrContains(to, "/blobs/") && !reached.HasBeenNotified()) {
      reached.Notify();
      release.WaitForNotification();
    }
    return fs_.Rename(from, to);
  }
  absl::Status Unlink(const std::string& path) override {
    return fs_.Unlink(path);
  }
  absl::StatusOr<bool> MakeDir(const std::string& path) override {
    return fs_.MakeDir(path);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& path) override {
    return fs_.ListDir(path);
  }
  absl::Status RemoveRecursively(const std::string& path) override {
    return fs_.RemoveRecursively(path);
  }

 private:
  FileSystem& fs_ = PosixFileSystem();
};

TEST(ServerSetupTest, NotServingUntilTheImportEnds) {
  const std::string dir = NewTempDir();
  WriteFile(dir + "/only.bin", RandomBytes(70000, 2));
  HeldRenameFileSystem held;
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.store.root = NewTempDir();
  options.store.file_system = &held;
  options.import_dir = dir;
  absl::StatusOr<std::unique_ptr<server::Verityd>> server =
      server::Verityd::Start(options);
  ASSERT_TRUE(server.ok()) << server.status();
  held.reached.WaitForNotification();
  auto channel = grpc::CreateChannel((*server)->address(),
                                     grpc::InsecureChannelCredentials());
  EXPECT_EQ(Health(channel),
            grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  held.release.Notify();
  (*server)->WaitUntilServing();
  EXPECT_EQ(Health(channel), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(ReadBlob(*v1::Verity::NewStub(channel), "", 0, 0, "only.bin")
                  .status.ok());
}

TEST(ServerSetupTest, MissingImportDirFailsStartUp) {
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.store.root = NewTempDir();
  options.import_dir = "/nonexistent/import";
  EXPECT_EQ(server::Verityd::Start(options).status().code(),
            StatusCode::kNotFound);
}

TEST(ServerSetupTest, PlaintextIsRefusedOffLoopback) {
  server::ServerOptions options;
  options.store.root = NewTempDir();
  options.listen = "0.0.0.0:0";
  absl::StatusOr<std::unique_ptr<server::Verityd>> refused =
      server::Verityd::Start(options);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("--allow_insecure"),
            absl::string_view::npos);
  options.allow_insecure = true;
  EXPECT_TRUE(server::Verityd::Start(options).ok());
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = NewTempDir();
    for (const char* who : {"server", "client", "stranger"}) {
      absl::StatusOr<PemKeyPair> pem = MakeSelfSignedCert(who);
      ASSERT_TRUE(pem.ok()) << pem.status();
      WriteFile(Path(who, "crt"), pem->cert_pem);
      WriteFile(Path(who, "key"), pem->key_pem);
      pems_[who] = *pem;
    }
  }

  std::string Path(const std::string& who, const std::string& ext) const {
    return absl::StrCat(dir_, "/", who, ".", ext);
  }

  std::unique_ptr<server::Verityd> StartServer(bool require_client_cert) {
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.store.root = dir_ + "/store";
    options.tls_cert = Path("server", "crt");
    options.tls_key = Path("server", "key");
    if (require_client_cert) options.tls_client_ca = Path("client", "crt");
    auto server = server::Verityd::Start(options);
    EXPECT_TRUE(server.ok()) << server.status();
    (*server)->WaitUntilServing();
    return *std::move(server);
  }

  std::unique_ptr<v1::Verity::Stub> Stub(const server::Verityd& server,
                                         const char* client_identity) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = pems_["server"].cert_pem;
    if (client_identity != nullptr) {
      ssl.pem_cert_chain = pems_[client_identity].cert_pem;
      ssl.pem_private_key = pems_[client_identity].key_pem;
    }
    return v1::Verity::NewStub(
        grpc::CreateChannel(server.address(), grpc::SslCredentials(ssl)));
  }

  std::string dir_;
  std::map<std::string, PemKeyPair> pems_;
};

TEST_F(TlsTest, TlsRoundTrip) {
  auto server = StartServer(/*require_client_cert=*/false);
  auto stub = Stub(*server, nullptr);
  const std::string data = RandomBytes(100000, 2);
  ASSERT_TRUE(PutBlob(*stub, data).ok());
  ReadResult read = ReadBlob(*stub, DigestOf(data));
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == data);
  // Plaintext to a TLS port fails.
  auto plain = v1::Verity::NewStub(grpc::CreateChannel(
      server->address(), grpc::InsecureChannelCredentials()));
  EXPECT_EQ(ReadBlob(*plain, DigestOf(data)).status.code(),
            StatusCode::kUnavailable);
}

TEST_F(TlsTest, MutualTlsRequiresATrustedClientCert) {
  auto server = StartServer(/*require_client_cert=*/true);
  const std::string data = RandomBytes(5000, 2);
  auto client = Stub(*server, "client");
  ASSERT_TRUE(PutBlob(*client, data).ok());
  ReadResult read = ReadBlob(*client, DigestOf(data));
  ASSERT_TRUE(read.status.ok()) << read.status;
  EXPECT_TRUE(read.data == data);
  EXPECT_EQ(ReadBlob(*Stub(*server, nullptr), DigestOf(data)).status.code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(ReadBlob(*Stub(*server, "stranger"), DigestOf(data)).status.code(),
            StatusCode::kUnavailable);
}

}  // namespace
}  // namespace verity::testing

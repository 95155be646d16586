// The transparency log end to end: a verityd with --log_key appends every
// statement it accepts before the name is written, and a client with the
// log's key (sdk::ClientOptions::log_key) accepts a name only with a proof.
// The attacks of issue 45: a validly signed statement that is not in the
// log, a proof under a checkpoint the log's key did not sign, a log rolled
// back to a smaller checkpoint, and a forked log (two checkpoints of one
// size), each refused, the last two with their evidence kept; and a stolen
// key's statement served to one client, which the publisher's audit names.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/names/log_audit.h"
#include "client/sdk/grpc_status.h"
#include "client/sdk/log_trust.h"
#include "client/sdk/signed_journal.h"
#include "client/witness/http_server.h"
#include "client/witness/witness.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/tlog/signed_checkpoint.h"
#include "lib/tlog/witness_protocol.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"
#include "tests/testing/test_server.h"
#include "verity/client.h"
#include "verity/sink.h"

namespace verity::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kOrigin[] = "verityd.test/log";

class TransparencyLogTest : public ::testing::Test {
 protected:
  // A server logging statements with `log_key` on the store at `root`.
  std::unique_ptr<TestServer> StartLogged(const std::string& root,
                                          const Ed25519PrivateKey& log_key,
                                          bool name_keys = false,
                                          const std::string& witnesses = "") {
    const std::string file = NewTempDir() + "/log_key.pem";
    std::ofstream(file) << log_key.ToPem();
    server::ServerOptions options;
    options.store.root = root;
    options.log_key_file = file;
    options.log_origin = kOrigin;
    options.checkpoint_interval = absl::Milliseconds(20);
    if (!witnesses.empty()) {
      options.witnesses_file = NewTempDir() + "/witnesses";
      std::ofstream(options.witnesses_file) << witnesses;
    }
    if (name_keys) {
      options.name_keys_file = NewTempDir() + "/name_keys.pem";
      std::ofstream(options.name_keys_file) << publisher_.public_key().ToPem();
    }
    return TestServer::Start(options);
  }

  std::unique_ptr<TestServer> StartUnlogged(const std::string& root) {
    server::ServerOptions options;
    options.store.root = root;
    return TestServer::Start(options);
  }

  // A client of `server` trusting publisher_ for names and log_key_ for the
  // log, with its state in state_.
  std::unique_ptr<sdk::Client> Client(TestServer& server,
                                      const std::string& witness_keys = "",
                                      int witness_threshold = 1) {
    sdk::ClientOptions options;
    options.witness_keys = witness_keys;
    options.witness_threshold = witness_threshold;
    options.target = server.verityd().address();
    options.trusted_keys = publisher_.public_key().ToPem();
    options.log_key = LogVerifierKey(log_key_);
    options.state_dir = state_;
    options.retry.max_attempts = 1;
    return *sdk::Client::Create(options);
  }

  static std::string LogVerifierKey(const Ed25519PrivateKey& key) {
    return tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                               key.public_key())
        ->ToString();
  }

  std::string Sign(absl::string_view name, absl::string_view digest_text,
                   uint64_t version) {
    const absl::Time now =
        absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
    NameClaim claim{std::string(name), ParseDigest(digest_text).value(),
                    version, now - absl::Minutes(1), now + absl::Hours(1)};
    const Ed25519PrivateKey* keys[] = {&publisher_};
    return SignNameStatement(claim, keys).value();
  }

  absl::StatusOr<v1::BlobInfo> SetName(TestServer& server,
                                       absl::string_view name,
                                       absl::string_view data,
                                       uint64_t version) {
    EXPECT_TRUE(PutBlob(server.stub(), data).ok());
    return SetNameWith(server, name, DigestOf(data),
                       Sign(name, DigestOf(data), version));
  }

  absl::StatusOr<v1::BlobInfo> SetNameWith(TestServer& server,
                                           absl::string_view name,
                                           absl::string_view digest,
                                           absl::string_view statement) {
    return verity::testing::SetName(server.stub(), name, digest, statement);
  }

  std::vector<std::string> Evidence() const {
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(state_)) {
      const std::string name = entry.path().filename();
      if (absl::StrContains(name, ".evidence-")) found.push_back(name);
    }
    return found;
  }

  static void ExpectRefused(const absl::Status& status, absl::string_view why) {
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    EXPECT_THAT(std::string(status.message()), HasSubstr(why));
  }

  const Ed25519PrivateKey publisher_ = Ed25519PrivateKey::Generate();
  const Ed25519PrivateKey log_key_ = Ed25519PrivateKey::Generate();
  const std::string root_ = NewTempDir() + "/store";
  const std::string state_ = NewTempDir() + "/state";
  const std::string a_ = RandomBytes(10000, 1);
  const std::string b_ = RandomBytes(20000, 2);
  const std::string c_ = RandomBytes(30000, 3);
};

TEST_F(TransparencyLogTest, ANameIsAnsweredWithItsProofAndAccepted) {
  auto server = StartLogged(root_, log_key_);
  absl::StatusOr<v1::BlobInfo> set = SetName(*server, "n", a_, 1);
  ASSERT_TRUE(set.ok()) << set.status();
  // The SetName answered once its statement was logged: with its proof.
  ASSERT_TRUE(set->has_log_proof());
  EXPECT_EQ(set->log_proof().index(), 0u);
  // A Put with a name is logged the same way.
  v1::PutHeader header;
  header.set_name("m");
  header.set_name_statement(Sign("m", DigestOf(b_), 1));
  absl::StatusOr<v1::PutResponse> put =
      PutWithHeader(server->stub(), header, b_);
  ASSERT_TRUE(put.ok()) << put.status();
  ASSERT_TRUE(put->info().has_log_proof());
  EXPECT_EQ(put->info().log_proof().index(), 1u);

  std::unique_ptr<sdk::Client> client = Client(*server);
  absl::StatusOr<sdk::BlobInfo> n = client->StatName("n");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->digest.ToString(), DigestOf(a_));
  sdk::MemorySink sink;
  ASSERT_TRUE(client->FetchName("m", sink, {}).ok());
  EXPECT_EQ(sink.data(), b_);

  // The log's objects are readable as a static mirror serves them.
  grpc::ClientContext context;
  v1::ReadLogRequest request;
  request.set_path("checkpoint");
  v1::ReadLogResponse response;
  ASSERT_TRUE(server->stub().ReadLog(&context, request, &response).ok());
  EXPECT_TRUE(
      tlog::OpenCheckpoint(response.data(),
                           *tlog::NoteKey::Parse(LogVerifierKey(log_key_)))
          .ok());
}

// A witness (C2SP tlog-witness over HTTP) in this process.
struct TestWitness {
  explicit TestWitness(const Ed25519PrivateKey& log_key, std::string name) {
    witness = *client::Witness::Create(
        *tlog::NoteKey::Make(kOrigin, tlog::NoteKeyType::kEd25519,
                             log_key.public_key()),
        name,
        std::make_shared<const Ed25519PrivateKey>(
            Ed25519PrivateKey::Generate()),
        NewTempDir() + "/witness");
    http = *client::HttpServer::Start(
        "127.0.0.1", 0, tlog::kMaxAddCheckpointSize,
        [this](const client::HttpRequest& request) {
          const client::WitnessAnswer answer =
              witness->AddCheckpoint(request.body);
          return client::HttpResponse{answer.http_status, answer.content_type,
                                      answer.body};
        });
  }
  // Its line in a --witnesses file.
  std::string Line() const {
    return absl::StrCat(witness->verifier_key().ToString(),
                        " http://127.0.0.1:", http->port(), "\n");
  }

  std::unique_ptr<client::Witness> witness;
  std::unique_ptr<client::HttpServer> http;
};

TEST_F(TransparencyLogTest, WitnessesCosignAndClientsRequireThem) {
  TestWitness asked(log_key_, "asked.test");
  TestWitness absent(log_key_, "absent.test");
  std::unique_ptr<TestServer> server =
      StartLogged(root_, log_key_, /*name_keys=*/false, asked.Line());
  absl::StatusOr<v1::BlobInfo> set = SetName(*server, "n", a_, 1);
  ASSERT_TRUE(set.ok()) << set.status();
  // The answer's checkpoint carries the cosignature, which the witness
  // gave after recording that checkpoint.
  EXPECT_THAT(set->log_proof().checkpoint(),
              HasSubstr("\xe2\x80\x94 asked.test "));
  EXPECT_EQ((*asked.witness->Kept())->checkpoint.size, 1u);

  const std::string asked_key = asked.witness->verifier_key().ToString();
  const std::string both =
      absl::StrCat(asked_key, "\n", absent.witness->verifier_key().ToString());
  EXPECT_TRUE(Client(*server, asked_key)->StatName("n").ok());
  EXPECT_TRUE(Client(*server, both, 1)->StatName("n").ok());
  ExpectRefused(Client(*server, both, 2)->StatName("n").status(),
                "cosigned by 1 of the 2 witnesses");
  // A second statement: a consistency proof from the witness's size.
  ASSERT_TRUE(SetName(*server, "m", b_, 1).ok());
  EXPECT_EQ((*asked.witness->Kept())->checkpoint.size, 2u);
  EXPECT_TRUE(Client(*server, asked_key)->StatName("m").ok());
}

TEST_F(TransparencyLogTest, AStatementTheStoreWouldRefuseIsNotLogged) {
  auto server = StartLogged(root_, log_key_, /*name_keys=*/true);
  ASSERT_TRUE(SetName(*server, "n", a_, 2).ok());
  // Not newer than the name's current statement: refused before the log.
  EXPECT_EQ(SetName(*server, "n", b_, 1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  grpc::ClientContext context;
  v1::LogConsistencyRequest request;
  v1::LogConsistencyResponse response;
  ASSERT_TRUE(server->stub().LogConsistency(&context, request, &response).ok());
  EXPECT_EQ(response.new_size(), 1u);
}

TEST_F(TransparencyLogTest, AStatementThatIsNotInTheLogIsRefused) {
  // Validly signed by the publisher, served by a server that logs nothing.
  auto server = StartUnlogged(root_);
  ASSERT_TRUE(SetName(*server, "n", a_, 1).ok());
  ExpectRefused(Client(*server)->StatName("n").status(),
                "no proof that the statement is in the log");
}

TEST_F(TransparencyLogTest, AProofUnderAnotherKeysCheckpointIsRefused) {
  const Ed25519PrivateKey other = Ed25519PrivateKey::Generate();
  auto server = StartLogged(root_, other);
  ASSERT_TRUE(SetName(*server, "n", a_, 1).ok());
  ExpectRefused(Client(*server)->StatName("n").status(),
                "not signed by the log's key");
}

TEST_F(TransparencyLogTest, ARolledBackOrForkedLogIsRefusedWithEvidence) {
  auto server = StartLogged(root_, log_key_);
  ASSERT_TRUE(SetName(*server, "n", a_, 1).ok());
  // What the store was with one entry, for the attacker to serve later.
  server.reset();
  const std::string old_root = NewTempDir() + "/old";
  std::filesystem::copy(root_, old_root,
                        std::filesystem::copy_options::recursive);
  std::filesystem::remove(old_root + "/LOCK");
  server = StartLogged(root_, log_key_);
  ASSERT_TRUE(SetName(*server, "n", b_, 2).ok());
  ASSERT_TRUE(Client(*server)->StatName("n").ok());  // seen: 2 entries
  server.reset();

  // Rolled back: the old store, its checkpoint of one entry.
  auto old = StartLogged(old_root, log_key_);
  ExpectRefused(Client(*old)->StatName("n").status(), "older than the 2");
  EXPECT_EQ(Evidence().size(), 1u);

  // Forked: the log's key signs a second history of two entries.
  ASSERT_TRUE(SetName(*old, "n", c_, 2).ok());
  const absl::Status forked = Client(*old)->StatName("n").status();
  ExpectRefused(forked, "the log forked");
  ASSERT_EQ(Evidence().size(), 2u);
  // The client still accepts the log it saw.
  server = StartLogged(root_, log_key_);
  EXPECT_TRUE(Client(*server)->StatName("n").ok());
}

TEST_F(TransparencyLogTest, TheAuditNamesAStolenKeysStatement) {
  auto server = StartLogged(root_, log_key_);
  // The publisher signs v1 and journals it, as `verity put --sign-key` does.
  const std::string publisher_state = NewTempDir() + "/publisher";
  const client::SignedJournal journal(publisher_state,
                                      KeyIdToHex(publisher_.public_key().id()));
  const std::string honest = Sign("n", DigestOf(a_), 1);
  ASSERT_TRUE(journal.Append(*ParseNameStatement(honest)).ok());
  ASSERT_TRUE(PutBlob(server->stub(), a_).ok());
  ASSERT_TRUE(SetNameWith(*server, "n", DigestOf(a_), honest).ok());
  // A thief with the key signs v2 for another blob, served to one victim,
  // who accepts it: signed, and in the log.
  ASSERT_TRUE(SetName(*server, "n", c_, 2).ok());
  ASSERT_TRUE(Client(*server)->StatName("n").ok());

  const client::LogTrust position(
      *tlog::NoteKey::Parse(LogVerifierKey(log_key_)),
      publisher_state + "/audit");
  const TrustedKeys publisher = *TrustedKeys::Create({publisher_.public_key()});
  std::unique_ptr<sdk::Client> auditor = Client(*server);
  absl::StatusOr<client::AuditReport> report =
      client::AuditLog(*auditor, position, publisher, *journal.Load());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->from, 0u);
  EXPECT_EQ(report->to, 2u);
  ASSERT_EQ(report->statements.size(), 2u);
  EXPECT_TRUE(report->statements[0].known);
  EXPECT_FALSE(report->statements[1].known);
  EXPECT_EQ(report->statements[1].index, 1u);
  EXPECT_EQ(report->statements[1].statement.claim.version, 2u);
  EXPECT_EQ(report->statements[1].statement.claim.digest.ToString(),
            DigestOf(c_));
  EXPECT_EQ(report->unknown, 1u);

  // The next audit starts where this one stopped.
  ASSERT_TRUE(SetName(*server, "other", b_, 1).ok());
  report = client::AuditLog(*auditor, position, publisher, *journal.Load());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->from, 2u);
  EXPECT_EQ(report->to, 3u);
  EXPECT_EQ(report->unknown, 1u);
}

}  // namespace
}  // namespace verity::testing

// The signed-name commands against the in-process fake server: keygen's
// files, sign's output and defaults, put --sign-key, and get and stat with
// trusted keys: accepted, or refused with exit 3 and no output file.

#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "client/cli/exit_codes.h"
#include "client/cli/get_command.h"
#include "client/cli/keygen_command.h"
#include "client/cli/put_command.h"
#include "client/cli/sign_command.h"
#include "client/cli/stat_command.h"
#include "client/testing/fake_verity_service.h"
#include "client/testing/fsverity_signer.h"
#include "client/testing/name_statements.h"
#include "client/testing/read_stream_fixture.h"
#include "client/testing/test_argv.h"
#include "gtest/gtest.h"
#include "lib/base/file_util.h"
#include "lib/trust/ed25519_key.h"
#include "lib/trust/name_statement.h"

namespace verity::cli {
namespace {

using ::verity::client::FakeVerityServer;
using ::verity::client::SignTestStatement;
using ::verity::client::TestClaim;

using RunFn = int (*)(int, char**, std::FILE*, std::FILE*);

constexpr char kName[] = "releases/app";

class SignedNamesCommandTest : public ::testing::Test {
 protected:
  SignedNamesCommandTest()
      : blob_(MakeRandomTestBlob(70000,
                                 TestParams(HashAlgorithm::kSha256, 4096))) {
    server_.service().Add(blob_, kName);
    dir_ = ::testing::TempDir() + "/signed_names_command_test_XXXXXX";
    EXPECT_NE(mkdtemp(&dir_[0]), nullptr);
    unsetenv("VERITY_TRUSTED_KEYS");
    unsetenv("VERITY_FSVERITY_CERT");
    // The default state directory, where a publisher records what it signed.
    setenv("XDG_STATE_HOME", (dir_ + "/xdg-state").c_str(), 1);
  }

  // Runs a command with fresh output captures; --server is added for all
  // but keygen.
  int Run(RunFn run, std::vector<std::string> args) {
    out_ = std::make_unique<CapturedFile>();
    err_ = std::make_unique<CapturedFile>();
    if (args[0] != "keygen") {
      args.insert(args.begin() + 1, "--server=" + server_.address());
    }
    TestArgv argv(std::move(args));
    return run(argv.argc(), argv.argv(), out_->get(), err_->get());
  }
  std::string Out() { return out_->contents(); }
  std::string Err() { return err_->contents(); }

  // A key made by `verity keygen`, at dir_/NAME (and NAME.pub).
  std::string Keygen(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    EXPECT_EQ(Run(RunKeygenCommand, {"keygen", "--out=" + path}), kExitOk)
        << Err();
    return path;
  }
  Ed25519PrivateKey LoadKey(const std::string& path) {
    return *Ed25519PrivateKey::ParsePem(*ReadSmallFile(path, 1 << 16));
  }

  NameStatement StoredStatement(const std::string& name) {
    absl::StatusOr<NameStatement> statement =
        ParseNameStatement(server_.service().Statement(name));
    EXPECT_TRUE(statement.ok()) << statement.status();
    return statement.ok() ? *statement : NameStatement();
  }

  // `verity get NAME -o FILE` with trusted keys; returns the exit code and
  // checks that a failure leaves no file at all in the output directory.
  int GetWithKeys(const std::string& keys_file) {
    const std::string out_dir = dir_ + "/out";
    EXPECT_TRUE(MakeDirs(out_dir).ok());
    const int code = Run(RunGetCommand, {"get", kName, "-o", out_dir + "/file",
                                         "--trusted-keys=" + keys_file,
                                         "--state-dir=" + dir_ + "/state"});
    if (code != kExitOk) {
      EXPECT_TRUE(ListDir(out_dir)->empty());
    }
    return code;
  }

  TestBlob blob_;
  FakeVerityServer server_;
  std::string dir_;
  std::unique_ptr<CapturedFile> out_;
  std::unique_ptr<CapturedFile> err_;
};

TEST_F(SignedNamesCommandTest, KeygenWritesAPrivateKeyAndRefusesToReplaceIt) {
  const std::string path = Keygen("key");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const Ed25519PrivateKey key = LoadKey(path);
  const std::string id = KeyIdToHex(key.public_key().id());
  EXPECT_EQ(Out(), "key id: " + id + "\n" + key.public_key().ToPem());
  const absl::StatusOr<std::vector<Ed25519PublicKey>> pub =
      Ed25519PublicKey::ParsePem(*ReadSmallFile(path + ".pub", 1 << 16));
  ASSERT_TRUE(pub.ok());
  EXPECT_EQ(KeyIdToHex((*pub)[0].id()), id);

  const std::string before = *ReadSmallFile(path, 1 << 16);
  EXPECT_EQ(Run(RunKeygenCommand, {"keygen", "--out=" + path}),
            kExitOtherError);
  EXPECT_TRUE(absl::StrContains(Err(), "not replacing")) << Err();
  EXPECT_EQ(*ReadSmallFile(path, 1 << 16), before);
  EXPECT_EQ(Run(RunKeygenCommand, {"keygen"}), kExitUsage);
  EXPECT_EQ(Run(RunKeygenCommand, {"keygen", "--out=x", "extra"}), kExitUsage);
}

TEST_F(SignedNamesCommandTest, SignPrintsWritesOrStores) {
  const std::string key = Keygen("key");
  ASSERT_EQ(Run(RunSignCommand, {"sign", kName, blob_.digest_text,
                                 "--key=" + key, "--version=5"}),
            kExitOk)
      << Err();
  std::string decoded;
  ASSERT_TRUE(absl::Base64Unescape(absl::StripSuffix(Out(), "\n"), &decoded));
  NameStatement printed = *ParseNameStatement(decoded);
  EXPECT_EQ(printed.claim.name, kName);
  EXPECT_EQ(printed.claim.digest, blob_.digest);
  EXPECT_EQ(printed.claim.version, 5u);
  EXPECT_EQ(printed.claim.expires - printed.claim.issued, absl::Hours(720));
  EXPECT_LE(absl::AbsDuration(printed.claim.issued - absl::Now()),
            absl::Seconds(10));

  // --out: the binary statement; --expires-in in either form.
  const std::string out = dir_ + "/statement";
  ASSERT_EQ(
      Run(RunSignCommand, {"sign", kName, blob_.digest_text, "--key=" + key,
                           "--version=6", "--expires-in=36h", "--out=" + out}),
      kExitOk)
      << Err();
  printed = *ParseNameStatement(*ReadSmallFile(out, 1 << 16));
  EXPECT_EQ(printed.claim.expires - printed.claim.issued, absl::Hours(36));

  // --store, the version by default: the time in milliseconds, rising.
  uint64_t last = 6;
  for (int i = 0; i < 2; ++i) {
    const uint64_t now = absl::ToUnixMillis(absl::Now());
    ASSERT_EQ(Run(RunSignCommand, {"sign", kName, blob_.digest_text,
                                   "--key=" + key, "--store"}),
              kExitOk)
        << Err();
    const uint64_t version = StoredStatement(kName).claim.version;
    EXPECT_GE(version, now);
    EXPECT_GT(version, last);
    last = version;
  }
  EXPECT_EQ(Out(), blob_.digest_text + " " + kName + "\n");
  // A version below what this key signed is refused, stored or not.
  EXPECT_EQ(
      Run(RunSignCommand, {"sign", kName, blob_.digest_text, "--key=" + key,
                           "--version=" + std::to_string(last)}),
      kExitOtherError);
  EXPECT_TRUE(absl::StrContains(Err(), "not above version")) << Err();
}

TEST_F(SignedNamesCommandTest, SignRefusesBadArguments) {
  const std::string key = Keygen("key");
  for (std::vector<std::string> args :
       {std::vector<std::string>{"sign", kName, blob_.digest_text},
        {"sign", kName, "sha256:12", "--key=" + key},
        {"sign", kName, "--key=" + key},
        {"sign", kName, blob_.digest_text, "--key=" + key, "--version=0"},
        {"sign", kName, blob_.digest_text, "--key=" + key, "--expires-in=0h"},
        {"sign", kName, blob_.digest_text, "--key=" + key, "--store",
         "--out=x"}}) {
    EXPECT_EQ(Run(RunSignCommand, args), kExitUsage) << args.back();
  }
  // A key file that is not a private key: the public one.
  EXPECT_EQ(Run(RunSignCommand, {"sign", kName, blob_.digest_text,
                                 "--key=" + key + ".pub", "--version=1"}),
            kExitUsage);
}

TEST_F(SignedNamesCommandTest, PutSignsTheFilesDigest) {
  const std::string key = Keygen("key");
  const std::string file = dir_ + "/file";
  ASSERT_TRUE(WriteNewFileDurably(file, blob_.data).ok());
  uint64_t last = 0;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Run(RunPutCommand,
                  {"put", file, "--name=other/app", "--sign-key=" + key}),
              kExitOk)
        << Err();
    const NameStatement stored = StoredStatement("other/app");
    EXPECT_EQ(stored.claim.digest, blob_.digest);
    EXPECT_EQ(stored.claim.name, "other/app");
    EXPECT_GT(stored.claim.version, last);
    last = stored.claim.version;
  }
  const std::string next = std::to_string(last + 9);
  ASSERT_EQ(
      Run(RunPutCommand, {"put", file, "--name=other/app", "--sign-key=" + key,
                          "--version=" + next, "--expires-in=2d"}),
      kExitOk);
  EXPECT_EQ(StoredStatement("other/app").claim.version, last + 9);
  EXPECT_EQ(Run(RunPutCommand, {"put", file, "--name=other/app",
                                "--sign-key=" + key, "--version=9"}),
            kExitOtherError);
  EXPECT_EQ(Run(RunPutCommand, {"put", file, "--sign-key=" + key}), kExitUsage);
  EXPECT_EQ(Run(RunPutCommand, {"put", file, "--name=n", "--version=3"}),
            kExitUsage);
}

// A store writer who saves the name's statement, deletes the name, and
// restores the statement once the publisher signed its next release.
TEST_F(SignedNamesCommandTest, ADeletedNameDoesNotRollThePublisherBack) {
  const std::string key = Keygen("key");
  const std::string keys = dir_ + "/key.pub";
  const auto sign = [&](const std::string& state_dir) {
    return Run(RunSignCommand,
               {"sign", kName, blob_.digest_text, "--key=" + key, "--store",
                "--state-dir=" + state_dir});
  };
  ASSERT_EQ(sign(dir_ + "/publisher"), kExitOk) << Err();
  const std::string saved = server_.service().Statement(kName);
  const uint64_t saved_version = StoredStatement(kName).claim.version;
  ASSERT_EQ(GetWithKeys(keys), kExitOk) << Err();
  ASSERT_EQ(unlink((dir_ + "/out/file").c_str()), 0);
  // On the same machine (its record) and on a new one (the clock), the next
  // statement is above the one the writer saved.
  for (const std::string& state_dir :
       {dir_ + "/publisher", dir_ + "/new-machine"}) {
    server_.service().SetStatement(kName, "");
    absl::SleepFor(absl::Milliseconds(2));
    ASSERT_EQ(sign(state_dir), kExitOk) << Err();
    EXPECT_GT(StoredStatement(kName).claim.version, saved_version);
  }
  ASSERT_EQ(GetWithKeys(keys), kExitOk) << Err();
  ASSERT_EQ(unlink((dir_ + "/out/file").c_str()), 0);
  server_.service().SetStatement(kName, saved);
  EXPECT_EQ(GetWithKeys(keys), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "rollback")) << Err();
}

// A planted statement with a version near the top: the publisher's next
// version does not follow it, unless its own key signed it.
TEST_F(SignedNamesCommandTest, APlantedVersionDoesNotLockThePublisherOut) {
  const std::string key_file = Keygen("key");
  const Ed25519PrivateKey key = LoadKey(key_file);
  const Ed25519PrivateKey thief = LoadKey(Keygen("thief"));
  std::string forged =
      SignTestStatement(TestClaim{kName, blob_.digest, UINT64_MAX - 1}, {&key});
  forged.back() ^= 1;  // parses; its signature fails
  const std::string state = "--state-dir=" + dir_ + "/publisher";
  for (const std::string& planted :
       {forged, SignTestStatement(TestClaim{kName, blob_.digest, UINT64_MAX},
                                  {&thief})}) {
    server_.service().SetStatement(kName, planted);
    ASSERT_EQ(Run(RunSignCommand, {"sign", kName, blob_.digest_text,
                                   "--key=" + key_file, "--store", state}),
              kExitOk)
        << Err();
    EXPECT_LT(StoredStatement(kName).claim.version, uint64_t{1} << 62);
  }
  // One its own key signed is a version it can vouch for.
  server_.service().SetStatement(
      kName, SignTestStatement(TestClaim{kName, blob_.digest, UINT64_MAX - 1},
                               {&key}));
  ASSERT_EQ(Run(RunSignCommand, {"sign", kName, blob_.digest_text,
                                 "--key=" + key_file, "--store", state}),
            kExitOk)
      << Err();
  EXPECT_EQ(StoredStatement(kName).claim.version, UINT64_MAX);
}

TEST_F(SignedNamesCommandTest, GetWithTrustedKeys) {
  const Ed25519PrivateKey key = LoadKey(Keygen("key"));
  const Ed25519PrivateKey other = LoadKey(Keygen("other"));
  const std::string keys = dir_ + "/key.pub";
  // Unsigned: refused.
  EXPECT_EQ(GetWithKeys(keys), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "no signed statement")) << Err();
  // Signed by a key not trusted.
  server_.service().SetStatement(
      kName, SignTestStatement(TestClaim{kName, blob_.digest, 3}, {&other}));
  EXPECT_EQ(GetWithKeys(keys), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "not trusted")) << Err();
  // Expired.
  TestClaim expired{kName, blob_.digest, 3};
  expired.issued -= absl::Hours(48);
  server_.service().SetStatement(kName, SignTestStatement(expired, {&key}));
  EXPECT_EQ(GetWithKeys(keys), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "expired")) << Err();
  // Good: the file appears, verified.
  server_.service().SetStatement(
      kName, SignTestStatement(TestClaim{kName, blob_.digest, 3}, {&key}));
  ASSERT_EQ(GetWithKeys(keys), kExitOk) << Err();
  EXPECT_EQ(*ReadSmallFile(dir_ + "/out/file", 1 << 20), blob_.data);
  ASSERT_EQ(unlink((dir_ + "/out/file").c_str()), 0);
  // An older one, after that: a rollback.
  server_.service().SetStatement(
      kName, SignTestStatement(TestClaim{kName, blob_.digest, 2}, {&key}));
  EXPECT_EQ(GetWithKeys(keys), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "older than version 3")) << Err();
  // By digest, no statement is needed; the keys come from the environment.
  setenv("VERITY_TRUSTED_KEYS", keys.c_str(), 1);
  EXPECT_EQ(Run(RunGetCommand,
                {"get", blob_.digest_text, "--state-dir=" + dir_ + "/state"}),
            kExitOk);
  EXPECT_EQ(Out(), blob_.data);
  EXPECT_EQ(
      Run(RunGetCommand, {"get", kName, "--state-dir=" + dir_ + "/state"}),
      kExitVerificationFailed);
  unsetenv("VERITY_TRUSTED_KEYS");
  // A keys file that holds no key never turns the checks off.
  const std::string empty = dir_ + "/empty.pub";
  ASSERT_TRUE(WriteNewFileDurably(empty, "").ok());
  EXPECT_EQ(GetWithKeys(empty), kExitUsage);
  EXPECT_EQ(GetWithKeys(dir_ + "/missing.pub"), kExitUsage);
  // Nor does a flag or variable set to nothing, as `--trusted-keys=$UNSET`
  // writes it.
  EXPECT_EQ(GetWithKeys(""), kExitUsage);
  EXPECT_TRUE(absl::StrContains(Err(), "set but empty")) << Err();
  setenv("VERITY_TRUSTED_KEYS", "", 1);
  EXPECT_EQ(Run(RunGetCommand, {"get", kName}), kExitUsage);
  EXPECT_TRUE(absl::StrContains(Err(), "VERITY_TRUSTED_KEYS")) << Err();
  EXPECT_EQ(Run(RunStatCommand, {"stat", kName}), kExitUsage);
  unsetenv("VERITY_TRUSTED_KEYS");
}

TEST_F(SignedNamesCommandTest, StatShowsTheStatement) {
  const Ed25519PrivateKey key = LoadKey(Keygen("key"));
  TestClaim claim{kName, blob_.digest, 4};
  claim.issued = absl::FromUnixSeconds(1893456000);  // 2030-01-01
  claim.valid_for = absl::Hours(24 * 365 * 20);
  server_.service().SetStatement(kName, SignTestStatement(claim, {&key}));
  const std::string id = KeyIdToHex(key.public_key().id());
  const std::string lines =
      "statement-version: 4\n"
      "statement-issued: 2030-01-01T00:00:00Z\n"
      "statement-expires: 2049-12-27T00:00:00Z\n"
      "statement-signer: " +
      id + "\n";
  ASSERT_EQ(Run(RunStatCommand, {"stat", kName}), kExitOk) << Err();
  EXPECT_TRUE(absl::EndsWith(Out(), lines + "statement-verified: no (no "
                                            "trusted keys)\n"))
      << Out();
  // Issued in the future (beyond the clock skew): refused with keys.
  const std::string keys = "--trusted-keys=" + dir_ + "/key.pub";
  const std::string state = "--state-dir=" + dir_ + "/state";
  EXPECT_EQ(Run(RunStatCommand, {"stat", kName, keys, state}),
            kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "future")) << Err();
  claim.issued = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
  server_.service().SetStatement(kName, SignTestStatement(claim, {&key}));
  ASSERT_EQ(Run(RunStatCommand, {"stat", kName, keys, state}), kExitOk)
      << Err();
  EXPECT_TRUE(absl::StrContains(Out(), "statement-verified: yes\n")) << Out();
  EXPECT_TRUE(absl::StrContains(Out(), "statement-signer: " + id)) << Out();
}

TEST_F(SignedNamesCommandTest, FsverityCertificatesArePinned) {
  const MerkleParams params = TestParams(HashAlgorithm::kSha256, 4096);
  const absl::StatusOr<client::FsveritySigner> pinned =
      client::MakeFsveritySigner("cli-pinned", 21);
  const absl::StatusOr<client::FsveritySigner> stranger =
      client::MakeFsveritySigner("cli-stranger", 22);
  ASSERT_TRUE(pinned.ok() && stranger.ok()) << pinned.status();
  const absl::StatusOr<std::string> signature =
      client::FsveritySign(*pinned, blob_, params);
  ASSERT_TRUE(signature.ok()) << signature.status();
  const std::string out_dir = dir_ + "/out";
  ASSERT_TRUE(MakeDirs(out_dir).ok());
  const auto get = [&](const std::string& cert) {
    const int code =
        Run(RunGetCommand, {"get", blob_.digest_text, "-o", out_dir + "/file",
                            "--fsverity-cert=" + cert});
    if (code != kExitOk) {
      EXPECT_TRUE(ListDir(out_dir)->empty());
    }
    return code;
  };
  // Unsigned, then signed through put --fsverity-sig.
  EXPECT_EQ(get(pinned->cert_path), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "no fs-verity signature")) << Err();
  const std::string file = dir_ + "/file";
  const std::string sig = dir_ + "/file.sig";
  ASSERT_TRUE(WriteNewFileDurably(file, blob_.data).ok());
  ASSERT_TRUE(WriteNewFileDurably(sig, *signature).ok());
  ASSERT_EQ(Run(RunPutCommand, {"put", file, "--fsverity-sig=" + sig}), kExitOk)
      << Err();
  ASSERT_EQ(get(pinned->cert_path), kExitOk) << Err();
  EXPECT_EQ(*ReadSmallFile(out_dir + "/file", 1 << 20), blob_.data);
  ASSERT_EQ(unlink((out_dir + "/file").c_str()), 0);
  EXPECT_EQ(get(stranger->cert_path), kExitVerificationFailed);
  EXPECT_TRUE(absl::StrContains(Err(), "pinned")) << Err();
  EXPECT_EQ(Run(RunStatCommand, {"stat", blob_.digest_text}), kExitOk);
  EXPECT_TRUE(absl::StrContains(
      Out(), absl::StrCat("fsverity-signature-bytes: ", signature->size())));
  EXPECT_EQ(get(dir_ + "/missing.crt"), kExitUsage);
  EXPECT_EQ(get(""), kExitUsage);
  setenv("VERITY_FSVERITY_CERT", "", 1);
  EXPECT_EQ(Run(RunGetCommand, {"get", blob_.digest_text}), kExitUsage);
  unsetenv("VERITY_FSVERITY_CERT");
  // By name, a pinned certificate proves the content, not the name: said.
  EXPECT_EQ(Run(RunGetCommand,
                {"get", kName, "--fsverity-cert=" + pinned->cert_path}),
            kExitOk);
  EXPECT_EQ(Out(), blob_.data);
  EXPECT_TRUE(absl::StrContains(Err(), "releases/app is not authenticated"))
      << Err();
  EXPECT_EQ(Run(RunGetCommand, {"get", blob_.digest_text,
                                "--fsverity-cert=" + pinned->cert_path}),
            kExitOk);
  EXPECT_EQ(Err(), "");
}

// --parallel and --length=0 start no stream: the checks run all the same.
TEST_F(SignedNamesCommandTest, ChecksRunWhenNoByteIsRead) {
  const absl::StatusOr<client::FsveritySigner> pinned =
      client::MakeFsveritySigner("cli-empty", 23);
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  const TestBlob empty =
      MakeRandomTestBlob(0, TestParams(HashAlgorithm::kSha256, 4096), 5);
  server_.service().Add(empty, "empty");
  const std::string out_dir = dir_ + "/out";
  ASSERT_TRUE(MakeDirs(out_dir).ok());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"get", "empty", "--parallel=4"},
        {"get", "empty"},
        {"get", kName, "--length=0"},
        {"get", kName, "--offset=70000"},
        {"get", kName, "--length=0", "--parallel=4"}}) {
    std::vector<std::string> full = args;
    full.push_back("--fsverity-cert=" + pinned->cert_path);
    full.push_back("-o");
    full.push_back(out_dir + "/file");
    EXPECT_EQ(Run(RunGetCommand, full), kExitVerificationFailed)
        << absl::StrJoin(args, " ") << ": " << Err();
    EXPECT_TRUE(absl::StrContains(Err(), "no fs-verity signature")) << Err();
    EXPECT_TRUE(ListDir(out_dir)->empty());
  }
  EXPECT_EQ(Run(RunStatCommand, {"stat", empty.digest_text,
                                 "--fsverity-cert=" + pinned->cert_path}),
            kExitVerificationFailed);
  // A name pointed at an unsigned empty blob, with trusted keys: the name
  // passes, the blob does not.
  const Ed25519PrivateKey key = LoadKey(Keygen("key"));
  server_.service().SetStatement(
      "empty", SignTestStatement(TestClaim{"empty", empty.digest, 1}, {&key}));
  EXPECT_EQ(Run(RunGetCommand,
                {"get", "empty", "--parallel=4", "-o", out_dir + "/file",
                 "--trusted-keys=" + dir_ + "/key.pub",
                 "--state-dir=" + dir_ + "/state",
                 "--fsverity-cert=" + pinned->cert_path}),
            kExitVerificationFailed);
  EXPECT_TRUE(ListDir(out_dir)->empty());
}

}  // namespace
}  // namespace verity::cli

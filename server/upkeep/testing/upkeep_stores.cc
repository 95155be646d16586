// Implements the upkeep tests' stores and helpers.

#include "server/upkeep/testing/upkeep_stores.h"

#include "lib/manifest/tree_manifest.h"
#include "server/store/file/file_store.h"
#include "server/store/file/testing/file_store.h"
#include "server/store/s3/testing/fake_s3.h"
#include "server/store/s3/testing/fake_s3_store.h"
#include "server/store/testing/name_write_cases.h"

namespace verity::server {

std::unique_ptr<Store> NewTestFileStore(int name_history) {
  FileStoreOptions options;
  options.root = FreshTestDir();
  options.name_history = name_history;
  absl::StatusOr<std::unique_ptr<FileStore>> store = FileStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

std::unique_ptr<Store> NewTestS3Store(int name_history) {
  S3StoreOptions options = FakeS3StoreOptions(std::make_shared<FakeS3>());
  options.name_history = name_history;
  absl::StatusOr<std::unique_ptr<S3Store>> store = S3Store::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

TestBlob UpkeepTest::Put(std::string data) {
  TestBlob blob = MakeTestBlob(std::move(data), MerkleParams{});
  EXPECT_TRUE(PutWith(*store_, blob, PutCommit{}).ok());
  EXPECT_TRUE(store_->LastUsed(blob.digest).ok());
  return blob;
}

TestBlob UpkeepTest::PutTree(
    const std::vector<std::pair<std::string, TestBlob>>& files) {
  std::vector<TreeEntry> entries;
  for (const auto& [path, blob] : files) {
    entries.push_back(TreeEntry::File(path, blob.digest, blob.data.size()));
  }
  return Put(*EncodeTreeManifest(std::move(entries)));
}

void UpkeepTest::Name(const std::string& name, const TestBlob& blob) {
  ASSERT_TRUE(store_->SetName(blob.digest, NameWrite{name, "", {}}).ok());
}

}  // namespace verity::server

// Test support for server/upkeep's tests: each case runs on a file store and
// on an S3 store over FakeS3, filled through these helpers.

#ifndef VERITYD_SERVER_UPKEEP_TESTING_UPKEEP_STORES_H_
#define VERITYD_SERVER_UPKEEP_TESTING_UPKEEP_STORES_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "lib/testing/test_blob.h"
#include "server/store/store.h"

namespace verity::server {

// A new empty store whose names keep `name_history` versions.
using StoreFactory = std::function<std::unique_ptr<Store>(int name_history)>;
std::unique_ptr<Store> NewTestFileStore(int name_history);
std::unique_ptr<Store> NewTestS3Store(int name_history);

// A fixture over either store. A test suite derived from it instantiates
// with ::testing::Values(StoreFactory(NewTestFileStore),
// StoreFactory(NewTestS3Store)) and calls Open() first.
class UpkeepTest : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void Open(int name_history) { store_ = GetParam()(name_history); }

  // A blob with `data`, put, and timed now (an S3 blob is timed when a
  // collection first sees it: as if one had).
  TestBlob Put(std::string data);
  // A tree of `files` (path, blob; no folders), put.
  TestBlob PutTree(const std::vector<std::pair<std::string, TestBlob>>& files);
  // Points `name` at `blob`, without a statement.
  void Name(const std::string& name, const TestBlob& blob);
  bool Stored(const TestBlob& blob) { return store_->Stat(blob.digest).ok(); }

  std::shared_ptr<Store> store_;
};

}  // namespace verity::server

#endif  // VERITYD_SERVER_UPKEEP_TESTING_UPKEEP_STORES_H_

// What the server checks of a tree manifest a Put stores: that it parses,
// and that every file it lists is a stored blob of the size it says, so that
// a tree's name never points at files that are not there.

#ifndef VERITYD_SERVER_RPC_TREE_CHECKS_H_
#define VERITYD_SERVER_RPC_TREE_CHECKS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/store/store.h"

namespace verity::server {

// INVALID_ARGUMENT if `manifest` does not parse (ParseTreeManifest) or a
// file's size disagrees with its stored blob; FAILED_PRECONDITION naming the
// first file whose blob is not stored. Blocking: the store's Stat per file.
absl::Status CheckStoredTree(const Store& store, absl::string_view manifest);

}  // namespace verity::server

#endif  // VERITYD_SERVER_RPC_TREE_CHECKS_H_

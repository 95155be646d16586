// Test support: what every Store must do with name statements and fs-verity
// signatures, written once and run against each backend (the file store, and
// the S3 store over FakeS3).

#ifndef VERITYD_SERVER_STORE_TESTING_NAME_WRITE_CASES_H_
#define VERITYD_SERVER_STORE_TESTING_NAME_WRITE_CASES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/testing/test_blob.h"
#include "server/store/store.h"

namespace verity::server {

// Puts `blob` through `store` with `commit` (its expected digest is set to
// the blob's).
absl::StatusOr<PutResult> PutWith(Store& store, const TestBlob& blob,
                                  PutCommit commit);

// A statement goes with its name: stored by Put and SetName, returned by
// LookupName and in the result, replaced when the name is re-pointed (and
// gone when it is re-pointed without one), deleted with the name and with
// the blob; SetName of a blob not stored is NOT_FOUND.
void ExpectStatementsGoWithNames(Store& store);

// A name write's check sees the digest and the current statement, and a
// refused write (Put or SetName) leaves the name as it was, the Put's blob
// stored.
void ExpectARefusedNameWriteChangesNothing(Store& store);

// A signature goes with its blob: stored by Put, returned by Stat and by
// OpenBlob, replaced by a later Put that carries one, kept by one that does
// not, deleted with the blob.
void ExpectSignaturesGoWithBlobs(Store& store);

// A Put with PutCommit::tree_manifest marks its blob (Stat says so), a new
// one or one stored before; a Put without it leaves the mark; a deleted blob
// stored again as a file has none.
void ExpectTreeManifestMarksGoWithBlobs(Store& store);

// A name keeps its last `keep` versions (the store's name_history), newest
// first, each with its statement and the time it was written: a Put or a
// SetName adds one (one of the version the name has already adds none), a
// name pointed back at an older blob gets a new version; DeleteName deletes
// the history with the name.
void ExpectNamesKeepTheirHistory(Store& store, int keep);

// ListNames pages through every name, each once, with its history.
void ExpectListNamesFindsEveryName(Store& store);

// Threads write one name through `writers` (the same store, or replicas on
// one bucket) with statements "1".."N" in shuffled order and a check that
// refuses any version not above the current one: the name ends at "N", and
// every write that succeeded was above every one before it.
void ExpectNameWritesAreCompareAndSet(const std::vector<Store*>& writers);

}  // namespace verity::server

#endif  // VERITYD_SERVER_STORE_TESTING_NAME_WRITE_CASES_H_

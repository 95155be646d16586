// Test-only: the cases of tamper_test: the blobs it stores, the ranges it
// reads, the readers it reads with, and every tamper mode that applies.

#ifndef VERITYD_TESTS_TAMPER_TAMPER_CASES_H_
#define VERITYD_TESTS_TAMPER_TAMPER_CASES_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "lib/tree/merkle_params.h"
#include "tests/tamper/tamper.h"

namespace verity::tamper {

// A blob and an unaligned range of it. Plain value.
struct BlobSpec {
  const char* name;
  uint64_t size;
  HashAlgorithm algorithm;
  uint32_t block_size;
  const char* salt;
  int levels;       // of its tree, as TreeGeometry counts them
  uint64_t offset;  // of the unaligned range
  uint64_t length;
};

enum BlobId { kLarge, kDeep, kTiny, kBlobCount };

const BlobSpec& Blob(BlobId id);
MerkleParams ParamsOf(const BlobSpec& spec);

// How a case reads: client::ReadVerified, or the SDK with one stream or four.
enum class Reader { kReadVerified, kSdk, kSdkParallel };

// Plain value.
struct Case {
  BlobId blob;
  bool whole;  // the whole blob, or the spec's unaligned range
  Tamper tamper;
  Reader reader;
};

// "large range flip-tree-bit:0 Sdk".
std::string Describe(const Case& c);
void PrintTo(const Case& c, std::ostream* os);

// Every blob, range, reader and mode that has something to damage in the
// range (a tree, two data messages, ...), the mode none included.
std::vector<Case> AllCases();

}  // namespace verity::tamper

#endif  // VERITYD_TESTS_TAMPER_TAMPER_CASES_H_

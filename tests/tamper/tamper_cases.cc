// Implements the cases of tamper_test.

#include "tests/tamper/tamper_cases.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tests/tamper/stream_layout.h"

namespace verity::tamper {
namespace {

// verityd's default, which decides how many data messages a range takes.
constexpr uint64_t kChunkBytes = 256 << 10;

// The three shapes: a 2-level SHA-256 tree with a salt and a short last
// block, a 3-level SHA-512 tree of 1 KiB blocks, and a blob of one short
// block with no tree.
const BlobSpec kBlobs[kBlobCount] = {
    {"large", (3 << 20) + 123, HashAlgorithm::kSha256, 4096, "tamper salt", 2,
     5 * 4096 + 123, (1 << 20) + 999},
    {"deep", (1 << 20) + 7, HashAlgorithm::kSha512, 1024, "s", 3,
     100 * 1024 + 1, 600000},
    {"tiny", 1000, HashAlgorithm::kSha256, 4096, "", 0, 10, 500},
};

Tamper Mode(TamperKind kind) {
  Tamper tamper;
  tamper.kind = kind;
  return tamper;
}

// The modes every stream has something for.
std::vector<Tamper> UniversalModes() {
  std::vector<Tamper> modes;
  for (TamperKind kind :
       {TamperKind::kNone, TamperKind::kFlipDataBit, TamperKind::kDropMessage,
        TamperKind::kDuplicateMessage, TamperKind::kLieSizeAndSalt,
        TamperKind::kBlocksBeyondRange, TamperKind::kExtendLastChunk,
        TamperKind::kOtherBlob, TamperKind::kOtherBlobRelabeled,
        TamperKind::kWrongDataOffset, TamperKind::kTruncate}) {
    modes.push_back(Mode(kind));
  }
  for (DescriptorField field :
       {DescriptorField::kDigestText, DescriptorField::kHashAlgorithm,
        DescriptorField::kLogBlockSize, DescriptorField::kSalt,
        DescriptorField::kDataSize, DescriptorField::kRootHash}) {
    modes.push_back(Mode(TamperKind::kFlipDescriptor));
    modes.back().field = field;
  }
  return modes;
}

std::vector<Tamper> ModesFor(const BlobSpec& spec, bool whole) {
  const uint64_t bs = spec.block_size;
  const uint64_t begin = whole ? 0 : spec.offset;
  const uint64_t end = whole ? spec.size : spec.offset + spec.length;
  const uint64_t blocks = DivRoundUp(end, bs) - begin / bs;
  const uint64_t messages = DivRoundUp(blocks, kChunkBytes / bs);
  std::vector<Tamper> modes = UniversalModes();
  // verityd's first message carries the first chunk too.
  for (uint64_t keep = 0; keep < std::min<uint64_t>(messages, 2); ++keep) {
    modes.push_back(Mode(TamperKind::kTruncate));
    modes.back().keep_messages = static_cast<int>(keep);
  }
  for (int level = 0; level < spec.levels; ++level) {
    modes.push_back(Mode(TamperKind::kFlipTreeBit));
    modes.back().tree_level = level;
  }
  if (spec.levels > 0) modes.push_back(Mode(TamperKind::kDropTreeBlocks));
  if (blocks >= 3) modes.push_back(Mode(TamperKind::kSwapDataBlocks));
  if (messages >= 2) modes.push_back(Mode(TamperKind::kSwapChunks));
  return modes;
}

}  // namespace

const BlobSpec& Blob(BlobId id) { return kBlobs[id]; }

MerkleParams ParamsOf(const BlobSpec& spec) {
  MerkleParams params;
  params.hash_algorithm = spec.algorithm;
  params.block_size = spec.block_size;
  params.salt = spec.salt;
  return params;
}

std::string Describe(const Case& c) {
  const char* readers[] = {"ReadVerified", "Sdk", "SdkParallel"};
  return absl::StrCat(kBlobs[c.blob].name, c.whole ? " whole " : " range ",
                      TamperName(c.tamper), " ",
                      readers[static_cast<int>(c.reader)]);
}

void PrintTo(const Case& c, std::ostream* os) { *os << Describe(c); }

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (int blob = 0; blob < kBlobCount; ++blob) {
    for (bool whole : {true, false}) {
      for (const Tamper& tamper : ModesFor(kBlobs[blob], whole)) {
        for (Reader reader :
             {Reader::kReadVerified, Reader::kSdk, Reader::kSdkParallel}) {
          cases.push_back({static_cast<BlobId>(blob), whole, tamper, reader});
        }
      }
    }
  }
  return cases;
}

}  // namespace verity::tamper

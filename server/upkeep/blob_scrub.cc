// Implements the check of one whole blob: tree, data, then FEC area.

#include "server/upkeep/blob_scrub.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"

namespace verity::server {
namespace {

// Bytes read at a time.
constexpr uint64_t kScrubReadBytes = uint64_t{1} << 20;

class BlobScrubber {
 public:
  BlobScrubber(std::shared_ptr<VerifiedBlob> blob, const ScrubHooks& hooks)
      : blob_(std::move(blob)),
        stored_(blob_->blob().Stored()),
        geometry_(blob_->geometry()),
        bs_(geometry_.block_size()),
        hooks_(hooks) {}

  absl::StatusOr<BlobScrub> Run() {
    if (stored_.fec_roots() != 0 &&
        PartSize(geometry_, stored_.fec_roots(), BlobPart::kFec) <=
            hooks_.max_parity_in_memory) {
      ASSIGN_OR_RETURN(stream_,
                       FecStreamEncoder::Create(stored_.fec_roots(), bs_,
                                                FecBlocks(geometry_)));
    }
    absl::Status checked = CheckTree();
    if (checked.ok()) checked = CheckData();
    if (checked.ok() && stored_.fec_roots() != 0) checked = CheckFec();
    if (absl::IsDataLoss(checked)) {
      result_.damage = std::move(checked);
    } else {
      RETURN_IF_ERROR(checked);
    }
    return result_;
  }

 private:
  uint64_t TreeBlocks() const { return geometry_.tree_size() / bs_; }

  // Reads `out` from `offset` of `part`, paced.
  absl::Status Read(BlobPart part, uint64_t offset, absl::Span<uint8_t> out) {
    if (hooks_.pace) RETURN_IF_ERROR(hooks_.pace(out.size()));
    result_.bytes += out.size();
    return ReadAndWait(stored_, part, offset, out);
  }

  // `bad` (a DATA_LOSS naming its block) is repaired if FEC can; OK once it
  // was and the block is to be read again, else the damage. A block repaired
  // once and bad again is damage: the repair did not hold.
  absl::Status Repair(absl::Status bad) {
    const std::optional<uint64_t> block = BadBlockOf(bad);
    if (!block.has_value()) return bad;
    if (stored_.fec_roots() == 0 || !hooks_.repair ||
        (repaired_.has_value() && *repaired_ == *block)) {
      ++result_.bad_blocks;
      return bad;
    }
    repaired_ = *block;
    const absl::StatusOr<int> rebuilt = hooks_.repair(blob_, bad);
    if (!rebuilt.ok()) {
      ++result_.bad_blocks;
      // The read's damage, with its marks (the bad block, tree or data).
      absl::Status damage(
          bad.code(), absl::StrCat(bad.message(), "; FEC could not repair it: ",
                                   rebuilt.status().message()));
      bad.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
        damage.SetPayload(url, payload);
      });
      return damage;
    }
    result_.bad_blocks += *rebuilt;
    result_.repaired_blocks += *rebuilt;
    return absl::OkStatus();
  }

  // Every tree block, top level first (the serialized order), each against
  // its verified parent.
  absl::Status CheckTree() {
    const uint64_t blocks = TreeBlocks();
    std::vector<uint8_t> buffer;
    for (uint64_t ordinal = 0; ordinal < blocks;) {
      const uint64_t count = std::min(blocks - ordinal, kScrubReadBytes / bs_);
      buffer.resize(count * bs_);
      RETURN_IF_ERROR(
          InTree(Read(BlobPart::kTree, ordinal * bs_, absl::MakeSpan(buffer))));
      for (uint64_t i = 0; i < count; ++i, ++ordinal) {
        ASSIGN_OR_RETURN(const TreeBlockId id,
                         geometry_.BlockAtOrdinal(ordinal));
        absl::Status added = blob_->AddTreeBlock(
            id, absl::MakeConstSpan(buffer).subspan(i * bs_, bs_));
        if (!added.ok()) {
          RETURN_IF_ERROR(Repair(std::move(added)));
          break;  // read again from this block
        }
      }
    }
    return absl::OkStatus();
  }

  // Every data block, in order, against the tree; each verified run goes
  // into the FEC stream.
  absl::Status CheckData() {
    const uint64_t blocks = geometry_.data_block_count();
    std::vector<uint8_t> buffer;
    for (uint64_t next = 0; next < blocks;) {
      const uint64_t offset = next * bs_;
      const uint64_t size =
          std::min(kScrubReadBytes, geometry_.data_size() - offset);
      const uint64_t end = next + (size + bs_ - 1) / bs_;
      buffer.resize(size);
      RETURN_IF_ERROR(Read(BlobPart::kData, offset, absl::MakeSpan(buffer)));
      const uint64_t first = next;
      absl::Status verified =
          blob_->VerifyData(first, absl::MakeConstSpan(buffer), &next, end);
      RETURN_IF_ERROR(Feed(absl::MakeConstSpan(buffer).subspan(
          0, std::min<uint64_t>(size, (next - first) * bs_))));
      if (!verified.ok()) RETURN_IF_ERROR(Repair(std::move(verified)));
    }
    return absl::OkStatus();
  }

  absl::Status Feed(absl::Span<const uint8_t> bytes) {
    return stream_.has_value() ? stream_->Update(bytes) : absl::OkStatus();
  }

  // Covered blocks [first, first + count) (data blocks, the last
  // zero-padded, then tree blocks) as verified, into `out`: for parity
  // encoded from a second read.
  absl::Status VerifiedCoveredBlocks(uint64_t first, uint64_t count,
                                     absl::Span<uint8_t> out) {
    const uint64_t data_blocks = geometry_.data_block_count();
    const uint64_t data_end = std::min(first + count, data_blocks);
    if (first < data_end) {
      const uint64_t offset = first * bs_;
      const uint64_t size =
          std::min(data_end * bs_, geometry_.data_size()) - offset;
      std::fill(out.begin() + size, out.begin() + (data_end - first) * bs_, 0);
      RETURN_IF_ERROR(Read(BlobPart::kData, offset, out.subspan(0, size)));
      for (uint64_t i = first; i < data_end; ++i) {
        const uint64_t at = (i - first) * bs_;
        RETURN_IF_ERROR(blob_->CheckDataBlock(
            i, out.subspan(at, std::min<uint64_t>(bs_, size - at))));
      }
    }
    for (uint64_t i = std::max(first, data_blocks); i < first + count; ++i) {
      ASSIGN_OR_RETURN(const TreeBlockId id,
                       geometry_.BlockAtOrdinal(i - data_blocks));
      ASSIGN_OR_RETURN(const std::string block, blob_->VerifiedTreeBlock(id));
      std::memcpy(out.data() + (i - first) * bs_, block.data(), bs_);
    }
    return absl::OkStatus();
  }

  // The FEC area against parity encoded from the verified blocks.
  absl::Status CheckFec() {
    uint64_t offset = 0;
    const FecWriteFn compare = [&](absl::Span<const uint8_t> parity) {
      RETURN_IF_ERROR(CompareFec(offset, parity));
      offset += parity.size();
      return absl::OkStatus();
    };
    if (stream_.has_value()) {
      RETURN_IF_ERROR(stream_->PadBlock());
      for (uint64_t ordinal = 0; ordinal < TreeBlocks(); ++ordinal) {
        ASSIGN_OR_RETURN(const TreeBlockId id,
                         geometry_.BlockAtOrdinal(ordinal));
        ASSIGN_OR_RETURN(const std::string block, blob_->VerifiedTreeBlock(id));
        RETURN_IF_ERROR(stream_->Update(AsSpan(block)));
      }
      ASSIGN_OR_RETURN(const std::string parity, stream_->Finish());
      for (uint64_t at = 0; at < parity.size(); at += kScrubReadBytes) {
        RETURN_IF_ERROR(compare(AsSpan(parity).subspan(at, kScrubReadBytes)));
      }
      return absl::OkStatus();
    }
    const FecReadFn read = [&](uint64_t first, uint64_t count,
                               absl::Span<uint8_t> out) {
      return VerifiedCoveredBlocks(first, count, out);
    };
    return EncodeFec(stored_.fec_roots(), bs_, FecBlocks(geometry_), read,
                     compare);
  }

  // The stored FEC area's bytes at `offset` against `parity`; each block of
  // the area that differs is counted and written again.
  absl::Status CompareFec(uint64_t offset, absl::Span<const uint8_t> parity) {
    std::vector<uint8_t> stored(parity.size());
    RETURN_IF_ERROR(Read(BlobPart::kFec, offset, absl::MakeSpan(stored)));
    for (uint64_t at = 0; at < parity.size(); at += bs_) {
      const uint64_t n = std::min<uint64_t>(bs_, parity.size() - at);
      if (std::memcmp(stored.data() + at, parity.data() + at, n) == 0) continue;
      ++result_.bad_blocks;
      RETURN_IF_ERROR(
          stored_.Rewrite(BlobPart::kFec, offset + at, parity.subspan(at, n)));
      ++result_.repaired_blocks;
    }
    return absl::OkStatus();
  }

  static absl::Span<const uint8_t> AsSpan(absl::string_view bytes) {
    return absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(bytes.data()),
                               bytes.size());
  }

  const std::shared_ptr<VerifiedBlob> blob_;
  const Blob& stored_;
  const TreeGeometry& geometry_;
  const uint64_t bs_;
  const ScrubHooks& hooks_;
  // The FEC area encoded as the verified blocks go by, if it fits in memory.
  std::optional<FecStreamEncoder> stream_;
  std::optional<uint64_t> repaired_;  // the last block repaired
  BlobScrub result_;
};

}  // namespace

absl::StatusOr<BlobScrub> ScrubBlob(std::shared_ptr<const Blob> blob,
                                    const ScrubHooks& hooks) {
  absl::StatusOr<std::shared_ptr<VerifiedBlob>> verified =
      VerifiedBlob::Create(std::move(blob));
  if (absl::IsDataLoss(verified.status())) {
    BlobScrub damaged;
    damaged.damage = verified.status();
    return damaged;
  }
  RETURN_IF_ERROR(verified.status());
  return BlobScrubber(*std::move(verified), hooks).Run();
}

}  // namespace verity::server

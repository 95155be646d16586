// Implements RepairFecGroup: read and check the group's blocks, rebuild the
// bad ones with ISA-L, check them again, write them back.

#include "server/store/fec_repair.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"

namespace verity::server {
namespace {

// What the tree says of a block's bytes.
enum class Verdict {
  kGood,
  kBad,
  // A tree block the check needs is bad itself: the bytes are used as they
  // are, and what they rebuild is checked.
  kUnknown,
};

// One RS group of a blob: its blocks' places, bytes and verdicts.
class Group {
 public:
  Group(VerifiedBlob& blob, uint64_t group, uint64_t rounds)
      : blob_(blob),
        geometry_(blob.geometry()),
        bs_(geometry_.block_size()),
        group_(group),
        rounds_(rounds),
        k_(255 - blob.blob().fec_roots()),
        bytes_(static_cast<size_t>(k_) * bs_, 0),
        verdicts_(k_, Verdict::kGood) {}

  int k() const { return k_; }
  // Block `j` of the group in FEC numbering; past FecBlocks() it is padding.
  uint64_t Member(int j) const { return group_ + j * rounds_; }
  bool IsPadding(int j) const { return Member(j) >= FecBlocks(geometry_); }
  absl::Span<uint8_t> Bytes(int j) {
    return absl::MakeSpan(&bytes_[static_cast<size_t>(j) * bs_], bs_);
  }
  // What ReadAndCheck() found of member `j`.
  Verdict verdict(int j) const { return verdicts_[j]; }

  // Reads members `members` (none padding, none read before) and, first, the
  // tree blocks their checks need, each batch at once (a remote store's
  // blocks are a round trip each); then checks each member: kBad if it
  // could not be read. No tree block is read twice: a member verified
  // already is taken from the verified tree, one read for a path is
  // taken from that read.
  void ReadAndCheck(const std::vector<int>& members) {
    ReadTreePaths(members);
    std::vector<PartRead> reads;
    std::vector<int> read_member;
    std::vector<absl::Status> status(members.size());
    for (size_t i = 0; i < members.size(); ++i) {
      const int j = members[i];
      const uint64_t block = Member(j);
      if (block < geometry_.data_block_count()) {
        // The rest of a partial last block stays zero.
        reads.push_back({BlobPart::kData, block * bs_,
                         DataBytes(block, Bytes(j)), absl::OkStatus()});
        read_member.push_back(static_cast<int>(i));
      } else if (!TakeTreeBlock(j, &status[i])) {
        reads.push_back(
            {BlobPart::kTree, TreeOffset(block), Bytes(j), absl::OkStatus()});
        read_member.push_back(static_cast<int>(i));
      }
    }
    ReadAllAndWait(blob_.blob().Stored(), absl::MakeSpan(reads));
    for (size_t r = 0; r < reads.size(); ++r) {
      status[read_member[r]] = std::move(reads[r].status);
    }
    for (size_t i = 0; i < members.size(); ++i) {
      verdicts_[members[i]] =
          status[i].ok() ? Check(members[i]) : Verdict::kBad;
    }
  }

  // Checks member `j`'s bytes, as they are now, against the tree.
  Verdict Check(int j) {
    const uint64_t block = Member(j);
    const absl::Span<uint8_t> bytes = Bytes(j);
    if (block < geometry_.data_block_count()) {
      if (!PathVerified(block, -1)) return Verdict::kUnknown;
      return blob_.CheckDataBlock(block, DataBytes(block, bytes)).ok()
                 ? Verdict::kGood
                 : Verdict::kBad;
    }
    const absl::StatusOr<TreeBlockId> id = TreeIdOf(j);
    if (!id.ok() || !PathVerified(FirstDataBlockUnder(*id), id->level)) {
      return Verdict::kUnknown;
    }
    return blob_.AddTreeBlock(*id, bytes).ok() ? Verdict::kGood : Verdict::kBad;
  }

  bool IsTree(int j) const { return Member(j) >= geometry_.data_block_count(); }

  // Rebuilds the members at `erased` from the others and `parity`, then
  // checks them, tree blocks first (top level first: they are numbered so),
  // so that a rebuilt parent lets its children be checked. The members that
  // check good and differ from what was read; nullopt if `target` does not
  // check good (the erased members are then as rebuilt).
  std::optional<std::vector<int>> Rebuild(const FecCodec& codec,
                                          std::vector<int> erased,
                                          absl::Span<const uint8_t> parity,
                                          int target) {
    std::vector<std::string> before;
    std::vector<const uint8_t*> members(k_, nullptr);
    for (int j = 0; j < k_; ++j) {
      if (!IsPadding(j)) members[j] = Bytes(j).data();
    }
    std::vector<uint8_t*> out;
    for (int j : erased) {
      before.emplace_back(reinterpret_cast<const char*>(Bytes(j).data()), bs_);
      out.push_back(Bytes(j).data());
    }
    if (!codec.RepairGroup(members, erased, parity, bs_, out).ok()) {
      return std::nullopt;
    }
    std::vector<size_t> order(erased.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return IsTree(erased[a]) > IsTree(erased[b]) ||
             (IsTree(erased[a]) == IsTree(erased[b]) && erased[a] < erased[b]);
    });
    std::vector<int> good;
    for (size_t i : order) {
      const int j = erased[i];
      if (Check(j) != Verdict::kGood) {
        if (j == target) return std::nullopt;
        continue;
      }
      if (AsBytes(before[i]) != absl::Span<const uint8_t>(Bytes(j))) {
        good.push_back(j);
      }
    }
    return good;
  }

  // Writes member `j`'s bytes back to where the blob is stored.
  absl::Status Rewrite(int j) {
    const uint64_t block = Member(j);
    if (block < geometry_.data_block_count()) {
      return blob_.blob().Rewrite(BlobPart::kData, block * bs_,
                                  DataBytes(block, Bytes(j)));
    }
    return blob_.blob().Rewrite(BlobPart::kTree, TreeOffset(block), Bytes(j));
  }

 private:
  // The stored part of data block `block` within `bytes`: all of it but for
  // a partial last block.
  absl::Span<uint8_t> DataBytes(uint64_t block, absl::Span<uint8_t> bytes) {
    return bytes.first(
        std::min<uint64_t>(bs_, geometry_.data_size() - block * bs_));
  }
  uint64_t TreeOffset(uint64_t block) const {
    return (block - geometry_.data_block_count()) * bs_;
  }
  // A data block that tree block `id` covers.
  uint64_t FirstDataBlockUnder(TreeBlockId id) const {
    uint64_t block = id.index;
    for (int level = 0; level <= id.level; ++level) {
      block *= geometry_.hashes_per_block();
    }
    return block;
  }
  absl::StatusOr<TreeBlockId> TreeIdOf(int j) const {
    return geometry_.BlockAtOrdinal(Member(j) - geometry_.data_block_count());
  }
  // Fills tree member `j`'s bytes from a copy this repair holds already: the
  // verified tree's, or a read for a path (its outcome into *status). False
  // if there is none.
  bool TakeTreeBlock(int j, absl::Status* status) {
    const absl::StatusOr<TreeBlockId> id = TreeIdOf(j);
    if (!id.ok()) return false;
    if (absl::StatusOr<std::string> verified = blob_.VerifiedTreeBlock(*id);
        verified.ok()) {
      std::copy(verified->begin(), verified->end(), Bytes(j).begin());
      return true;
    }
    const auto read = path_reads_.find(geometry_.Ordinal(*id));
    if (read == path_reads_.end()) return false;
    std::copy(read->second.bytes.begin(), read->second.bytes.end(),
              Bytes(j).begin());
    *status = read->second.status;
    return true;
  }
  // Reads the tree blocks on the paths of `members` that are neither
  // verified nor read before, all at once, and verifies them top level
  // first; one that fails leaves the blocks under it to be found unknown by
  // Check().
  void ReadTreePaths(const std::vector<int>& members) {
    std::vector<TreeBlockId> ids;
    for (int j : members) {
      uint64_t under = Member(j);
      if (IsTree(j)) {
        const absl::StatusOr<TreeBlockId> id = TreeIdOf(j);
        if (!id.ok()) continue;
        under = FirstDataBlockUnder(*id);
      }
      for (const TreeBlockId& id : blob_.MissingTree(under, under + 1)) {
        if (!path_reads_.contains(geometry_.Ordinal(id))) ids.push_back(id);
      }
    }
    std::sort(ids.begin(), ids.end(), [](TreeBlockId a, TreeBlockId b) {
      return a.level > b.level || (a.level == b.level && a.index < b.index);
    });
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    std::vector<PartRead> reads;
    for (const TreeBlockId& id : ids) {
      PathRead& read = path_reads_[geometry_.Ordinal(id)];
      read.bytes.assign(bs_, '\0');
      reads.push_back({BlobPart::kTree, geometry_.Ordinal(id) * bs_,
                       AsMutableBytes(&read.bytes), absl::OkStatus()});
    }
    ReadAllAndWait(blob_.blob().Stored(), absl::MakeSpan(reads));
    for (size_t i = 0; i < ids.size(); ++i) {
      PathRead& read = path_reads_[geometry_.Ordinal(ids[i])];
      read.status = std::move(reads[i].status);
      if (read.status.ok()) {
        blob_.AddTreeBlock(ids[i], AsBytes(read.bytes)).IgnoreError();
      }
    }
  }

  // Whether the tree blocks above `level` on data block `block`'s path
  // (level -1: the whole path) are verified. ReadTreePaths() read and
  // verified every one it could, and a rebuilt one is added as it checks
  // good: one still missing is bad or unreadable, and reading it again per
  // member would only repeat that.
  bool PathVerified(uint64_t block, int level) const {
    for (const TreeBlockId& id : blob_.MissingTree(block, block + 1)) {
      if (id.level > level) return false;
    }
    return true;
  }

  VerifiedBlob& blob_;
  const TreeGeometry& geometry_;
  const uint64_t bs_;
  const uint64_t group_;
  const uint64_t rounds_;
  const int k_;
  std::vector<uint8_t> bytes_;  // k_ blocks; padding stays zero
  std::vector<Verdict> verdicts_;
  // A tree block read for a path: its bytes and how the read went, by
  // ordinal.
  struct PathRead {
    std::string bytes;
    absl::Status status;
  };
  absl::flat_hash_map<uint64_t, PathRead> path_reads_;
};

// What a group's check found: the members to rebuild.
struct Erasures {
  std::vector<int> bad;
  // Tree blocks that could not be checked: a bad parent hides whether they
  // are bad too.
  std::vector<int> unchecked_tree;
};

Erasures ErasuresOf(const Group& group) {
  Erasures erasures;
  for (int j = 0; j < group.k(); ++j) {
    if (group.IsPadding(j)) continue;
    const Verdict verdict = group.verdict(j);
    if (verdict == Verdict::kBad) erasures.bad.push_back(j);
    if (verdict == Verdict::kUnknown && group.IsTree(j)) {
      erasures.unchecked_tree.push_back(j);
    }
  }
  return erasures;
}

// First the blocks found bad. If what that rebuilds fails its check, the
// tree blocks that could not be checked are rebuilt too, where the roots
// allow: a bad parent over a bad child is then repaired. The members
// rebuilt, or nullopt if neither passes.
std::optional<std::vector<int>> RebuildGroup(Group& group,
                                             const FecCodec& codec,
                                             const Erasures& erasures,
                                             absl::Span<const uint8_t> parity,
                                             int target, int roots) {
  std::optional<std::vector<int>> good =
      group.Rebuild(codec, erasures.bad, parity, target);
  if (good.has_value() || erasures.unchecked_tree.empty() ||
      erasures.bad.size() + erasures.unchecked_tree.size() >
          static_cast<size_t>(roots)) {
    return good;
  }
  std::vector<int> wider = erasures.bad;
  wider.insert(wider.end(), erasures.unchecked_tree.begin(),
               erasures.unchecked_tree.end());
  return group.Rebuild(codec, wider, parity, target);
}

}  // namespace

uint64_t FecGroupOf(const VerifiedBlob& blob, uint64_t bad) {
  return bad % FecRounds(FecBlocks(blob.geometry()), blob.blob().fec_roots());
}

absl::StatusOr<int> RepairFecGroup(VerifiedBlob& blob, uint64_t bad) {
  const int roots = blob.blob().fec_roots();
  ASSIGN_OR_RETURN(const FecCodec* const codec, FecCodec::Create(roots));
  const TreeGeometry& geometry = blob.geometry();
  const uint64_t rounds = FecRounds(FecBlocks(geometry), roots);
  const uint64_t index = bad % rounds;
  const int target = static_cast<int>(bad / rounds);
  Group group(blob, index, rounds);
  // The target first: a repair that raced this one, or a copy that was bad
  // only in a cache, leaves nothing to read the group for.
  group.ReadAndCheck({target});
  if (group.verdict(target) != Verdict::kBad) return 0;
  std::vector<int> others;
  for (int j = 0; j < group.k(); ++j) {
    if (j != target && !group.IsPadding(j)) others.push_back(j);
  }
  group.ReadAndCheck(others);
  const Erasures erasures = ErasuresOf(group);
  const auto lost = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat("blob ", blob.blob().digest_text(),
                                            ": FEC cannot repair block ", bad,
                                            " (", roots, " roots): ", why));
  };
  if (erasures.bad.size() > static_cast<size_t>(roots)) {
    return lost(
        absl::StrCat(erasures.bad.size(), " bad blocks in its RS group"));
  }
  std::string parity(geometry.block_size() * roots, '\0');
  if (absl::Status read =
          ReadAndWait(blob.blob().Stored(), BlobPart::kFec,
                      index * parity.size(), AsMutableBytes(&parity));
      !read.ok()) {
    return lost(read.message());
  }
  const std::optional<std::vector<int>> good =
      RebuildGroup(group, *codec, erasures, AsBytes(parity), target, roots);
  if (!good.has_value()) return lost("the rebuilt block fails its check");
  for (int j : *good) RETURN_IF_ERROR(group.Rewrite(j));
  return static_cast<int>(good->size());
}

}  // namespace verity::server

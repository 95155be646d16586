// Implements `verity digest --format=dm-verity`: one pass over the file with
// pread, through DmVerityBuilder.

#include "client/cli/dm_verity_digest.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/file_util.h"
#include "lib/hash.h"
#include "lib/status_macros.h"

namespace verity::cli {
namespace {

// veritysetup's random salt.
constexpr size_t kRandomSaltSize = 32;
// Large reads make syscall overhead negligible (as for fs-verity trees).
constexpr size_t kReadChunkSize = size_t{1} << 20;

absl::Status FillRandom(absl::Span<uint8_t> out) {
  while (!out.empty()) {
    const ssize_t n = getrandom(out.data(), out.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, "getrandom", "");
    out.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::StatusOr<DmVerityTree> HashFile(const std::string& file,
                                      const DmVerityParams& params) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(file, O_RDONLY));
  DmVerityBuilder builder(params);
  struct stat st;
  if (fstat(fd.get(), &st) == 0) builder.Reserve(st.st_size);
  std::vector<uint8_t> storage;
  const absl::Span<uint8_t> buffer =
      PageAlignedBuffer(kReadChunkSize, &storage);
  for (uint64_t offset = 0;;) {
    ASSIGN_OR_RETURN(const size_t n, PreadUpTo(fd.get(), offset, buffer, file));
    if (n == 0) break;
    RETURN_IF_ERROR(builder.Update(buffer.first(n)));
    offset += n;
  }
  return builder.Finish();
}

// The lines `veritysetup format` prints, for the hash device `device`.
std::string Report(const std::string& device, const DmVerityParams& params,
                   const DmVerityTree& tree, const std::string& uuid,
                   uint64_t device_size) {
  return absl::StrCat(
      "VERITY header information for ", device, "\n", "UUID:            \t",
      uuid, "\n", "Hash type:       \t", params.format, "\n",
      "Data blocks:     \t", tree.layout.data_blocks, "\n",
      "Data block size: \t", params.data_block_size, "\n",
      "Hash blocks:     \t", tree.layout.hash_blocks(), "\n",
      "Hash block size: \t", params.hash_block_size, "\n",
      "Hash algorithm:  \t", HashAlgorithmName(params.algorithm), "\n",
      "Salt:            \t",
      params.salt.empty() ? "-" : absl::BytesToHexString(params.salt), "\n",
      "Root hash:      \t", absl::BytesToHexString(tree.root_hash), "\n",
      "Hash device size: \t", device_size, " [bytes]\n");
}

}  // namespace

absl::Status DmVerityDigestFile(const std::string& file,
                                const DmVerityDigestOptions& options,
                                std::FILE* out) {
  DmVerityParams params = options.params;
  if (options.random_salt) {
    params.salt.assign(kRandomSaltSize, '\0');
    RETURN_IF_ERROR(FillRandom(AsMutableBytes(&params.salt)));
  }
  ASSIGN_OR_RETURN(const DmVerityTree tree, HashFile(file, params));
  std::string superblock;  // and the zeros up to the hash area
  std::string uuid_text;
  if (options.superblock) {
    Uuid uuid{};
    if (options.uuid.has_value()) {
      uuid = *options.uuid;
    } else {  // random, version 4
      RETURN_IF_ERROR(FillRandom(absl::MakeSpan(uuid)));
      uuid[6] = (uuid[6] & 0x0f) | 0x40;
      uuid[8] = (uuid[8] & 0x3f) | 0x80;
    }
    uuid_text = FormatUuid(uuid);
    superblock =
        EncodeDmVeritySuperblock(params, tree.layout.data_blocks, uuid);
    superblock.resize(params.hash_block_size, '\0');
  }
  if (!options.out_hash_tree.empty()) {
    ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(options.out_hash_tree,
                                           O_WRONLY | O_CREAT | O_TRUNC));
    RETURN_IF_ERROR(
        WriteAll(fd.get(), AsBytes(superblock), options.out_hash_tree));
    RETURN_IF_ERROR(
        WriteAll(fd.get(), AsBytes(tree.hash_area), options.out_hash_tree));
  }
  const std::string report = Report(
      options.out_hash_tree.empty() ? file : options.out_hash_tree, params,
      tree, uuid_text, superblock.size() + tree.hash_area.size());
  std::fwrite(report.data(), 1, report.size(), out);
  return absl::OkStatus();
}

}  // namespace verity::cli

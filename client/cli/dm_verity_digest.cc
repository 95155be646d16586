// Implements `verity digest --format=dm-verity`: one pass over the file with
// pread, through DmVerityBuilder.

#include "client/cli/dm_verity_digest.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/base/file_util.h"
#include "lib/base/status_macros.h"
#include "lib/fec/dm_verity_fec.h"
#include "lib/hash/hash.h"

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

// The tree of `file`, and with `fec_roots` its FEC area, from one pass.
struct HashedFile {
  DmVerityTree tree;
  std::string fec;
};

absl::StatusOr<HashedFile> HashFile(const std::string& file,
                                    const DmVerityParams& params,
                                    int fec_roots) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(file, O_RDONLY));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", file);
  DmVerityBuilder builder(params);
  builder.Reserve(st.st_size);
  // FEC covers the whole data blocks, then the hash area's: the blocks the
  // size says now. A file that changes meanwhile is refused at the end.
  const uint64_t data_blocks = st.st_size / params.data_block_size;
  std::optional<FecStreamEncoder> fec;
  if (fec_roots != 0) {
    ASSIGN_OR_RETURN(const DmVerityLayout layout,
                     MakeDmVerityLayout(params, data_blocks));
    ASSIGN_OR_RETURN(
        fec, FecStreamEncoder::Create(fec_roots, params.data_block_size,
                                      data_blocks + layout.hash_blocks()));
  }
  const uint64_t fec_data_bytes = data_blocks * params.data_block_size;
  std::vector<uint8_t> storage;
  const absl::Span<uint8_t> buffer =
      PageAlignedBuffer(kReadChunkSize, &storage);
  for (uint64_t offset = 0;;) {
    ASSIGN_OR_RETURN(const size_t n, PreadUpTo(fd.get(), offset, buffer, file));
    if (n == 0) break;
    RETURN_IF_ERROR(builder.Update(buffer.first(n)));
    if (fec.has_value() && offset < fec_data_bytes) {
      RETURN_IF_ERROR(fec->Update(
          buffer.first(std::min<uint64_t>(n, fec_data_bytes - offset))));
    }
    offset += n;
  }
  HashedFile hashed;
  ASSIGN_OR_RETURN(hashed.tree, builder.Finish());
  if (fec.has_value()) {
    if (hashed.tree.layout.data_blocks != data_blocks) {
      return absl::AbortedError("the file changed size while it was read");
    }
    RETURN_IF_ERROR(fec->Update(AsBytes(hashed.tree.hash_area)));
    ASSIGN_OR_RETURN(hashed.fec, fec->Finish());
  }
  return hashed;
}

absl::Status WriteFile(const std::string& path,
                       std::initializer_list<absl::string_view> parts) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC));
  for (absl::string_view part : parts) {
    RETURN_IF_ERROR(WriteAll(fd.get(), AsBytes(part), path));
  }
  return fd.Close(path);
}

// The lines `veritysetup format` prints, for the hash device `device` (and
// an FEC area of `fec_roots` roots, `fec` its bytes, if fec_roots is not 0).
std::string Report(const std::string& device, const DmVerityParams& params,
                   const HashedFile& hashed, const std::string& uuid,
                   uint64_t device_size, int fec_roots) {
  const DmVerityTree& tree = hashed.tree;
  const std::string fec_lines =
      fec_roots == 0
          ? ""
          : absl::StrCat("FEC RS roots:   \t", fec_roots, "\n",
                         "FEC blocks:     \t",
                         hashed.fec.size() / params.data_block_size, "\n");
  return absl::StrCat(
      "VERITY header information for ", device, "\n", "UUID:            \t",
      uuid, "\n", "Hash type:       \t", params.format, "\n",
      "Data blocks:     \t", tree.layout.data_blocks, "\n",
      "Data block size: \t", params.data_block_size, "\n",
      "Hash blocks:     \t", tree.layout.hash_blocks(), "\n",
      "Hash block size: \t", params.hash_block_size, "\n",
      "Hash algorithm:  \t", HashAlgorithmName(params.algorithm), "\n",
      fec_lines, "Salt:            \t",
      params.salt.empty() ? "-" : absl::BytesToHexString(params.salt), "\n",
      "Root hash:      \t", absl::BytesToHexString(tree.root_hash), "\n",
      "Hash device size: \t", device_size, " [bytes]\n",
      fec_roots == 0 ? ""
                     : absl::StrCat("FEC device size: \t", hashed.fec.size(),
                                    " [bytes]\n"));
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
  const int fec_roots = options.fec_device.empty() ? 0 : options.fec_roots;
  ASSIGN_OR_RETURN(const HashedFile hashed, HashFile(file, params, fec_roots));
  const DmVerityTree& tree = hashed.tree;
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
    RETURN_IF_ERROR(
        WriteFile(options.out_hash_tree, {superblock, tree.hash_area}));
  }
  if (fec_roots != 0)
    RETURN_IF_ERROR(WriteFile(options.fec_device, {hashed.fec}));
  const std::string report = Report(
      options.out_hash_tree.empty() ? file : options.out_hash_tree, params,
      hashed, uuid_text, superblock.size() + tree.hash_area.size(), fec_roots);
  std::fwrite(report.data(), 1, report.size(), out);
  return absl::OkStatus();
}

}  // namespace verity::cli

// Opens a blob directory or record, checking its descriptor and sizes, and
// serves reads from the open files.

#include "server/store/file/file_blob.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/hash/hash.h"

namespace verity::server {
namespace {

absl::Status Damaged(absl::string_view digest_text, absl::string_view what) {
  return DamagedBlob(digest_text, what);
}

// Opens the blob's directory or record; a symlink means the blob is damaged.
absl::StatusOr<UniqueFd> OpenBlobPath(FileSystem& fs, const std::string& path,
                                      absl::string_view digest_text) {
  absl::StatusOr<UniqueFd> fd =
      OpenFile(fs, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (absl::IsFailedPrecondition(fd.status())) {
    return Damaged(digest_text, fd.status().message());
  }
  return fd;
}

// Opens file `name` of the blob directory open as `dir_fd`; a missing file
// or a symlink means the blob is damaged.
absl::StatusOr<UniqueFd> OpenMember(FileSystem& fs, int dir_fd,
                                    const std::string& dir,
                                    const std::string& name,
                                    absl::string_view digest_text) {
  absl::StatusOr<UniqueFd> fd =
      fs.OpenAt(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (absl::IsNotFound(fd.status())) {
    return Damaged(digest_text, absl::StrCat("no ", name, " file in ", dir));
  }
  if (absl::IsFailedPrecondition(fd.status())) {
    return Damaged(digest_text, fd.status().message());
  }
  return fd;
}

absl::Status CheckSize(int fd, absl::string_view name, uint64_t expected,
                       absl::string_view digest_text) {
  struct stat st;
  if (fstat(fd, &st) != 0) return ErrnoStatus(errno, "fstat", name);
  if (!S_ISREG(st.st_mode)) {
    return Damaged(digest_text, absl::StrCat(name, " is not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) != expected) {
    return Damaged(digest_text,
                   absl::StrCat(name, " file is ", st.st_size,
                                " bytes; the descriptor implies ", expected));
  }
  return absl::OkStatus();
}

// The signature file's bytes; empty if there is none.
absl::StatusOr<std::string> ReadSignature(FileSystem& fs, int dir_fd,
                                          const std::string& dir,
                                          absl::string_view digest_text) {
  const std::string name(kSignatureFileName);
  absl::StatusOr<UniqueFd> fd =
      fs.OpenAt(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (absl::IsNotFound(fd.status())) return std::string();
  if (absl::IsFailedPrecondition(fd.status())) {
    return Damaged(digest_text, fd.status().message());
  }
  RETURN_IF_ERROR(fd.status());
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, "fstat", name);
  if (!S_ISREG(st.st_mode) || st.st_size == 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxFsveritySignatureSize) {
    return Damaged(digest_text,
                   absl::StrCat(name, " is not a regular file of 1 to ",
                                kMaxFsveritySignatureSize, " bytes"));
  }
  std::string bytes(st.st_size + 1, '\0');
  ASSIGN_OR_RETURN(
      const size_t size,
      PreadUpTo(fs, fd->get(), 0, AsMutableBytes(&bytes), JoinPath(dir, name)));
  if (size != static_cast<uint64_t>(st.st_size)) {
    return Damaged(digest_text, absl::StrCat(name, " changed while read"));
  }
  bytes.resize(size);
  return bytes;
}

// The FEC file and its roots; a closed fd and 0 if there is none, or none of
// a size some root count gives.
absl::StatusOr<std::pair<UniqueFd, int>> OpenFec(
    FileSystem& fs, int dir_fd, const TreeGeometry& geometry,
    absl::string_view digest_text) {
  const std::string name(PartName(BlobPart::kFec));
  absl::StatusOr<UniqueFd> fd =
      fs.OpenAt(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (absl::IsNotFound(fd.status()) ||
      absl::IsFailedPrecondition(fd.status())) {
    return std::make_pair(UniqueFd(), 0);
  }
  RETURN_IF_ERROR(fd.status());
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, "fstat", name);
  const int roots =
      S_ISREG(st.st_mode) ? FecRootsOfSize(geometry, st.st_size) : 0;
  if (roots == 0) return std::make_pair(UniqueFd(), 0);
  return std::make_pair(*std::move(fd), roots);
}

}  // namespace

FileBlob::FileBlob(FileSystem& fs, std::shared_ptr<Executor> reads,
                   std::string path, const ParsedDigest& digest,
                   const CheckedDescriptor& checked,
                   std::string fsverity_signature, int fec_roots, Files files,
                   std::optional<RecordFooter> record)
    : Blob(digest, checked.descriptor, checked.params, checked.geometry,
           std::move(fsverity_signature), fec_roots),
      fs_(fs),
      reads_(std::move(reads)),
      path_(std::move(path)),
      files_(std::move(files)),
      record_(std::move(record)) {}

absl::StatusOr<bool> HasTreeManifestMark(FileSystem& fs, const std::string& dir,
                                         absl::string_view digest_text) {
  const std::string path = JoinPath(dir, kTreeManifestFileName);
  absl::StatusOr<UniqueFd> fd =
      fs.OpenAt(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
  if (absl::IsNotFound(fd.status())) return false;
  if (absl::IsFailedPrecondition(fd.status())) {
    return Damaged(digest_text, fd.status().message());
  }
  RETURN_IF_ERROR(fd.status());
  struct stat st;
  if (fstat(fd->get(), &st) != 0) return ErrnoStatus(errno, "fstat", path);
  if (!S_ISREG(st.st_mode) || st.st_size != 0) {
    return Damaged(digest_text, absl::StrCat(kTreeManifestFileName,
                                             " is not an empty regular file"));
  }
  return true;
}

absl::StatusOr<std::shared_ptr<const FileBlob>> FileBlob::Open(
    FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& path,
    const ParsedDigest& digest) {
  const std::string text = digest.ToString();
  ASSIGN_OR_RETURN(UniqueFd fd, OpenBlobPath(fs, path, text));
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "fstat", path);
  if (S_ISDIR(st.st_mode)) {
    return OpenDirectory(fs, std::move(reads), path, digest, std::move(fd));
  }
  if (!S_ISREG(st.st_mode)) {
    return Damaged(text, absl::StrCat(path,
                                      " is neither a directory nor a "
                                      "regular file"));
  }
  return OpenRecord(fs, std::move(reads), path, digest, std::move(fd),
                    st.st_size);
}

absl::StatusOr<std::shared_ptr<const FileBlob>> FileBlob::OpenDirectory(
    FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& dir,
    const ParsedDigest& digest, UniqueFd dir_fd) {
  const std::string text = digest.ToString();
  // Opening the members relative to one directory descriptor keeps them
  // from two different blobs should the directory be renamed meanwhile.
  ASSIGN_OR_RETURN(const UniqueFd descriptor_fd,
                   OpenMember(fs, dir_fd.get(), dir, "descriptor", text));
  std::string bytes(kMaxDescriptorSize + 1, '\0');
  ASSIGN_OR_RETURN(const size_t size,
                   PreadUpTo(fs, descriptor_fd.get(), 0, AsMutableBytes(&bytes),
                             JoinPath(dir, "descriptor")));
  bytes.resize(size);
  ASSIGN_OR_RETURN(const CheckedDescriptor checked,
                   CheckStoredDescriptor(bytes, digest));
  const Descriptor& descriptor = checked.descriptor;
  ASSIGN_OR_RETURN(UniqueFd data_fd,
                   OpenMember(fs, dir_fd.get(), dir, "data", text));
  ASSIGN_OR_RETURN(UniqueFd tree_fd,
                   OpenMember(fs, dir_fd.get(), dir, "tree", text));
  RETURN_IF_ERROR(CheckSize(data_fd.get(), "data", descriptor.data_size, text));
  RETURN_IF_ERROR(
      CheckSize(tree_fd.get(), "tree", checked.geometry.tree_size(), text));
  ASSIGN_OR_RETURN(std::string signature,
                   ReadSignature(fs, dir_fd.get(), dir, text));
  ASSIGN_OR_RETURN(auto fec, OpenFec(fs, dir_fd.get(), checked.geometry, text));
  return std::shared_ptr<const FileBlob>(new FileBlob(
      fs, std::move(reads), dir, digest, checked, std::move(signature),
      fec.second,
      Files{std::move(data_fd), std::move(tree_fd), std::move(fec.first)},
      std::nullopt));
}

absl::StatusOr<std::shared_ptr<const FileBlob>> FileBlob::OpenRecord(
    FileSystem& fs, std::shared_ptr<Executor> reads, const std::string& path,
    const ParsedDigest& digest, UniqueFd fd, uint64_t size) {
  const std::string text = digest.ToString();
  if (size < kRecordFooterSize) {
    return Damaged(text, absl::StrCat("its record is ", size, " bytes"));
  }
  std::string bytes(kRecordFooterSize, '\0');
  ASSIGN_OR_RETURN(size_t n, PreadUpTo(fs, fd.get(), size - kRecordFooterSize,
                                       AsMutableBytes(&bytes), path));
  bytes.resize(n);
  ASSIGN_OR_RETURN(const RecordFooter footer,
                   DecodeRecordFooter(bytes, size, text));
  // The descriptor and the signature, in one read.
  bytes.assign(footer.descriptor_size + footer.signature_size, '\0');
  ASSIGN_OR_RETURN(n, PreadUpTo(fs, fd.get(), footer.descriptor_offset(),
                                AsMutableBytes(&bytes), path));
  if (n != bytes.size()) return Damaged(text, "its record changed while read");
  ASSIGN_OR_RETURN(RecordHead head, CheckRecordHead(footer, bytes, digest));
  return std::shared_ptr<const FileBlob>(
      new FileBlob(fs, std::move(reads), path, digest, head.checked,
                   std::move(head.signature), head.fec_roots,
                   Files{std::move(fd), UniqueFd(), UniqueFd()}, footer));
}

absl::StatusOr<std::string> FileBlob::RecordWith(absl::string_view signature,
                                                 bool tree_manifest) const {
  if (!record_.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(digest_text(), " is not stored as a record"));
  }
  const RecordFooter& footer = *record_;
  std::string bytes(footer.descriptor_offset() + footer.descriptor_size, '\0');
  ASSIGN_OR_RETURN(const size_t n, PreadUpTo(fs_, files_.data.get(), 0,
                                             AsMutableBytes(&bytes), path_));
  if (n != bytes.size()) {
    return Damaged(digest_text(), "its record changed while read");
  }
  return ::verity::server::RecordWith(bytes, footer, signature, tree_manifest);
}

std::optional<absl::Status> FileBlob::TryReadNow(
    BlobPart part, uint64_t offset, absl::Span<uint8_t> out) const {
  return ReadNow(part, offset, out);
}

void FileBlob::ReadAsync(BlobPart part, uint64_t offset, Buffer into,
                         ReadDone done) const {
  // The executor's queue is unbounded (its reads are those in flight), so
  // the task always runs.
  const absl::Status queued = reads_->Submit(
      [self = std::static_pointer_cast<const FileBlob>(shared_from_this()),
       part, offset, into = std::move(into), done = std::move(done)]() mutable {
        // ReadNow() checks the range first, and fills all of `into` or
        // fails.
        absl::Status status = self->ReadNow(part, offset, into.span());
        if (!status.ok()) {
          std::move(done)(status);
          return;
        }
        std::move(done)(std::move(into));
      });
  (void)queued;
}

void FileBlob::Prefetch(BlobPart part, uint64_t offset, uint64_t length) const {
  const int fd = FdOf(part);
  if (fd < 0) return;
  // Starts readahead and returns; a failure only loses the head start.
  (void)posix_fadvise(fd, static_cast<off_t>(BaseOf(part) + offset),
                      static_cast<off_t>(length), POSIX_FADV_WILLNEED);
}

absl::Status FileBlob::ReadNow(BlobPart part, uint64_t offset,
                               absl::Span<uint8_t> out) const {
  RETURN_IF_ERROR(CheckReadRange(*this, part, offset, out.size()));
  const absl::string_view file = PartName(part);
  const uint64_t file_size = PartSize(geometry(), fec_roots(), part);
  ASSIGN_OR_RETURN(const size_t n,
                   PreadUpTo(fs_, FdOf(part), BaseOf(part) + offset, out,
                             absl::StrCat(digest_text(), " ", file)));
  if (n < out.size()) {
    return Damaged(digest_text(),
                   absl::StrCat(file, " file ends at offset ", offset + n,
                                ", short of its recorded size ", file_size));
  }
  return absl::OkStatus();
}

absl::Status FileBlob::Rewrite(BlobPart part, uint64_t offset,
                               absl::Span<const uint8_t> bytes) const {
  RETURN_IF_ERROR(CheckReadRange(*this, part, offset, bytes.size()));
  const std::string path = record_.has_value()
                               ? path_
                               : JoinPath(path_, std::string(PartName(part)));
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(fs_, path, O_WRONLY | O_NOFOLLOW));
  RETURN_IF_ERROR(PwriteAll(fs_, fd.get(), BaseOf(part) + offset, bytes, path));
  RETURN_IF_ERROR(fs_.Fsync(fd.get(), path));
  return fd.Close(path);
}

int FileBlob::FdOf(BlobPart part) const {
  switch (part) {
    case BlobPart::kData:
      return files_.data.get();
    case BlobPart::kTree:
      return record_.has_value() ? files_.data.get() : files_.tree.get();
    case BlobPart::kFec:
      return record_.has_value() && fec_roots() != 0 ? files_.data.get()
                                                     : files_.fec.get();
  }
  return -1;
}

}  // namespace verity::server

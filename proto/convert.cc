// Maps field by field. The enums share lib's numbers (fs-verity's for hash
// algorithms, IOPRIO_CLASS_* for priority classes), so they are converted by
// value after a range check.

#include "proto/convert.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tree/dm_verity.h"

namespace verity {

// Both follow IOPRIO_CLASS_*, so a class converts by value.
static_assert(static_cast<int>(PriorityClass::kNone) ==
              verity::v1::PRIORITY_CLASS_NONE);
static_assert(static_cast<int>(PriorityClass::kRt) ==
              verity::v1::PRIORITY_CLASS_RT);
static_assert(static_cast<int>(PriorityClass::kBe) ==
              verity::v1::PRIORITY_CLASS_BE);
static_assert(static_cast<int>(PriorityClass::kIdle) ==
              verity::v1::PRIORITY_CLASS_IDLE);
static_assert(kNumPriorityClasses == verity::v1::PriorityClass_ARRAYSIZE);

verity::v1::PriorityClass PriorityClassToProto(PriorityClass priority) {
  return static_cast<verity::v1::PriorityClass>(priority);
}

absl::StatusOr<PriorityClass> PriorityClassFromProto(int priority) {
  if (!verity::v1::PriorityClass_IsValid(priority)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown priority class ", priority));
  }
  return static_cast<PriorityClass>(priority);
}

verity::v1::HashAlgorithm HashAlgorithmToProto(HashAlgorithm algorithm) {
  return static_cast<verity::v1::HashAlgorithm>(algorithm);
}

namespace {

// A descriptor's algorithm: unlike in TreeParams, 0 is none, not the default.
absl::StatusOr<HashAlgorithm> DescriptorAlgorithm(int algorithm) {
  if (algorithm < 0 || algorithm > 255 ||
      !IsValidHashAlgorithm(static_cast<uint8_t>(algorithm))) {
    return absl::DataLossError(
        absl::StrCat("descriptor names unknown hash algorithm ", algorithm));
  }
  return static_cast<HashAlgorithm>(algorithm);
}

}  // namespace

absl::StatusOr<Descriptor> DescriptorFromProto(
    const verity::v1::FsverityDescriptor& proto) {
  ASSIGN_OR_RETURN(const HashAlgorithm algorithm,
                   DescriptorAlgorithm(proto.hash_algorithm()));
  if (proto.log_block_size() > 255) {
    return absl::DataLossError(absl::StrCat("descriptor log_block_size ",
                                            proto.log_block_size(),
                                            " does not fit the format"));
  }
  Descriptor descriptor;
  descriptor.hash_algorithm = algorithm;
  descriptor.log_block_size = static_cast<uint8_t>(proto.log_block_size());
  descriptor.salt = proto.salt();
  descriptor.data_size = proto.data_size();
  descriptor.root_hash = proto.root_hash();
  // Sizes of salt and root hash are checked when the descriptor is hashed.
  return descriptor;
}

verity::v1::FsverityDescriptor DescriptorToProto(const Descriptor& descriptor) {
  verity::v1::FsverityDescriptor proto;
  proto.set_hash_algorithm(HashAlgorithmToProto(descriptor.hash_algorithm));
  proto.set_log_block_size(descriptor.log_block_size);
  proto.set_salt(descriptor.salt);
  proto.set_data_size(descriptor.data_size);
  proto.set_root_hash(descriptor.root_hash);
  return proto;
}

absl::StatusOr<Descriptor> DescriptorFromProto(
    const verity::v1::DmVerityDescriptor& proto) {
  ASSIGN_OR_RETURN(const HashAlgorithm algorithm,
                   DescriptorAlgorithm(proto.hash_algorithm()));
  DmVerityParams params;
  params.algorithm = algorithm;
  params.data_block_size = proto.data_block_size();
  params.hash_block_size = proto.hash_block_size();
  params.salt = proto.salt();
  absl::StatusOr<Descriptor> descriptor =
      DmVerityDescriptorOf(params, proto.data_blocks(), proto.root_hash());
  if (!descriptor.ok()) {
    return absl::DataLossError(descriptor.status().message());
  }
  return descriptor;
}

verity::v1::DmVerityDescriptor DmVerityDescriptorToProto(
    const Descriptor& descriptor) {
  verity::v1::DmVerityDescriptor proto;
  const uint32_t block_size = uint32_t{1} << (descriptor.log_block_size & 31);
  proto.set_hash_algorithm(HashAlgorithmToProto(descriptor.hash_algorithm));
  proto.set_data_block_size(block_size);
  proto.set_hash_block_size(block_size);
  proto.set_salt(descriptor.salt);
  proto.set_data_blocks(descriptor.data_size / block_size);
  proto.set_root_hash(descriptor.root_hash);
  return proto;
}

namespace {

template <typename Message>
void SetDescriptorIn(const Descriptor& descriptor, Message* message) {
  if (descriptor.format == TreeFormat::kDmVerity) {
    message->clear_fsverity_descriptor();
    *message->mutable_dm_verity_descriptor() =
        DmVerityDescriptorToProto(descriptor);
  } else {
    message->clear_dm_verity_descriptor();
    *message->mutable_fsverity_descriptor() = DescriptorToProto(descriptor);
  }
}

template <typename Message>
absl::StatusOr<Descriptor> DescriptorIn(const Message& message) {
  if (message.has_fsverity_descriptor() == message.has_dm_verity_descriptor()) {
    return absl::DataLossError(
        message.has_fsverity_descriptor()
            ? "the server sent both an fs-verity and a dm-verity descriptor"
            : "the server sent no descriptor");
  }
  return message.has_fsverity_descriptor()
             ? DescriptorFromProto(message.fsverity_descriptor())
             : DescriptorFromProto(message.dm_verity_descriptor());
}

}  // namespace

void SetDescriptor(const Descriptor& descriptor, verity::v1::BlobInfo* info) {
  SetDescriptorIn(descriptor, info);
}

void SetDescriptor(const Descriptor& descriptor,
                   verity::v1::ReadResponse* response) {
  SetDescriptorIn(descriptor, response);
}

absl::StatusOr<Descriptor> DescriptorOf(const verity::v1::BlobInfo& info) {
  return DescriptorIn(info);
}

absl::StatusOr<Descriptor> DescriptorOf(
    const verity::v1::ReadResponse& response) {
  return DescriptorIn(response);
}

bool HasDescriptor(const verity::v1::ReadResponse& response) {
  return response.has_fsverity_descriptor() ||
         response.has_dm_verity_descriptor();
}

verity::v1::TreeParams TreeParamsToProto(const MerkleParams& params) {
  verity::v1::TreeParams proto;
  proto.set_hash_algorithm(HashAlgorithmToProto(params.hash_algorithm));
  proto.set_block_size(params.block_size);
  proto.set_salt(params.salt);
  if (params.format == TreeFormat::kDmVerity) {
    proto.set_format(verity::v1::TREE_FORMAT_DM_VERITY);
  }
  return proto;
}

absl::StatusOr<MerkleParams> TreeParamsFromProto(
    const verity::v1::TreeParams& proto) {
  MerkleParams params;
  const int algorithm = proto.hash_algorithm();
  if (algorithm != verity::v1::HASH_ALGORITHM_UNSPECIFIED) {
    if (algorithm < 0 || algorithm > 255 ||
        !IsValidHashAlgorithm(static_cast<uint8_t>(algorithm))) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown hash algorithm ", algorithm));
    }
    params.hash_algorithm = static_cast<HashAlgorithm>(algorithm);
  }
  if (proto.block_size() != 0) params.block_size = proto.block_size();
  params.salt = proto.salt();
  switch (proto.format()) {
    case verity::v1::TREE_FORMAT_FSVERITY:
      break;
    case verity::v1::TREE_FORMAT_DM_VERITY:
      params.format = TreeFormat::kDmVerity;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("unknown tree format ", proto.format()));
  }
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  return params;
}

}  // namespace verity

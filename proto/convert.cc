// Maps field by field. The enums share lib's numbers (fs-verity's for hash
// algorithms, IOPRIO_CLASS_* for priority classes), so they are converted by
// value after a range check.

#include "proto/convert.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/status_macros.h"

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

absl::StatusOr<Descriptor> DescriptorFromProto(
    const verity::v1::FsverityDescriptor& proto) {
  const int algorithm = proto.hash_algorithm();
  if (algorithm < 0 || algorithm > 255 ||
      !IsValidHashAlgorithm(static_cast<uint8_t>(algorithm))) {
    return absl::DataLossError(
        absl::StrCat("descriptor names unknown hash algorithm ", algorithm));
  }
  if (proto.log_block_size() > 255) {
    return absl::DataLossError(absl::StrCat("descriptor log_block_size ",
                                            proto.log_block_size(),
                                            " does not fit the format"));
  }
  Descriptor descriptor;
  descriptor.hash_algorithm = static_cast<HashAlgorithm>(algorithm);
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

verity::v1::TreeParams TreeParamsToProto(const MerkleParams& params) {
  verity::v1::TreeParams proto;
  proto.set_hash_algorithm(HashAlgorithmToProto(params.hash_algorithm));
  proto.set_block_size(params.block_size);
  proto.set_salt(params.salt);
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
  RETURN_IF_ERROR(ValidateMerkleParams(params));
  return params;
}

}  // namespace verity

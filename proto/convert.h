// Conversions between the wire messages of verity.v1 and lib's types. Anything
// read from the wire is untrusted: a descriptor that cannot exist is DATA_LOSS.

#ifndef VERITYD_PROTO_CONVERT_H_
#define VERITYD_PROTO_CONVERT_H_

#include "absl/status/statusor.h"
#include "lib/base/priority_class.h"
#include "lib/tree/descriptor.h"
#include "lib/tree/merkle_params.h"
#include "proto/verity/v1/verity.pb.h"

namespace verity {

verity::v1::HashAlgorithm HashAlgorithmToProto(HashAlgorithm algorithm);

// DATA_LOSS if a field cannot be part of an fs-verity descriptor. Unlike in
// TreeParams, HASH_ALGORITHM_UNSPECIFIED is refused: a descriptor is the exact
// on-disk struct, in which 0 is no algorithm.
absl::StatusOr<Descriptor> DescriptorFromProto(
    const verity::v1::FsverityDescriptor& proto);

verity::v1::FsverityDescriptor DescriptorToProto(const Descriptor& descriptor);

// The same for a dm-verity blob's descriptor (format kDmVerity): DATA_LOSS if
// it cannot describe a tree verityd stores (unequal block sizes, a size that
// overflows, ...).
absl::StatusOr<Descriptor> DescriptorFromProto(
    const verity::v1::DmVerityDescriptor& proto);
verity::v1::DmVerityDescriptor DmVerityDescriptorToProto(
    const Descriptor& descriptor);

// A BlobInfo or a Read stream's first message carries one descriptor, in the
// field of its format. Sets it (and clears the other).
void SetDescriptor(const Descriptor& descriptor, verity::v1::BlobInfo* info);
void SetDescriptor(const Descriptor& descriptor,
                   verity::v1::ReadResponse* response);
// The descriptor it carries; DATA_LOSS unless it carries exactly one, valid.
absl::StatusOr<Descriptor> DescriptorOf(const verity::v1::BlobInfo& info);
absl::StatusOr<Descriptor> DescriptorOf(
    const verity::v1::ReadResponse& response);
// Whether it carries either descriptor.
bool HasDescriptor(const verity::v1::ReadResponse& response);

// Spells out every parameter, defaults included, so the server cannot read
// an unset field differently.
verity::v1::TreeParams TreeParamsToProto(const MerkleParams& params);

// Applies fs-verity's defaults to unset fields; INVALID_ARGUMENT if the format
// is unknown or the result fails ValidateMerkleParams.
absl::StatusOr<MerkleParams> TreeParamsFromProto(
    const verity::v1::TreeParams& proto);

// The one mapping between lib's priority classes and the wire's; the SDK's
// public enum maps to lib's first (client/sdk/sdk_convert.h).
verity::v1::PriorityClass PriorityClassToProto(PriorityClass priority);

// INVALID_ARGUMENT for a number the protocol does not define: proto3 keeps an
// unknown enum value as it came.
absl::StatusOr<PriorityClass> PriorityClassFromProto(int priority);

}  // namespace verity

#endif  // VERITYD_PROTO_CONVERT_H_

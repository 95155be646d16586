"""gRPC C++ stubs from Debian's protoc and grpc_cpp_plugin (no gRPC Bazel rules offline)."""

def cc_grpc_library(name, proto, cc_proto, visibility = None, testonly = False):
    """Generates <proto>.grpc.pb.{h,cc} for one .proto file in this package.

    Args:
      name: the cc_library holding the stubs.
      proto: the .proto file (a label in this package).
      cc_proto: the cc_proto_library of the same proto_library.
      visibility: visibility of the stubs library.
      testonly: whether only tests may depend on it.
    """
    base = proto[:-len(".proto")]
    native.genrule(
        name = name + "_gen",
        srcs = [proto],
        outs = [base + ".grpc.pb.h", base + ".grpc.pb.cc"],
        cmd = ("$(location @com_google_protobuf//:protoc) -I. " +
               "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " +
               "--grpc_out=$(GENDIR) $(location %s)") % proto,
        tools = ["@com_google_protobuf//:protoc"],
        testonly = testonly,
    )
    native.cc_library(
        name = name,
        srcs = [base + ".grpc.pb.cc"],
        hdrs = [base + ".grpc.pb.h"],
        deps = [cc_proto, "//third_party:grpcpp"],
        visibility = visibility,
        testonly = testonly,
    )

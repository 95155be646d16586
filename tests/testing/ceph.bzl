"""Tests against a real single-node Ceph (tests/testing/ceph_cluster.sh)."""

def ceph_cc_test(name, srcs, deps, size = "medium", tags = []):
    """A C++ test program run by with_ceph.sh, which starts a Ceph around it.

    The program gets S3_ENDPOINT, S3_BUCKET, AWS_REGION, the credentials and CEPH_DIR in its
    environment. Tagged "ceph": it needs Debian's ceph-mon, ceph-osd and radosgw.

    Args:
      name: the sh_test; the program is NAME_bin.
      srcs: the program's sources.
      deps: the program's dependencies.
      size: the test's size.
      tags: more tags (e.g. "manual").
    """
    native.cc_binary(
        name = name + "_bin",
        testonly = True,
        srcs = srcs,
        deps = deps,
    )
    native.sh_test(
        name = name,
        size = size,
        srcs = ["//tests/testing:with_ceph.sh"],
        args = ["$(location :%s_bin)" % name],
        data = [
            ":%s_bin" % name,
            "//tests/testing:ceph_cluster",
        ],
        tags = ["ceph"] + tags,
    )

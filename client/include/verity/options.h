// The options of the verity SDK: how a Client connects and retries, and what
// each call reads or stores. Plain structs; every default is written here.

#ifndef VERITYD_CLIENT_INCLUDE_VERITY_OPTIONS_H_
#define VERITYD_CLIENT_INCLUDE_VERITY_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "verity/digest.h"

namespace verity::sdk {

// The Linux I/O priority classes (IOPRIO_CLASS_*) the server reads with.
enum class PriorityClass : uint8_t {
  kUnset = 0,  // the server's default, best effort
  kRealtime = 1,
  kBestEffort = 2,
  kIdle = 3,
};

// How a broken read stream is resumed. Only transport failures are retried
// (UNAVAILABLE, DEADLINE_EXCEEDED of one attempt, ABORTED, CANCELLED by the
// peer, RESOURCE_EXHAUSTED, INTERNAL); DATA_LOSS, NOT_FOUND,
// INVALID_ARGUMENT and OUT_OF_RANGE never are. Retrying is safe because a
// resumed stream is verified like the first.
struct RetryPolicy {
  // Attempts in a row, per stream, that verify no new byte before the error
  // is returned; the count restarts whenever a stream makes progress, so a
  // large transfer over a flaky link finishes while a dead server fails
  // fast. 1 disables retries.
  int max_attempts = 5;
  // The first delay; each further one is `multiplier` times longer, up to
  // `max_backoff`.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  double multiplier = 2.0;
  // Each delay is scaled by a random factor in [1 - jitter, 1 + jitter], so
  // that clients cut off together do not come back together.
  double jitter = 0.2;
};

// TLS settings. Each PEM value is given either inline (`*_pem`) or as a
// file to read (`*_file`), not both.
struct TlsOptions {
  // The CA certificates that may sign the server's certificate; empty for
  // gRPC's default roots.
  std::string root_certs_pem;
  std::string root_certs_file;
  // A client certificate chain and its private key, for mutual TLS: both or
  // neither.
  std::string cert_chain_pem;
  std::string cert_chain_file;
  std::string private_key_pem;
  std::string private_key_file;
};

struct ClientOptions {
  // "host:port", "dns:///name:port" (every address the name resolves to,
  // balanced round robin), or any other gRPC target such as "unix:/path".
  std::string target;
  // Unset for plaintext.
  std::optional<TlsOptions> tls;
  // If set, sent as `authorization: Bearer TOKEN` on every call, for a server
  // run with --auth_tokens. Only over TLS, or in plaintext to a loopback or
  // unix-socket target (INVALID_ARGUMENT otherwise), as the server requires.
  std::string bearer_token;
  // The priority of reads that do not set their own.
  PriorityClass default_priority = PriorityClass::kUnset;
  // Deadline of each RPC attempt. A read stream that hits it is resumed
  // where it stopped, so for reads this bounds how long a stalled stream
  // goes unnoticed rather than how large a blob can be. A Put is one
  // attempt, so a large one needs room. Zero means none.
  absl::Duration rpc_timeout = absl::Seconds(60);
  RetryPolicy retry;
  // Verified Merkle tree blocks kept across calls, least recently used blob
  // evicted first. A blob's tree is about 1/128 of its size (SHA-256, 4 KiB
  // blocks), so the default holds the trees of 8 GiB of data. Zero keeps
  // trees only for the duration of a call.
  uint64_t tree_cache_bytes = uint64_t{64} << 20;
  // The largest message accepted from the server; bounds the memory one
  // stream can make the client hold.
  int max_message_bytes = 16 << 20;
  // Each stream's HTTP/2 flow-control window: how many bytes the server may
  // send ahead of what the client has read. Fixed (gRPC's BDP probing, which
  // grows windows without bound on a fast link, is off), it bounds the
  // memory a stream holds in flight; 4 MiB keeps a loopback or LAN stream
  // full. From 64 KiB to 1 GiB (INVALID_ARGUMENT otherwise).
  int receive_window_bytes = 4 << 20;
  // Keeps freed receive buffers in the process for the next message instead
  // of returning them to the kernel and faulting them in again, message
  // after message: Create() raises glibc's trim and mmap thresholds (never
  // lowers them; process-wide, as they are) to 8 receive windows, at most 32
  // MiB for the mmap threshold. A no-op with another allocator.
  bool retain_receive_memory = true;

  // Signed names (README, "Who says which digest a name means"; the
  // statement and its checks are in docs/protocol.md). The text of a PEM
  // file holding the Ed25519 public keys ("PUBLIC KEY" blocks, as `openssl
  // pkey -pubout` writes them) trusted to sign name statements. Empty turns
  // the checks off: a name then means whatever digest the server says.
  // When set, FetchName and StatName accept a name only with a statement
  // signed by `trusted_keys_threshold` of these keys, naming it exactly,
  // current (5 minutes of clock skew allowed either way), binding the
  // digest the server names, and not older than the newest this client has
  // seen for the name under these keys; each refusal is DATA_LOSS saying
  // which check failed. Fetches by digest need no statement.
  std::string trusted_keys;
  // How many distinct trusted keys must sign a statement: from 1 to the
  // number of keys (INVALID_ARGUMENT otherwise).
  int trusted_keys_threshold = 1;
  // Where the newest statement version seen per name is kept, one file per
  // trusted key (names-<key id>.seen, written atomically under a lock), a
  // statement recorded in the files of the trusted keys that signed it (so
  // removing a stolen key drops the versions it alone raised), shared by
  // every client using the directory. Empty
  // means $XDG_STATE_HOME/verity, else $HOME/.local/state/verity. Only used
  // with trusted keys.
  std::string state_dir;
  // The transparency log (README, "Every release on the record"): the
  // note verifier key of the server's log ("<origin>+<id>+<key>", as
  // `verity keygen --log-origin` writes it to FILE.vkey). When set,
  // FetchName and StatName accept a name only with a statement that the
  // server proves is in the log, under a checkpoint signed by this key and
  // consistent with the newest one seen (kept in state_dir, with evidence
  // of any contradiction); each refusal is DATA_LOSS saying which check
  // failed. Empty: no check.
  std::string log_key;
  // Witnesses (README, "Every release on the record"): their cosignature
  // verifier keys, one per line ("<name>+<id>+<key>", as `verity keygen
  // --witness-name` writes FILE.vkey; blank and '#' lines skipped). With
  // log_key, a checkpoint is accepted only with valid cosignatures
  // (C2SP tlog-cosignature) by witness_threshold distinct keys of them, so
  // that a log showing this client a view of its own needs that many
  // witnesses to collude; DATA_LOSS otherwise. Empty: none needed.
  std::string witness_keys;
  // From 1 to the number of witness keys (INVALID_ARGUMENT otherwise).
  int witness_threshold = 1;
  // A name this client has no record of in state_dir (a fresh one: a new
  // pod's) is accepted only with a statement issued at most this long ago,
  // so that a store writer cannot serve it any statement still short of
  // its expiry (DATA_LOSS otherwise). The publisher then re-signs at least
  // this often, as TUF's timestamp role is. Infinite: no limit.
  absl::Duration max_unseen_statement_age = absl::InfiniteDuration();

  // fs-verity built-in signatures: the text of a PEM file of X.509
  // certificates ("CERTIFICATE" blocks) whose keys may sign blobs with
  // `fsverity sign`. Empty turns the check off. When set, every fetch
  // (Fetch, FetchName), whether it reads a byte or none (an empty range),
  // and every Stat and StatName requires the blob's detached signature,
  // which the server returns with each Read and Stat, to verify for the
  // blob's digest with one of these certificates (pinned: no chain is
  // checked); otherwise it fails with DATA_LOSS before any byte reaches the
  // sink. A signature binds content, not a name: by name, it proves that a
  // pinned key signed the blob, not that it meant it for this name (trusted
  // keys do that). Verifying uses the system's OpenSSL 3 (libcrypto.so.3).
  std::string fsverity_certs;
};

struct FetchOptions {
  // The range [offset, offset + *length), or [offset, end of blob) without a
  // length. OUT_OF_RANGE if it does not lie inside the blob.
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  // Unset: ClientOptions::default_priority.
  std::optional<PriorityClass> priority;
  // Splits the range into up to this many contiguous parts (whole blocks, at
  // least one block each) fetched over concurrent streams, each resumed on
  // its own. From 1 to 64.
  int parallel_streams = 1;
  // Ends the whole fetch, retries included, with DEADLINE_EXCEEDED.
  absl::Time deadline = absl::InfiniteFuture();
};

struct PutOptions {
  // The tree parameters, as `fsverity digest` takes them: a power of two
  // from 1024 to 65536 for the block size, at most 32 bytes of salt. With
  // kDmVerity, as `veritysetup format` takes them (the block size both its
  // data and hash block size, up to 256 bytes of salt): the content must be
  // whole blocks, and the result's root_hash is the root hash veritysetup
  // prints.
  DigestAlgorithm hash_algorithm = DigestAlgorithm::kSha256;
  uint32_t block_size = 4096;
  std::string salt;
  TreeFormat format = TreeFormat::kFsVerity;
  // If set, the name then refers to the new blob.
  std::string name;
  // With `name` only: a signed statement binding `name` to the content's
  // digest (lib/trust/name_statement.h's SignNameStatement makes one), stored
  // with the name. A server run with --name_keys requires one.
  std::string name_statement;
  // A detached fs-verity signature of the content's digest, as `fsverity
  // sign` writes it (DER PKCS#7), stored with the blob.
  std::string fsverity_signature;
  // If set, the server stores nothing unless the content has this digest
  // (DATA_LOSS otherwise).
  std::optional<Digest> expected_digest;
  // The content is a tree manifest (verity/tree.h's PutTree sends one): the
  // server parses it and stores it only if every file it lists is stored
  // with its size (FAILED_PRECONDITION naming a missing one).
  bool tree_manifest = false;
  // Threads hashing a file before it is sent; the upload itself is one
  // stream.
  int hash_threads = 1;
  // Content bytes per message, at most 4 MiB.
  size_t chunk_bytes = size_t{1} << 20;
};

}  // namespace verity::sdk

#endif  // VERITYD_CLIENT_INCLUDE_VERITY_OPTIONS_H_

// Implements ReadStream: events are recorded under the lock; steps are taken
// outside it by one thread at a time.

#include "server/rpc/read_stream.h"

#include <utility>

namespace verity::server {

std::shared_ptr<ReadStream> ReadStream::Create(
    ChunkReader* reader, ReadStreamOutput* output,
    const ReadStreamOptions& options) {
  return std::shared_ptr<ReadStream>(new ReadStream(reader, output, options));
}

ReadStream::ReadStream(ChunkReader* reader, ReadStreamOutput* output,
                       const ReadStreamOptions& options)
    : reader_(reader), output_(output), options_(options) {}

void ReadStream::Start(absl::StatusOr<Opened> opened) {
  // Outside the lock: it starts the store's reads of the tree.
  if (opened.ok()) reader_->Begin(*opened->job);
  Event event{Event::Kind::kStart, opened.status(), std::nullopt};
  if (opened.ok()) event.opened = *std::move(opened);
  Handle(std::move(event));
}

void ReadStream::OnWriteDone(absl::Status status) {
  Handle({Event::Kind::kWriteDone, std::move(status), std::nullopt});
}

void ReadStream::OnCancel() {
  Handle({Event::Kind::kCancel, absl::CancelledError("the client went away"),
          std::nullopt});
}

void ReadStream::Handle(Event event) {
  // Whoever else lets go of the stream as it ends, it lives until this
  // thread is done with it.
  const std::shared_ptr<ReadStream> self = shared_from_this();
  mu_.Lock();
  Apply(std::move(event));
  if (taking_steps_) {
    mu_.Unlock();
    return;
  }
  taking_steps_ = true;
  for (;;) {
    Step step = Claim();
    if (step.kind == Step::Kind::kNone) break;
    mu_.Unlock();
    std::optional<Event> outcome = Take(std::move(step));
    mu_.Lock();
    if (outcome.has_value()) Apply(*std::move(outcome));
  }
  taking_steps_ = false;
  mu_.Unlock();
}

void ReadStream::Apply(Event event) {
  switch (event.kind) {
    case Event::Kind::kStart:
      ApplyStart(std::move(event.status), std::move(event.opened));
      return;
    case Event::Kind::kChunkRead:
      ApplyChunkRead(event.status);
      return;
    case Event::Kind::kWriteDone:
      writing_ = false;
      if (!event.status.ok()) {
        // The client went away, cancelled or stalled: stop reading and
        // verifying at once.
        if (job_ != nullptr) job_->Cancel();
        EndWith(event.status);
      }
      return;
    case Event::Kind::kCancel:
      cancelled_ = true;
      if (job_ != nullptr) job_->Cancel();
      EndWith(event.status);
      return;
  }
}

void ReadStream::ApplyStart(absl::Status status, std::optional<Opened> opened) {
  started_ = true;
  if (!status.ok()) {
    EndWith(status);
    return;
  }
  job_ = std::move(opened->job);
  proofs_.emplace(std::move(opened->proofs));
  const uint64_t block_size = job_->blob().geometry().block_size();
  window_.emplace(options_.chunk_bytes / block_size,
                  options_.max_chunk_bytes / block_size, block_size,
                  options_.budget);
  all_read_ = job_->done();
  // A cancel recorded before the job existed reaches it now.
  if (cancelled_) job_->Cancel();
}

void ReadStream::ApplyChunkRead(const absl::Status& status) {
  reading_ = false;
  // Every chunk but the first was started while a message was being sent:
  // if that is done, the client is waiting for this one.
  window_->OnChunkRead(/*client_waiting=*/!writing_);
  if (!status.ok()) {
    EndWith(status);
    return;
  }
  if (end_.has_value()) return;  // nothing more is sent
  ready_ = ReadyChunk{job_->chunk_blocks(), job_->TakeChunk()};
  all_read_ = job_->done();
}

ReadStream::Step ReadStream::Claim() {
  Step step;
  if (finished_ || !started_) return step;
  if (end_.has_value()) {
    if (reading_ || writing_) return step;
    finished_ = true;
    step.kind = Step::Kind::kFinish;
    step.status = *end_;
    return step;
  }
  if (!writing_ && (ready_.has_value() || (!sent_first_ && all_read_))) {
    writing_ = true;
    step.kind = Step::Kind::kWrite;
    step.job = job_;
    step.first = !sent_first_;
    sent_first_ = true;
    step.chunk = std::move(ready_);
    ready_.reset();
    if (step.chunk.has_value()) {
      step.tree_blocks = proofs_->ForChunk(step.chunk->blocks);
    }
    return step;
  }
  if (!reading_ && !ready_.has_value() && !all_read_) {
    reading_ = true;
    step.kind = Step::Kind::kRead;
    step.job = job_;
    step.chunk_blocks = window_->blocks();
    return step;
  }
  if (all_read_ && sent_first_ && !ready_.has_value() && !writing_) {
    EndWith(absl::OkStatus());
    return Claim();
  }
  return step;
}

std::optional<ReadStream::Event> ReadStream::Take(Step step) {
  switch (step.kind) {
    case Step::Kind::kRead:
      return Read(std::move(step));
    case Step::Kind::kWrite:
      return Write(std::move(step));
    case Step::Kind::kFinish:
      output_->Finish(step.status);
      return std::nullopt;
    case Step::Kind::kNone:
      break;
  }
  return std::nullopt;
}

std::optional<ReadStream::Event> ReadStream::Read(Step step) {
  ReadJob& job = *step.job;
  job.StartChunk(step.chunk_blocks);
  std::optional<absl::Status> now = reader_->TryReadNow(job);
  if (now.has_value()) {
    if (now->ok()) output_->ChunkRead(job.chunk()->data_bytes());
    return Event{Event::Kind::kChunkRead, *std::move(now), std::nullopt};
  }
  // The stream cannot end while the read is in flight, so the output is
  // still there when it completes.
  reader_->ReadLater(step.job, [self = shared_from_this(),
                                job = step.job](absl::Status status) {
    if (status.ok()) self->output_->ChunkRead(job->chunk()->data_bytes());
    self->Handle({Event::Kind::kChunkRead, std::move(status), std::nullopt});
  });
  return std::nullopt;
}

std::optional<ReadStream::Event> ReadStream::Write(Step step) {
  ReadMessage message;
  message.first = step.first;
  if (step.chunk.has_value()) {
    const VerifiedBlob& blob = step.job->blob();
    for (const TreeBlockId& id : step.tree_blocks) {
      absl::StatusOr<std::string> bytes = reader_->TreeBlock(blob, id);
      if (!bytes.ok()) {
        return Event{Event::Kind::kWriteDone, bytes.status(), std::nullopt};
      }
      message.tree_blocks.push_back(
          {blob.geometry().Ordinal(id), *std::move(bytes)});
    }
    message.data_offset =
        step.chunk->blocks.first * blob.geometry().block_size();
    message.data = std::move(step.chunk->data);
  }
  output_->StartWrite(std::move(message));
  return std::nullopt;
}

void ReadStream::EndWith(const absl::Status& status) {
  if (!end_.has_value()) end_ = status;
}

}  // namespace verity::server

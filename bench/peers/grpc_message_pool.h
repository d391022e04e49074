// grpc_message_pool.h - gRPC's own buffer reuse for callback servers: a
// grpc::MessageAllocator that hands out request/response pairs from a free
// list instead of allocating them per RPC. A released pair is Clear()ed,
// which keeps the capacity of its bytes fields, so a 256 MiB echo reuses
// memory that is already mapped instead of faulting in new pages each call.
#ifndef NINF_BENCH_GRPC_MESSAGE_POOL_H
#define NINF_BENCH_GRPC_MESSAGE_POOL_H

#include <grpcpp/support/message_allocator.h>

#include <memory>
#include <mutex>
#include <vector>

template <typename Request, typename Response>
class MessagePool final : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) {
      owned_.push_back(std::make_unique<Holder>(this));
      return owned_.back().get();
    }
    Holder* holder = free_.back();
    free_.pop_back();
    return holder;
  }

 private:
  // One pair of messages; gRPC calls Release() when the RPC is done.
  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    explicit Holder(MessagePool* pool) : pool_(pool) {
      this->set_request(&request_);
      this->set_response(&response_);
    }
    void Release() override {
      request_.Clear();
      response_.Clear();
      pool_->Put(this);
    }

   private:
    MessagePool* pool_;
    Request request_;
    Response response_;
  };

  void Put(Holder* holder) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(holder);
  }

  std::mutex mutex_;
  std::vector<std::unique_ptr<Holder>> owned_;  // every pair ever made
  std::vector<Holder*> free_;                   // the ones not in an RPC
};

#endif  // NINF_BENCH_GRPC_MESSAGE_POOL_H

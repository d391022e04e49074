#include "daemon/request_reader.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace ninf::daemon {
namespace {

constexpr std::size_t kChunk = 64 * 1024;

}  // namespace

const RequestRules::Frame *RequestRules::Find(uint16_t type) const {
  for (const Frame &f : frames)
    if (f.type == type) return &f;
  return nullptr;
}

std::span<uint8_t> RequestReader::Space() {
  switch (stage_) {
    case Stage::kFixed:
      return {fixed_ + fixed_filled_, kFrameHeaderSize - fixed_filled_};
    case Stage::kBody: {
      std::size_t remaining = header_.header_length - body_filled_;
      std::size_t take = std::min(remaining, kChunk);
      if (body_.size() < body_filled_ + take) body_.resize(body_filled_ + take);
      return {reinterpret_cast<uint8_t *>(body_.data()) + body_filled_, take};
    }
    case Stage::kDrop: {
      if (scratch_.empty()) scratch_.resize(kChunk);
      std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(drop_left_, kChunk));
      return {reinterpret_cast<uint8_t *>(scratch_.data()), take};
    }
    case Stage::kComplete:
      return {};
  }
  return {};
}

Status RequestReader::Commit(std::size_t n) {
  if (stage_ == Stage::kFixed) {
    assert(fixed_filled_ + n <= kFrameHeaderSize);
    fixed_filled_ += n;
    if (fixed_filled_ == kFrameHeaderSize) return FinishFixed();
    return Status::Ok();
  }
  if (stage_ == Stage::kBody) {
    assert(body_filled_ + n <= header_.header_length);
    body_filled_ += n;
    if (body_filled_ == header_.header_length) FinishBody();
  } else if (stage_ == Stage::kDrop) {
    assert(n <= drop_left_);
    drop_left_ -= n;
    if (drop_left_ == 0) stage_ = Stage::kComplete;
  }
  return Status::Ok();
}

void RequestReader::FinishBody() {
  drop_left_ = header_.payload_length;
  stage_ = drop_left_ > 0 ? Stage::kDrop : Stage::kComplete;
}

Status RequestReader::FinishFixed() {
  // Decoded without a payload bound, so that a payload gets the clearer
  // message below instead of "over the limit of 0".
  NINF_RETURN_IF_ERROR(DecodeFrameHeader(fixed_, std::numeric_limits<uint64_t>::max(), &header_));
  const std::string daemon = rules_->daemon;
  const RequestRules::Frame *rule = rules_->Find(header_.type);
  if (!rule)
    return Status(NINF_ERR_PROTOCOL,
                  daemon + " does not accept " + FrameTypeName(header_.type) + " frames");
  const uint64_t max_payload = rule->max_payload;
  if (header_.payload_length > max_payload)
    return Status(NINF_ERR_PROTOCOL,
                  std::string(FrameTypeName(header_.type)) + " frame with a payload of " +
                      std::to_string(header_.payload_length) + " bytes; requests to " + daemon +
                      (max_payload ? " carry at most " + std::to_string(max_payload)
                                   : std::string(" carry none")));
  if (header_.header_length > rule->max_header)
    return Status(NINF_ERR_PROTOCOL, "request header of " + std::to_string(header_.header_length) +
                                         " bytes is over " + daemon + "'s limit of " +
                                         std::to_string(rule->max_header));
  body_.clear();
  body_filled_ = 0;
  if (header_.header_length == 0)
    FinishBody();
  else
    stage_ = Stage::kBody;
  return Status::Ok();
}

void RequestReader::Reset() {
  stage_ = Stage::kFixed;
  fixed_filled_ = 0;
  header_ = FrameHeader{};
  body_.clear();
  body_filled_ = 0;
  drop_left_ = 0;
}

}  // namespace ninf::daemon

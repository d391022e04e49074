#include "protocol/frame.h"

#include <bit>
#include <cstring>
#include <string>
#include <string_view>

#include "ninf.pb.h"

namespace ninf {
namespace {

void PutLe(uint8_t *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLe(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

constexpr uint8_t HostOrderFlag() {
  return std::endian::native == std::endian::little ? kFlagLittleEndian : 0;
}

}  // namespace

const char *FrameTypeName(uint16_t type) {
  switch (type) {
#define NINF_FRAME_NAME_(name, value) \
  case name:                          \
    return #name + 6;  // without "FRAME_"
    NINF_FRAME_MAP(NINF_FRAME_NAME_)
#undef NINF_FRAME_NAME_
  }
  return "UNKNOWN";
}

void EncodeFrameHeader(const FrameHeader &h, uint8_t out[kFrameHeaderSize]) {
  std::memcpy(out, kMagic, 4);
  out[4] = kProtocolVersion;
  out[5] = static_cast<uint8_t>((h.flags & ~kFlagLittleEndian) | HostOrderFlag());
  PutLe(out + 6, h.type, 2);
  PutLe(out + 8, h.header_length, 4);
  PutLe(out + 12, 0, 4);
  PutLe(out + 16, h.payload_length, 8);
}

Status DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], uint64_t max_payload,
                         FrameHeader *out) {
  if (std::memcmp(in, kMagic, 4) != 0)
    return Status(NINF_ERR_PROTOCOL, "bad magic: not a Ninf peer");
  if (in[4] != kProtocolVersion)
    return Status(NINF_ERR_VERSION, "peer speaks protocol version " + std::to_string(in[4]) +
                                        ", this side speaks " + std::to_string(kProtocolVersion));
  FrameHeader h;
  h.flags = in[5];
  h.type = static_cast<uint16_t>(GetLe(in + 6, 2));
  h.header_length = static_cast<uint32_t>(GetLe(in + 8, 4));
  h.payload_length = GetLe(in + 16, 8);
  if (GetLe(in + 12, 4) != 0) return Status(NINF_ERR_PROTOCOL, "reserved frame field is not zero");
  // The list has gaps (values reserved for other uses): a type is valid
  // only when it has a name.
  if (std::string_view(FrameTypeName(h.type)) == "UNKNOWN")
    return Status(NINF_ERR_PROTOCOL, "unknown frame type " + std::to_string(h.type));
  if (h.header_length > kMaxHeaderLength)
    return Status(NINF_ERR_PROTOCOL, "frame header of " + std::to_string(h.header_length) +
                                         " bytes is over the limit of " +
                                         std::to_string(kMaxHeaderLength));
  *out = h;  // filled in even when the payload is too large: the caller may skip it
  if (h.payload_length > max_payload)
    return Status(NINF_ERR_TOO_LARGE, "frame payload of " + std::to_string(h.payload_length) +
                                          " bytes is over the limit of " +
                                          std::to_string(max_payload));
  if (h.payload_length > 0 && (h.flags & kFlagLittleEndian) != HostOrderFlag())
    return Status(NINF_ERR_NOT_SUPPORTED, "peer's byte order differs; conversion not supported");
  return Status::Ok();
}

void AppendFrame(std::string *out, FrameType type, const google::protobuf::MessageLite *msg,
                 uint64_t payload_length) {
  FrameHeader h;
  h.type = type;
  h.payload_length = payload_length;
  h.header_length = msg ? static_cast<uint32_t>(msg->ByteSizeLong()) : 0;
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);
  out->append(reinterpret_cast<const char *>(fixed), sizeof fixed);
  if (msg) msg->AppendToString(out);
}

void EncodeError(const Status &st, wire::Error *out) {
  out->set_code(st.code());
  out->set_message(st.message());
}

void AppendErrorFrame(std::string *out, const Status &st) {
  wire::Error err;
  EncodeError(st, &err);
  AppendFrame(out, FRAME_ERROR, &err);
}

}  // namespace ninf

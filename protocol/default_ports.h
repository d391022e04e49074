// The ports the daemons listen on unless told otherwise: the one place they
// are written. Clients, both daemons' settings tables and the tools take
// them from here.
#pragma once

namespace ninf {

inline constexpr int kNinfdPort = 3000;  // ninfd; NINF_SERVER without a port
inline constexpr int kMetaPort = 3100;   // ninf-meta; NINF_METASERVER without a port
inline constexpr int kRelayPort = 3200;  // ninf-relay; name@relayhost without a port

// The same ports as the settings tables' default text (shown by --help).
inline constexpr const char *kNinfdPortText = "3000";
inline constexpr const char *kMetaPortText = "3100";
inline constexpr const char *kRelayPortText = "3200";

namespace default_ports_detail {
constexpr int Decimal(const char *text, int value = 0) {
  return *text ? Decimal(text + 1, value * 10 + (*text - '0')) : value;
}
static_assert(Decimal(kNinfdPortText) == kNinfdPort, "kNinfdPortText and kNinfdPort differ");
static_assert(Decimal(kMetaPortText) == kMetaPort, "kMetaPortText and kMetaPort differ");
static_assert(Decimal(kRelayPortText) == kRelayPort, "kRelayPortText and kRelayPort differ");
}  // namespace default_ports_detail

}  // namespace ninf

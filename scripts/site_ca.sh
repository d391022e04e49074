#!/usr/bin/env bash
# scripts/site_ca.sh - a site certificate authority and certificates signed by
# it, with the openssl command line (docs/security.md shows the same steps by
# hand). For tests and benchmarks; a site keeps its CA key offline.
#
#   bash scripts/site_ca.sh DIR ca                     DIR/ca.pem, DIR/ca.key
#   bash scripts/site_ca.sh DIR server NAME HOST...    DIR/NAME.pem, DIR/NAME.key:
#        a server certificate for each HOST (an IP address or a DNS name)
#   bash scripts/site_ca.sh DIR client NAME SUBJECT    a client certificate,
#        SUBJECT like "/O=site/CN=alice"
#   options before DIR: --days N (default 30; a negative N makes one that
#   has already expired), --ca PREFIX (sign with DIR/PREFIX.pem instead of ca)
set -euo pipefail
days=30 ca=ca
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --days) days=$2; shift 2 ;;
    --ca) ca=$2; shift 2 ;;
    *) echo "site_ca.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -ge 2 ]] || { sed -n '2,14p' "$0" >&2; exit 2; }
dir=$1 kind=$2
shift 2
mkdir -p "$dir"
umask 077

# sign NAME SUBJECT EXTENSIONS: NAME.key and NAME.pem signed by the CA.
sign() {
  local name=$1 subject=$2 ext=$3 start end
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$name.key" 2>/dev/null
  openssl req -new -key "$dir/$name.key" -subj "$subject" -out "$dir/$name.csr"
  printf '%s\n' "$ext" >"$dir/$name.ext"
  if [[ $days -lt 0 ]]; then
    # An expired certificate: `openssl x509` of OpenSSL 3.0 cannot back-date,
    # `openssl ca` can (-startdate/-enddate), given a minimal database.
    end=$(date -u -d "$((-days)) days ago" +%Y%m%d%H%M%SZ)
    start=$(date -u -d "$((2 - days)) days ago" +%Y%m%d%H%M%SZ)
    mkdir -p "$dir/db.$name"
    : >"$dir/db.$name/index.txt"
    printf '[ca]\ndefault_ca=c\n[c]\ndatabase=%s\nnew_certs_dir=%s\nserial=%s\n' \
      "$dir/db.$name/index.txt" "$dir/db.$name" "$dir/db.$name/serial" >"$dir/db.$name/cnf"
    printf 'default_md=sha256\npolicy=p\ncopy_extensions=none\n[p]\n' >>"$dir/db.$name/cnf"
    openssl rand -hex 8 >"$dir/db.$name/serial"
    openssl ca -batch -config "$dir/db.$name/cnf" -in "$dir/$name.csr" -cert "$dir/$ca.pem" \
      -keyfile "$dir/$ca.key" -startdate "$start" -enddate "$end" -extfile "$dir/$name.ext" \
      -notext -out "$dir/$name.pem" 2>/dev/null
    rm -rf "$dir/db.$name"
  else
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.pem" -CAkey "$dir/$ca.key" \
      -CAcreateserial -days "$days" -extfile "$dir/$name.ext" -out "$dir/$name.pem" 2>/dev/null
  fi
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}

case $kind in
  ca)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/O=ninf site/CN=ninf site CA" -keyout "$dir/${1:-ca}.key" -out "$dir/${1:-ca}.pem" 2>/dev/null
    ;;
  server)
    name=$1
    shift
    sans=()
    for h in "$@"; do
      if [[ $h =~ ^[0-9.]+$ || $h == *:* ]]; then sans+=("IP:$h"); else sans+=("DNS:$h"); fi
    done
    san=$(IFS=,; echo "${sans[*]}")
    sign "$name" "/O=ninf site/CN=$1" \
      "subjectAltName=$san"$'\n'"extendedKeyUsage=serverAuth,clientAuth"
    ;;
  client)
    sign "$1" "$2" "extendedKeyUsage=clientAuth"
    ;;
  *) echo "site_ca.sh: unknown kind $kind (ca, server, client)" >&2; exit 2 ;;
esac

#!/bin/sh
# Makes DIR/self-signed.pem (certificate and key in one file, as HAProxy reads them) for local
# use, unless DIR already holds a .pem: a real certificate put there is never replaced.
# Compose runs it at first start; the test harness (bench/lib/balancer.py, for
# tests/nodes/deployment.py) runs it too. Usage: self-signed.sh DIR [NAME]
set -eu
dir="$1"
name="${2:-localhost}"
mkdir -p "$dir"
for existing in "$dir"/*.pem; do
    [ -e "$existing" ] && exit 0
done
command -v openssl >/dev/null 2>&1 || apk add --no-cache openssl >/dev/null
work="$(mktemp -d)"
openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=$name" \
    -addext "subjectAltName=DNS:$name,DNS:localhost,IP:127.0.0.1" \
    -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
cat "$work/cert.pem" "$work/key.pem" > "$dir/self-signed.pem"
# Readable by the balancer, which runs as its own user; the volume is mounted nowhere else.
chmod 644 "$dir/self-signed.pem"
rm -r "$work"
echo "made a self-signed certificate for $name in $dir/self-signed.pem"

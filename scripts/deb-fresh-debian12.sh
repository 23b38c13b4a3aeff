#!/usr/bin/env bash
# The .deb on a fresh Debian 12 (issue 32): a minimal bookworm root made by
# debootstrap (Debian's archive must be reachable), the package's
# dependencies installed there by apt from Debian's archive alone, the
# package installed by dpkg, then `tomo-recon --demo` and `import tomows`
# run in the root from the installed files.
#
# libcufft-13-0 (cuFFT of CUDA 13) is not in Debian: it is NVIDIA's package
# (the CUDA repository for debian12). With CUFFT_DIR=DIR (a CUDA toolkit's
# lib64, holding libcufft.so.12) the script stands in for it: dpkg
# --ignore-depends=libcufft-13-0 and DIR's libcufft.so.12* copied into the
# root's /usr/local/lib. Without CUFFT_DIR it shows apt's refusal and stops.
#
#   scripts/deb-fresh-debian12.sh DEB [ROOT]     (as root; ROOT: /tmp/debian12-root, reused when present)
set -euo pipefail
deb=$(realpath "${1:?usage: deb-fresh-debian12.sh DEB [ROOT]}")
root=${2:-/tmp/debian12-root}
[ "$(id -u)" = 0 ] || { echo "deb-fresh-debian12.sh: needs root (debootstrap, chroot)" >&2; exit 1; }
if [ ! -x "$root/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
fi
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 bash -o pipefail -c "$1"; }
echo "package: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
cp "$deb" "$root/root/"
in_root "dpkg --purge tomo-workstation >/dev/null 2>&1 || true; apt-get update -qq" # a reused root: as fresh
if [ -z "${CUFFT_DIR:-}" ]; then
    in_root "apt-get install -y --no-install-recommends /root/$(basename "$deb")"
    exit $?
fi
# Every dependency but cuFFT, from Debian's archive (the first of each "a | b").
deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | grep -v libcufft | sed 's/(.*)//; s/|.*//' | tr -d ' ' | sort -u)
in_root "apt-get install -y -qq --no-install-recommends $(echo $deps)" >/dev/null
cp -a "$CUFFT_DIR"/libcufft.so.12* "$root/usr/local/lib/"
in_root "ldconfig && dpkg -i --ignore-depends=libcufft-13-0 /root/$(basename "$deb")"
in_root "cd /tmp && tomo-recon --demo --strategy cpu -o /tmp/demo.h5 --overwrite | tail -3"
in_root "cd / && python3 -c 'import tomows; print(\"import tomows\", tomows.__version__, \"from\", tomows.__file__); print([s[\"name\"] for s in tomows.strategies() if s[\"available\"]])'"
in_root "QT_QPA_PLATFORM=offscreen timeout 20 tomo-workstation --help | head -3; ldd /usr/bin/tomo-recon /usr/bin/tomo-workstation | grep -E 'not found|cufft' || true"

#!/usr/bin/env bash
# The Debian package: installs the build dependencies, builds in ./build
# (scripts/build.sh; extra arguments go to CMake), makes the .deb with CPack
# and checks it: its contents and control fields (dpkg-deb), its files
# installed into a temporary folder (dpkg-deb -x) where tomo-recon --demo and
# `import tomows` must work. As root with TOMO_PACKAGE_INSTALL=1 it also
# installs it with dpkg -i (apt-get -f for its dependencies) and runs
# tomo-recon --demo and python3 -c "import tomows" from the system.
#
#   scripts/package.sh [CMAKE OPTIONS...]      -> build/tomo-workstation_<version>_<arch>.deb
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" "$@"
cd "$build"
rm -f tomo-workstation_*.deb
cpack -G DEB >/dev/null
deb=$(ls tomo-workstation_*.deb)
echo "package: $build/$deb, $(du -k "$deb" | cut -f1) KiB"
dpkg-deb -f "$deb"
dpkg-deb -c "$deb" | awk '{print $6}' | grep -E 'bin/|dist-packages/tomows/|man1/|applications/|icons/' | sed 's/^/  /'

# Its files alone, unpacked: the programs and the module work from there.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
(cd "$unpacked" && ./usr/bin/tomo-recon --demo --strategy cpu -o demo.h5 --quiet | grep "demo quality")
(cd "$unpacked" && PYTHONPATH=$unpacked/usr/lib/python3/dist-packages /usr/bin/python3 -c \
  "import tomows; print('package: import tomows', tomows.__version__, 'from', tomows.__file__)")

if [[ ${TOMO_PACKAGE_INSTALL:-0} == 1 ]]; then
  dpkg -i "$deb" || apt-get install -f -y -qq --no-install-recommends
  (cd "$unpacked" && tomo-recon --demo --strategy cpu -o installed.h5 --quiet | grep "demo quality")
  (cd / && /usr/bin/python3 -c "import tomows; print('package: installed, import tomows from', tomows.__file__)")
fi

#!/usr/bin/env bash
# The install into a temporary prefix works on its own: `cmake --install`
# of BUILD into PREFIX, then the installed tomo-recon --demo, its man page,
# and, given PYTHON (the interpreter the module was built for), `import
# tomows` from the installed package with a reconstruction. CTest's
# install.prefix test runs it.
#
#   packaging/check-install.sh BUILD PREFIX [PYTHON]
set -euo pipefail
build=$1
prefix=$2
python=${3:-}
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

for f in bin/tomo-recon bin/tomo-bench bin/tomo-stream share/man/man1/tomo-recon.1 share/man/man1/tomo-bench.1 share/man/man1/tomo-stream.1; do
  [[ -e $prefix/$f ]] || { echo "check-install: $prefix/$f was not installed" >&2; exit 1; }
done
# The man page renders and carries the options of --help.
man -l "$prefix/share/man/man1/tomo-recon.1" 2>/dev/null | grep -q -- "--strategy" ||
  grep -q -- '\\-\\-strategy' "$prefix/share/man/man1/tomo-recon.1" ||
  { echo "check-install: the man page of tomo-recon lacks --strategy" >&2; exit 1; }

# The demo from the installed program alone (nothing of the build tree on its paths).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && env -u LD_LIBRARY_PATH "$prefix/bin/tomo-recon" --demo --strategy cpu -o demo.h5 | tee demo.log)
grep -q "demo quality vs the true phantom" "$work/demo.log"

if [[ -n $python ]]; then
  site=$(find "$prefix/lib" -type d -name tomows -path '*dist-packages*' | head -1)
  [[ -n $site ]] || { echo "check-install: no tomows package under $prefix/lib/*/dist-packages" >&2; exit 1; }
  (cd "$work" && PYTHONPATH=$(dirname "$site") "$python" - <<'PY'
import os
import numpy as np
import tomows
assert tomows.__file__.startswith(os.environ["PYTHONPATH"]), tomows.__file__
assert "cpu" in [s["name"] for s in tomows.strategies()]
angles = np.linspace(0, np.pi, 90, endpoint=False)
sino = np.zeros((90, 64), np.float32)
sino[:, 30:34] = 1
v = tomows.reconstruct(sino, angles, strategy="cpu")
assert v.shape == (64, 64) and np.isfinite(v).all()
try:
    tomows.open("demo.h5")  # the demo's output: a volume, not a scan
    raise SystemExit("a volume file opened as a scan")
except tomows.FormatError:
    pass
print("check-install: import tomows and a reconstruction from", tomows.__file__)
PY
  )
fi
echo "check-install: the install into $prefix works"

#!/usr/bin/env bash
# The README's main command: installs the packages, builds, then opens FILE
# (or the built-in demo phantom) in the workstation when it was built and a
# display is available; otherwise reconstructs it with tomo-recon into
# ./tomo-output/<name>.h5 and prints the quality figures (demo) and where
# the result went.
#
#   scripts/run-workstation.sh [FILE] [tomo-recon options...]
#
# Options after FILE (or instead of it, for the demo) go to tomo-recon when
# it runs, e.g. --center 296 --rows 0:2. Environment: TOMO_BUILD_DIR (build
# folder, default ./build), TOMO_OUTPUT_DIR (default ./tomo-output).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TOMO_BUILD_DIR:-$root/build}

input=""
if (($# > 0)) && [[ $1 != -* ]]; then
  input=$1
  shift
fi
if [[ -n $input && ! -e $input ]]; then
  echo "run-workstation: '$input' does not exist" >&2
  exit 2
fi

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

if [[ -x $build/app/tomo-workstation && -n ${DISPLAY:-} ]]; then
  echo "run-workstation: starting the workstation on ${input:-the demo phantom}"
  exec "$build/app/tomo-workstation" ${input:+"$input"}
fi

if [[ ! -x $build/app/tomo-workstation ]]; then
  echo "run-workstation: no GUI in this build; reconstructing with tomo-recon"
else
  echo "run-workstation: no display (DISPLAY is not set); reconstructing with tomo-recon"
fi

output_dir=${TOMO_OUTPUT_DIR:-$root/tomo-output}
mkdir -p "$output_dir"
if [[ -z $input ]]; then
  name=demo
  args=(--demo)
else
  name=$(basename "${input%/}")
  name=${name%.*}
  args=("$input") # without an axis option tomo-recon finds the axis itself
fi
output="$output_dir/$name.h5"
"$build/app/tomo-recon" "${args[@]}" -o "$output" --overwrite "$@"
echo "run-workstation: result in $output (HDF5 dataset /volume, float32 [slice][row][column])"

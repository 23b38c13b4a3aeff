#!/bin/sh
# For the MPI tests: runs "$@" as this MPI rank; on rank $KILL_RANK, kills
# the program (SIGKILL) once the record of the slices written ($RECORD)
# holds a span of this rank, then dies the same way: a rank lost mid-run.
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
if [ "$rank" != "$KILL_RANK" ]; then exec "$@"; fi
"$@" &
child=$!
while kill -0 "$child" 2>/dev/null; do
    if grep -q " $rank\$" "$RECORD" 2>/dev/null; then
        kill -9 "$child"
        kill -9 $$
    fi
    sleep 0.01
done
wait "$child"

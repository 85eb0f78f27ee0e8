#!/bin/sh
# Under mpirun: runs the command given after SIGNAL and SECONDS on every
# rank, and on rank 1 sends it SIGNAL after SECONDS: KILL, a rank that dies
# without exiting through MPI (a crash, the OOM killer); STOP, a rank that
# hangs while alive (and KILL 60 s later, should nothing else end it).
# Usage:
#   mpirun -np 2 sh kill_rank1.sh SIGNAL SECONDS COMMAND ARGS...
signal=$1
seconds=$2
shift 2
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
  exec timeout -s "$signal" -k 60 "$seconds" "$@"
fi
exec "$@"

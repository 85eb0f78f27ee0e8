#!/bin/sh
# Under mpirun: runs the command given after SECONDS on every rank, and on
# rank 1 kills it with SIGKILL after SECONDS (a rank that dies without
# exiting through MPI: a crash, the OOM killer). Usage:
#   mpirun -np 2 sh kill_rank1.sh SECONDS COMMAND ARGS...
seconds=$1
shift
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
  exec timeout -s KILL "$seconds" "$@"
fi
exec "$@"

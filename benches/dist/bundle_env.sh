# Sourced by the benches/dist scaling scripts, with B set to the bundle folder: unpacks its
# `trident` (the bundle ships executables gzipped) as $T, makes the work folder $W (WORK,
# default /tmp/trident-scaling) and lets mpirun run as root.
T=$B/bin/trident
[ -f "$T.gz" ] && gunzip -f "$T.gz"
chmod +x "$T"
W=${WORK:-/tmp/trident-scaling}
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

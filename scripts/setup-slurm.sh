#!/usr/bin/env bash
# Installs what the cluster tests need: Debian's Slurm (`slurm-wlm`: slurmctld, slurmd and the
# client commands) and `munge`, when missing. The tests start and stop a one-node cluster of
# their own (config, keys and state in a temp dir, ports of their own): nothing is configured or
# started here; the only service touched is one the install itself started (stopped below, so
# that it does not hold the tests' ports).
#
# Never fails the caller: without apt or the registry it says so, and the cluster tests then fail
# under CI=true (say SKIPPED elsewhere) naming what is missing.
set -uo pipefail

if command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v sbatch >/dev/null && command -v munged >/dev/null; then
    exit 0
fi
echo "== installing Debian slurm-wlm and munge (the cluster tests' one-node Slurm)"
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null; }; then
    echo "setup-slurm: could not install slurm-wlm and munge; the cluster tests will say so"
fi
# The packages start their own munged and slurm services where a service manager runs; the tests
# use their own daemons, so stop any the install started (they would hold the default ports).
for svc in slurmd slurmctld munge; do
    if command -v systemctl >/dev/null 2>&1; then systemctl stop "$svc" >/dev/null 2>&1 || true; fi
done
exit 0

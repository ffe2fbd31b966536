#!/usr/bin/env bash
# bubblewrap (bwrap) confines every maker, agent and gate command (activities/sandbox/). Idempotent: does
# nothing when bwrap is on PATH. Installing needs root (apt-get); without it this explains what to do —
# the worker then refuses to start unless SANDBOX=none is set explicitly.
set -euo pipefail

if command -v bwrap >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-bubblewrap: bwrap is not installed; install the 'bubblewrap' package (e.g. 'sudo apt-get install -y bubblewrap')." >&2
  echo "install-bubblewrap: without it the worker will not take loops unless you set SANDBOX=none (commands then run unsandboxed)." >&2
  exit 0
fi

echo "install-bubblewrap: installing bubblewrap with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq bubblewrap
echo "bubblewrap: $(bwrap --version)"

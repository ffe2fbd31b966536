#!/usr/bin/env bash
# Gradle for the Gradle end-to-end tests (test/e2e/real-projects.e2e.test.ts runs a Gradle project through a
# loop: set-up, offline gates and reports in bubblewrap). Debian's package (Gradle 4.4.1), which runs on the
# installed Java 17: Gradle's own distributions come from services.gradle.org, which this build machine
# cannot reach. Idempotent: does nothing when gradle is on PATH. Installing needs root (apt-get); without it
# this only explains what to run, and the Gradle cases fail for want of it.
set -euo pipefail

if command -v gradle >/dev/null 2>&1; then
  echo "gradle: $(command -v gradle)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "install-gradle: gradle is not installed; install the 'gradle' package (e.g. 'sudo apt-get install -y --no-install-recommends gradle')." >&2
  exit 0
fi

echo "install-gradle: installing gradle with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends gradle
echo "gradle: $(command -v gradle)"

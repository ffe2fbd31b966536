#!/usr/bin/env bash
# Installs the pinned Temporal time-skipping test server (the Java SDK's io.temporal.testserver.TestServer)
# into .tools/temporal-test-server, with a launcher at bin/temporal-test-server that @temporalio/testing
# runs as `<launcher> <port>`. Source: Maven Central (temporal.io's native build needs internet access we
# may not have), resolved by mvn from a generated pom. Needs Java 17 and mvn. Idempotent.
set -euo pipefail

TEST_SERVER_VERSION="1.38.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="$ROOT/.tools/temporal-test-server"
LAUNCHER="$TARGET/bin/temporal-test-server"
STAMP="$TARGET/version"

if [ -x "$LAUNCHER" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$TEST_SERVER_VERSION" ]; then
  echo "Temporal test server $TEST_SERVER_VERSION already installed: $LAUNCHER"
  exit 0
fi

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null; then
    echo "install-temporal-test-server.sh: $tool is required (the test server runs on the JVM, from Maven Central)" >&2
    exit 1
  fi
done

rm -rf "$TARGET"
mkdir -p "$TARGET/bin" "$TARGET/lib"
POM_DIR="$(mktemp -d)"
trap 'rm -rf "$POM_DIR"' EXIT
# slf4j-nop: the server logs through slf4j 1.7, which otherwise warns on every start that it has no binding.
cat >"$POM_DIR/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.engineering-loop</groupId>
  <artifactId>temporal-test-server-install</artifactId>
  <version>0</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$TEST_SERVER_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
EOF
# mvn's output only when it failed (quiet, it still prints colour resets).
if ! resolved="$(mvn -B -q -f "$POM_DIR/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$TARGET/lib" 2>&1)"; then
  echo "$resolved" >&2
  echo "install-temporal-test-server.sh: mvn could not resolve io.temporal:temporal-test-server:$TEST_SERVER_VERSION" >&2
  exit 1
fi

# @temporalio/testing waits 5 s for the server's port: a JVM on a busy 2-core machine can take longer than
# that, so the launcher starts with C1 only, the serial collector and a class-data archive of the start-up.
JAVA_OPTS=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC)
cat >"$LAUNCHER" <<EOF
#!/usr/bin/env bash
# Usage: temporal-test-server <port> [--enable-time-skipping]
DIR="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")/.." && pwd)"
exec java ${JAVA_OPTS[*]} -XX:SharedArchiveFile="\$DIR/start-up.jsa" -Xshare:auto -cp "\$DIR/lib/*" io.temporal.testserver.TestServer "\$@"
EOF
chmod +x "$LAUNCHER"

# The class-data archive: the classes one start loads, dumped when that JVM exits (a JVM of another build
# ignores the archive and starts without it).
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
java "${JAVA_OPTS[@]}" -XX:ArchiveClassesAtExit="$TARGET/start-up.jsa" -Xlog:cds=off -cp "$TARGET/lib/*" io.temporal.testserver.TestServer "$PORT" &
SERVER=$!
for _ in $(seq 1 300); do
  if (echo >"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
  sleep 0.1
done
kill -TERM "$SERVER"
wait "$SERVER" || true
if [ ! -s "$TARGET/start-up.jsa" ]; then
  echo "install-temporal-test-server.sh: the start-up class-data archive was not written" >&2
  exit 1
fi

echo "$TEST_SERVER_VERSION" >"$STAMP"
echo "Temporal test server $TEST_SERVER_VERSION installed: $LAUNCHER"

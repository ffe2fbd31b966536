import fs from 'node:fs';
import path from 'node:path';
import { GRADLE_CACHE } from './cache-layout';

// Gradle cannot run on a read-only GRADLE_USER_HOME: every build locks and writes files in it (file hashes,
// compiled build scripts, its dependency cache's index). Makers and gates see the loop's caches read-only,
// so that nothing they run can plant a jar, a compiled script or an init script a later gate would use. So
// under bubblewrap each of their commands gets a Gradle home of its own, in the sandbox's /tmp (gone with
// it), made from the loop's before the command starts: the downloaded artifacts and the wrapper's
// distributions linked read-only, the dependency cache's index copied, since Gradle writes it whenever it
// resolves. (Gradle 6.2's GRADLE_RO_DEP_CACHE does the first part alone, for Gradle 6.2 and later only.)

/** GRADLE_USER_HOME of a command that may only read the loop's caches. */
export const GRADLE_HOME_IN_SANDBOX = '/tmp/gradle-home';

// $1: the loop's Gradle home (read-only here); then the command. Only a distribution's unpacked directory and
// its `.ok` marker are needed: the wrapper takes a lock file beside them (so not the loop's own directory),
// and downloads nothing when the marker is there.
const MAKE_HOME = `set -e
from="$1"; shift
home="$GRADLE_USER_HOME"
mkdir -p "$home/caches/modules-2"
if [ -d "$from/caches/modules-2/files-2.1" ]; then ln -s "$from/caches/modules-2/files-2.1" "$home/caches/modules-2/"; fi
for index in "$from"/caches/modules-2/metadata-*; do if [ -d "$index" ]; then cp -R "$index" "$home/caches/modules-2/"; fi; done
for dist in "$from"/wrapper/dists/*/*; do
  if [ -d "$dist" ]; then
    copy="$home/\${dist#"$from/"}"
    mkdir -p "$copy"
    for entry in "$dist"/*; do
      case "$entry" in
        *.ok) cp "$entry" "$copy/" ;;
        *.zip|*.lck|*.part) ;;
        *) if [ -d "$entry" ]; then ln -s "$entry" "$copy/"; fi ;;
      esac
    done
  fi
done
exec "$@"`;

/**
 * `argv` preceded by the making of its Gradle home from the loop's caches at `cacheDir`; `argv` itself
 * when the loop has no Gradle cache.
 */
export function withGradleHome(cacheDir: string, argv: string[]): string[] {
  const loopHome = path.join(cacheDir, GRADLE_CACHE);
  const used = ['caches/modules-2', 'wrapper/dists'].some((dir) => fs.existsSync(path.join(loopHome, dir)));
  return used ? ['sh', '-c', MAKE_HOME, 'gradle-home', loopHome, ...argv] : argv;
}

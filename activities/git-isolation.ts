import path from 'node:path';
import type { GitTransport } from '../domain/repository-url';

// What the service's own git calls run with, so nothing in a workspace makes them run the maker's code.
//
// Git always reads the repository's own .git/config, [include]s and all; no flag skips it. The maker
// cannot write .git (the sandbox mounts it read-only), and every key that names a program git would run
// in the commands the service uses is pinned below with -c: command-line config outranks the repository
// file and anything it includes. Drivers a repository config could define (filter, diff textconv) have
// free-form names and cannot be pinned; the read-only .git keeps them out, and diffs pass --no-textconv.
// Not pinned because never reached: the pager (stdout is never a terminal), the editor (every commit has
// -m), core.sshCommand (GIT_SSH_COMMAND outranks it), diff.external (diffs pass --no-ext-diff; an empty
// value would make git try to run "").

/** Lets a call reach a repository: only over this transport, and a dead or stalled remote fails fast. */
export interface RemoteAccess {
  transport: GitTransport;
  connectTimeoutSeconds: number;
  /**
   * The one exception to "no credentials": a clone or push of a loop whose request names an operator
   * credential. git asks `askPassPath` (git-askpass.ts), which answers from this git process's own
   * environment — never argv, which every user on the host can read in /proc.
   */
  credential?: { username: string; password: string; askPassPath: string };
}

/** The environment variables the askpass script answers from (git-askpass.ts). */
export const ASKPASS_USERNAME_VAR = 'LOOP_GIT_USERNAME';
export const ASKPASS_PASSWORD_VAR = 'LOOP_GIT_PASSWORD';

const IDENTITY = ['user.name=Engineering Loop', 'user.email=loop@engineering-loop.invalid', 'commit.gpgsign=false'];

const PINNED = [
  // A path that is not a directory: git finds no hooks, whatever .git/hooks holds (`--no-verify` skips only some).
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  // Workspaces are handed to the sandbox uid while the service runs git as root; ownership is the service's business.
  'safe.directory=*',
  // An empty value empties the list of credential helpers and leaves no askpass program to run.
  'credential.helper=',
  'core.askPass=',
  // No transport at all unless the call names one.
  'protocol.allow=never',
];

export function gitConfigArgs(remote?: RemoteAccess): string[] {
  const config = [...IDENTITY, ...PINNED];
  if (remote) {
    // http(s) has no connect timeout setting; lowSpeed ends a transfer that stalls (the clone's preflight bounds the connect).
    config.push(
      `protocol.${remote.transport}.allow=always`,
      'http.lowSpeedLimit=1000',
      `http.lowSpeedTime=${remote.connectTimeoutSeconds}`,
    );
    if (remote.credential) {
      // Later -c entries win: the askpass program replaces the empty one; a redirect must not carry the
      // credential to another host.
      config.push(`core.askPass=${remote.credential.askPassPath}`, 'http.followRedirects=false');
    }
  }
  return config.flatMap((entry) => ['-c', entry]);
}

export function gitEnvironment(cwd: string, remote?: RemoteAccess): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // ssh finds its keys and known_hosts here.
    HOME: process.env.HOME ?? '/tmp',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    // A workspace without its .git must fail, not find an enclosing repository and reset or clean that one.
    GIT_CEILING_DIRECTORIES: path.dirname(path.resolve(cwd)),
  };
  if (remote) {
    const seconds = remote.connectTimeoutSeconds;
    // BatchMode: no password or host-key prompts; the keep-alives end a connection that stops answering.
    env.GIT_SSH_COMMAND = `ssh -o BatchMode=yes -o ConnectTimeout=${seconds} -o ServerAliveInterval=${seconds} -o ServerAliveCountMax=2`;
    if (remote.credential) {
      env.GIT_ASKPASS = remote.credential.askPassPath;
      env[ASKPASS_USERNAME_VAR] = remote.credential.username;
      env[ASKPASS_PASSWORD_VAR] = remote.credential.password;
    }
  }
  return env;
}

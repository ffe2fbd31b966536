import { formatEgressEntry, type EgressEntry } from '../../domain/egress';

// The in-sandbox end of the egress path (egress-proxy.ts is the other). A networked sandbox has its own
// network namespace holding only loopback; this small Node process, started inside it as the sandbox's
// uid, offers the service's proxy — reached over a bind-mounted Unix socket — as an HTTP proxy on
// 127.0.0.1, and forwards each allow-listed loopback port (a model server on the host's 127.0.0.1:4010,
// say) to the same port inside, so clients that never proxy loopback still reach it. It then runs the
// command and exits as the command does.

/** Where the sandbox sees the proxy's socket, and the loopback port it offers the proxy on. */
export const EGRESS_SOCKET_IN_SANDBOX = '/run/egress/proxy.sock';
export const EGRESS_PROXY_PORT = 3128;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

/** The variables that point the usual clients (npm, pip, cargo, go, curl, agent CLIs, Maven, Gradle) at the proxy. */
export function egressEnvironment(): Record<string, string> {
  const proxy = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
  const direct = 'localhost,127.0.0.1,::1';
  // Java ignores the variables above; every JVM (Maven's, Gradle's and their forks) reads JAVA_TOOL_OPTIONS.
  const java = ['http', 'https']
    .map((scheme) => `-D${scheme}.proxyHost=127.0.0.1 -D${scheme}.proxyPort=${EGRESS_PROXY_PORT}`)
    .join(' ');
  return {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: direct,
    no_proxy: direct,
    JAVA_TOOL_OPTIONS: `${java} -Dhttp.nonProxyHosts=localhost|127.0.0.1`,
  };
}

/** The argv that runs `argv` behind the bridge, with `node` the service's own Node binary. */
export function bridgedArgv(node: string, allow: readonly EgressEntry[], argv: string[]): string[] {
  // One listener per port: two endpoints (two presets, say) on the same loopback server share it.
  const forwards = [
    ...new Map(
      allow
        .filter((e) => LOOPBACK_HOSTS.has(e.host) && e.port !== null)
        .map((e) => [e.port, { port: e.port, target: formatEgressEntry(e) }] as const),
    ).values(),
  ];
  const spec = JSON.stringify({ socket: EGRESS_SOCKET_IN_SANDBOX, proxyPort: EGRESS_PROXY_PORT, forwards });
  return [node, '-e', `(${bridgeMain.toString()})()`, spec, '--', ...argv];
}

/** Runs inside the sandbox (serialised with toString, so it requires what it needs itself). */
function bridgeMain(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const net = require('node:net') as typeof import('node:net');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const [specText = '{}', , ...argv] = process.argv.slice(1);
  const spec = JSON.parse(specText) as {
    socket: string;
    proxyPort: number;
    forwards: Array<{ port: number; target: string }>;
  };

  const listen = (port: number, onConnection: (client: import('node:net').Socket) => void) =>
    new Promise<void>((resolve) => {
      const server = net.createServer(onConnection);
      server.on('error', (err) => {
        process.stderr.write(`egress-bridge: cannot listen on 127.0.0.1:${port}: ${err.message}\n`);
        resolve();
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const relay = (client: import('node:net').Socket, upstream: import('node:net').Socket) => {
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  };
  const proxy = (client: import('node:net').Socket) => relay(client, net.connect(spec.socket));
  // A loopback port: the tunnel is asked for first, then the client's bytes go through untouched.
  const forward = (target: string) => (client: import('node:net').Socket) => {
    client.pause();
    const upstream = net.connect(spec.socket, () =>
      upstream.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    );
    let answer = Buffer.alloc(0);
    const onAnswer = (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf('\r\n\r\n');
      if (end === -1) return;
      upstream.off('data', onAnswer);
      if (!/^HTTP\/1\.[01] 200/.test(answer.toString('latin1'))) {
        client.destroy();
        upstream.destroy();
        return;
      }
      const rest = answer.subarray(end + 4);
      if (rest.length > 0) client.write(rest);
      relay(client, upstream);
      client.resume();
    };
    upstream.on('data', onAnswer);
    upstream.on('error', () => client.destroy());
  };

  void Promise.all([
    listen(spec.proxyPort, proxy),
    ...spec.forwards.map((f) => listen(f.port, forward(f.target))),
  ]).then(() => {
    const [command = '', ...args] = argv;
    const child = spawn(command, args, { stdio: 'inherit' });
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
    child.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? 'No such file or directory' : err.message;
      process.stderr.write(`egress-bridge: execvp ${command}: ${why}\n`);
      process.exit(err.code === 'ENOENT' ? 127 : 126);
    });
    child.on('exit', (code, signal) => {
      if (signal) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      } else process.exit(code ?? 1);
    });
  });
}

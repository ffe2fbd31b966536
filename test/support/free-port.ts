import net from 'node:net';

// An unused TCP port on 127.0.0.1 for a test's server, released before returning, so the caller's server
// binds it. Two ways that goes wrong, both seen in CI runs:
//   - a port the kernel hands out for `listen(0)` is one it also hands to outgoing connections, and on a
//     busy host one of those took a test's API port between the check and the bind: ports are drawn below
//     Linux's ephemeral range (32768–60999) instead;
//   - two jest workers drew the same port before either bound it, and one's supervisor restarting its dev
//     server there took it from the other: each worker (JEST_WORKER_ID; the main process is 0) draws from
//     a slice of its own.
const LOWEST = 20_000;
const SLICE = 1_400;
const SLICES = 9;
/** Ports this process handed out already: a released port would pass the check again. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const low = LOWEST + (Number(process.env.JEST_WORKER_ID ?? 0) % SLICES) * SLICE;
  for (let attempt = 0; ; attempt++) {
    const port = low + Math.floor(Math.random() * SLICE);
    if (!handedOut.has(port) && (await bindable(port))) {
      handedOut.add(port);
      return port;
    }
    if (attempt === 50) throw new Error(`no free port found between ${low} and ${low + SLICE - 1} in 50 tries`);
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

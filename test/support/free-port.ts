import net from 'node:net';

// An unused TCP port on 127.0.0.1 for a test's server, released before returning. Drawn at random below
// Linux's ephemeral range (32768–60999): a port the kernel hands out for `listen(0)` is also the kind it
// hands to outgoing connections, and on a busy host one of those took a test's API port between the
// check and the bind. Below that range only another test's listener can take it.
const LOWEST = 20_000;
const HIGHEST = 32_767;
/** Ports this process handed out already: a released port would pass the check again. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (!handedOut.has(port) && (await bindable(port))) {
      handedOut.add(port);
      return port;
    }
    if (attempt === 50) throw new Error(`no free port found between ${LOWEST} and ${HIGHEST} in 50 tries`);
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

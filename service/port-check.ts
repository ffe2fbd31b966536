import net from 'node:net';

// Before the service starts its own PostgreSQL or Temporal dev server, their ports must be free: a
// process still listening there is most likely one an earlier run left behind (a crash, a SIGKILL),
// and attaching to it silently would run loops against a server nobody owns.

export async function assertPortFree(port: number, what: string, setting: string): Promise<void> {
  const free = await new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
  if (!free) {
    throw new Error(
      `port ${port} (${setting}) is already in use, so the ${what} cannot start there. It is probably one an earlier run ` +
        `left behind: find it with \`ss -ltnp 'sport = :${port}'\` and stop it, or set ${setting} to another port.`,
    );
  }
}

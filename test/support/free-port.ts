import net from 'node:net';

// Asks the OS for an unused TCP port on 127.0.0.1 (released before returning: tiny race, fine for tests).
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

import net from 'node:net';

/**
 * A TCP proxy in front of the run's database that can hold every reply for a while: a database
 * that is slow for as long as a test says, whatever the engine's speed, without touching the
 * shared server other files use.
 */
export interface DelayingProxy {
  /** The database URI through the proxy. */
  uri: string;
  /** How long each reply from the database is held from now on (0: passed on at once). */
  delayMs: number;
  /** Replies held now: the database has answered them (its work is done), the client waits. */
  held: number;
  close(): Promise<void>;
}

export async function startDelayingProxy(databaseUri: string): Promise<DelayingProxy> {
  const upstream = new URL(databaseUri);
  const sockets = new Set<net.Socket>();
  const proxy: DelayingProxy = { uri: '', delayMs: 0, held: 0, close: async () => undefined };
  const server = net.createServer((client) => {
    const database = net.connect(Number(upstream.port), upstream.hostname);
    for (const socket of [client, database]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(database);
    database.on('data', (chunk: Buffer) => {
      if (proxy.delayMs === 0) client.write(chunk);
      else {
        database.pause();
        proxy.held++;
        setTimeout(() => {
          proxy.held--;
          client.write(chunk);
          database.resume();
        }, proxy.delayMs);
      }
    });
    database.on('end', () => client.end());
    client.on('close', () => database.destroy());
    database.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  proxy.uri = `mongodb://127.0.0.1:${port}/${upstream.search}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}

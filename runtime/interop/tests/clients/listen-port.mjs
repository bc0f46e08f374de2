// Preload (`node --import listen-port.mjs server.js`) for the official TypeScript SDK's example servers, some of
// which listen on a fixed port: a server then listens on LISTEN_PORT instead, so that tests running side by side
// (tests/client_interop.rs) each get a port of their own.
import net from 'node:net';

const port = Number(process.env.LISTEN_PORT);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (port && typeof args[0] === 'number') {
    args[0] = port;
  }
  return listen.apply(this, args);
};

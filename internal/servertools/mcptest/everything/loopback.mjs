// Preloaded (node --import) before @modelcontextprotocol/server-everything,
// whose HTTP transports listen on every interface: a listen() given only
// a port (and perhaps a callback) listens on 127.0.0.1 instead, so that
// the server the tests start is reachable from this machine only.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const portOnly = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (portOnly && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};

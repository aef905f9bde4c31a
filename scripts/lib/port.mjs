// Whether the port of `npm start` is free, asked before anything starts. `wrangler dev` hands workerd
// the host `localhost`; a server already listening there makes workerd die only after the
// migrations, and until then that other server answers the requests meant for this one (another
// checkout's `npm start` with its own data). Listening on the port for a moment, on every address
// workerd would bind, is the one question that gives the answer workerd will get.
import { lookup } from "node:dns/promises";
import { createServer } from "node:net";

/** The addresses workerd binds for `localhost`: what localhost resolves to, and 127.0.0.1 always. */
async function loopbackAddresses() {
  const found = await lookup("localhost", { all: true }).catch(() => []);
  return [...new Set(["127.0.0.1", ...found.map((a) => a.address)])];
}

/**
 * Listens on `host:port` and closes at once; the error code if that failed, else null.
 * @param {number} port
 * @param {string} host
 * @returns {Promise<string | null>}
 */
function tryListen(port, host) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (/** @type {NodeJS.ErrnoException} */ e) => resolve(e.code ?? "error"));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/**
 * Whether something already listens on `port` where `wrangler dev` would. Only EADDRINUSE counts:
 * an address this machine lacks (no IPv6 loopback) is no conflict, and anything else (EACCES on a
 * privileged port) is left for wrangler to report.
 * @param {number} port
 */
export async function portInUse(port) {
  for (const host of await loopbackAddresses()) {
    if ((await tryListen(port, host)) === "EADDRINUSE") return true;
  }
  return false;
}

/**
 * The first free port after `port` (up to 20 on), to suggest; the next one if none is.
 * @param {number} port
 */
export async function nextFreePort(port) {
  for (let p = port + 1; p <= Math.min(port + 20, 65535); p++) if (!(await portInUse(p))) return p;
  return port < 65535 ? port + 1 : port - 1;
}

/**
 * The one line `npm start` prints when its port is taken: which port, and how to free or move it.
 * @param {number} port
 * @param {number} suggestion a free port to name in `PORT=`
 */
export function portInUseMessage(port, suggestion) {
  return `Port ${port} is already in use (another npm start?). Stop that server or choose another port: PORT=${suggestion} npm start`;
}

// The node project's setup: when a test fails, the last lines of every server of its file still
// running (./server.ts), where workerd (or wrangler dev, for `npm start`) says why a request failed
// (a crash, an error of the worker) that the test's assertion alone does not show.
import { stripVTControlCharacters } from "node:util";
import { beforeEach } from "vitest";
import { retryingFetch } from "./fetch-retry";
import { live } from "./server";

const TAIL_LINES = 60;

beforeEach(({ onTestFailed }) => {
  onTestFailed(() => {
    for (const server of live) {
      const lines = stripVTControlCharacters(server.output()).trimEnd().split("\n");
      console.error(
        `--- ${server.base}: the last ${TAIL_LINES} lines of its output ---\n${lines.slice(-TAIL_LINES).join("\n")}`,
      );
    }
  });
});

// A GET of the tests' own to a loopback server is sent again after a loss (./fetch-retry.ts); and
// wrangler dev's proxy, in front of `npm start`'s servers (./start.test.ts), can lose a request on
// its own hop to the worker: a POST to such a server idle for 3 s goes after a GET that renews the
// proxy's connection.
globalThis.fetch = retryingFetch(globalThis.fetch, 20_000, 3, (origin) => {
  const port = new URL(origin).port; // a server's base is localhost; a test may write 127.0.0.1
  return [...live].some((s) => s.proxied && new URL(s.base).port === port);
});

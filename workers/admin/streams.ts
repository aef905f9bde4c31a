// An app's Shared Signals stream for operators (docs/events.md "Shared Signals", docs/operations.md
// "Admin API"): what it is, for any operator (`GET /admin/clients/:id/stream`, and the console's app
// page). The receiver's Authorization header is never shown. Pausing it: workers/console/streams.ts.

import { service } from "./access";
import { E } from "../core/errors";
import { getClient } from "../provider/store/clients";
import { streamView, type StreamView } from "../provider/store/flows/stream-view";

/** `GET /admin/clients/:id/stream`: the app's stream, or null. */
export const readStream = service<{ clientId: string }, { client_id: string; stream: StreamView | null }>(
  "viewer",
  "GET",
  async (env, caller, { clientId }) => {
    const app = await getClient(env, clientId);
    if (!app) throw E.noSuch("client");
    caller.rc.log.clientId = app.clientId;
    return { client_id: app.clientId, stream: await streamView(env, app.clientId) };
  },
);

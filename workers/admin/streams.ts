// An app's Shared Signals stream for operators (docs/events.md "Shared Signals", docs/operations.md
// "Admin API"): what it is (any operator), and an editor's pause or resume of it, on any app, as the
// app's own `POST /ssf/status` does (store/flows/stream-view.ts), audited with who. The receiver's
// Authorization header is never shown.

import { auditBy, service } from "./access";
import { E } from "../core/errors";
import { getClient } from "../provider/store/clients";
import { setStreamFromConsole, streamView, type StreamView } from "../provider/store/flows/stream-view";

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

const setTo = (to: "paused" | "enabled") =>
  service<{ clientId: string }, { client_id: string; status: "paused" | "enabled" }>(
    "editor",
    "POST",
    async (env, caller, { clientId }) => {
      const app = await getClient(env, clientId);
      if (!app) throw E.noSuch("client");
      caller.rc.log.clientId = app.clientId;
      const was = await setStreamFromConsole(env, app.clientId, to, "Paused by the service's operator");
      if (was === null) throw E.noSuch("stream");
      if (was === "disabled") throw E.invalidBecause("stream", "it is disabled: its app enables it");
      if (was === to) throw E.invalidBecause("stream", `it is already ${to}`);
      await auditBy(env, caller, to === "paused" ? "ssf.stream_paused" : "ssf.stream_resumed", app.clientId);
      return { client_id: app.clientId, status: to };
    },
  );

/** `POST /admin/clients/:id/stream/pause`: an editor pauses the app's stream (its events wait). */
export const pauseStream = setTo("paused");
/** `POST /admin/clients/:id/stream/resume`: an editor resumes it (what waited goes within 5 minutes). */
export const resumeStream = setTo("enabled");

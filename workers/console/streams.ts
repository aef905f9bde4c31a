// An editor pauses or resumes an app's Shared Signals stream from its console page (docs/events.md
// "Shared Signals"), on any app, as the app's own `POST /ssf/status` does, with the stream-updated
// event the app is sent (store/flows/stream-pause.ts); audited with who. Run through the admin
// gate (`perform`): its role check.

import { auditBy, service } from "../admin/access";
import { E } from "../core/errors";
import { getClient } from "../provider/store/clients";
import { setStreamFromConsole } from "../provider/store/flows/stream-pause";

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

/** An editor pauses the app's stream (its events wait). */
export const pauseStream = setTo("paused");
/** An editor resumes it (what waited goes within 5 minutes). */
export const resumeStream = setTo("enabled");

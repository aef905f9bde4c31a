// The developer console's route worker (docs/developers.md): /developers, its pages and its API.
// Developers sign in with the service's sign-in steps, so it has the authorize worker's bindings
// (the store, the directory, the SMS gateways, the WebAuthn verifier); it holds no ADMIN_TOKEN.
import { createWorker } from "../core/router";
import { routes } from "../developers/routes";

export default createWorker("developers", routes);

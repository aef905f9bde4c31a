// The consoles' route worker (docs/console.md, docs/developers.md): /console and /developers with
// their pages. It signs people in with the service's sign-in steps, so it has the authorize worker's
// bindings, and calls the admin API's handlers in process, so it needs ADMIN_TOKEN as the admin
// worker does.
import { createWorker } from "../core/router";
import { routes as operations } from "../console/routes";
import { routes as developers } from "../developers/routes";

export default createWorker("console", [...operations, ...developers]);

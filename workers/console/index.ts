// The console's route worker (docs/console.md): /console and its pages. It signs operators in with
// the service's sign-in steps, so it has the authorize worker's bindings, and calls the admin API's
// handlers in process, so it needs ADMIN_TOKEN as the admin worker does.
import { createWorker } from "../core/router";
import { routes } from "./routes";

export default createWorker("console", routes);

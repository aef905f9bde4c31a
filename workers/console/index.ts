// The operations console's route worker (docs/console.md): /console and its pages. It signs operators
// in with the service's sign-in steps, so it has the authorize worker's bindings, and calls the admin
// API's handlers in process, so it needs ADMIN_TOKEN as the admin worker does. The developer console
// (/developers) is a worker of its own (workers/developers/index.ts).
import { createWorker } from "../core/router";
import { routes } from "./routes";

export default createWorker("console", routes);

// The operations console's route worker (docs/console.md): /console and its pages. It signs
// operators in with the service's sign-in steps, so it has the authorize worker's bindings, and runs
// the admin API's services in process, so it needs ADMIN_TOKEN as the admin worker does. The
// developer console is a worker of its own (./developers.ts).
import { createWorker } from "../core/router";
import { routes } from "../console/routes";

export default createWorker("console", routes);

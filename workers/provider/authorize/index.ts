import { createWorker } from "../../core/router";
import { routes } from "./routes";
import { routes as account } from "../account/routes";
import { routes as inbound } from "../inbound/routes";

// The authorize worker hosts the one-time store; the other provider workers bind to it by script_name.
// It also serves the person's /account page, which runs the same sign-in steps (docs/account.md).
export { OneTimeStore } from "../store/objects";
export { DirectoryShard, GuardStore, MetricsStore } from "../store/objects";
export default createWorker("authorize", [...routes, ...account, ...inbound]);

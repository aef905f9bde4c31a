import { createWorker } from "../../core/router";
import { routes } from "./routes";

// The authorize worker hosts the one-time store; the other provider workers bind to it by script_name.
export { OneTimeStore } from "../store/one-time-store";
export default createWorker("authorize", routes);

import { createWorker } from "../../core/router";
import { routes } from "./routes";
import { routes as ssf } from "../ssf/routes";

// The token worker also serves the Shared Signals transmitter, beside the JWKS its SETs verify with.
export default createWorker("token", [...routes, ...ssf]);

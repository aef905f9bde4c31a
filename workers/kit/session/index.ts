import { createWorker } from "../../../packages/kit/src/core/router";
import { routes } from "../../../packages/kit/src/routes/session";

export default createWorker("rp-session", routes);

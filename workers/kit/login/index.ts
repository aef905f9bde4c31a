import { createWorker } from "../../../packages/kit/src/core/router";
import { routes } from "../../../packages/kit/src/routes/login";

export default createWorker("rp-login", routes);

import { createWorker } from "../../../packages/kit/src/core/router";
import { routes } from "../../../packages/kit/src/routes/callback";

export default createWorker("rp-callback", routes);

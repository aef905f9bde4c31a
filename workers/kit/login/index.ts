import { createWorker } from "../../core/router";
import { routes } from "./routes";

export default createWorker("rp-login", routes);

import { createWorker } from "../../core/router";
import { routes } from "./routes";

export default createWorker("token", routes);

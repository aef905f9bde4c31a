// The all-in-one worker's environment: every binding and variable of the service, the admin API
// and the kit, as the route workers' own types declare them.

import type { AdminEnv } from "../admin/config";
import type { RpEnv } from "../../packages/kit/src/config";
import type { ProviderEnv } from "../provider/config";

export type AllInOneEnv = ProviderEnv & AdminEnv & RpEnv;

// The map cannot drift: scripts/check-map.mjs (run by `npm run check`) names every folder of
// workers/, every store module and every env of wrangler.toml that README.md, docs/architecture.md
// §1 or docs/storage.md leaves out. It passes on the repository and fails on planted omissions.
import { describe, expect, it } from "vitest";
import { currentMap, mapGaps } from "../../scripts/check-map.mjs";

describe("the map check", () => {
  const map = currentMap();

  it("reads the repository's folders, store modules and envs (not vacuous), and finds nothing missing", () => {
    expect(map.workerFolders).toEqual(expect.arrayContaining(["admin", "console", "developers", "provider"]));
    expect(map.storeModules).toEqual(expect.arrayContaining(["one-time/", "clients.ts", "flows/"]));
    expect(mapGaps(map)).toEqual([]);
  });

  it("fails on a planted omission in each of the map's places", () => {
    const planted = {
      ...map,
      workerFolders: [...map.workerFolders, "newroom"],
      storeModules: [...map.storeModules, "ledger.ts"],
      toml: `${map.toml}\n[env.ledger]\nname = "phone-login-ledger"\n`,
      readme: map.readme.replace("| `console` | `phone-login-console` |", "| `consoles` | `phone-login-console` |"),
    };
    expect(mapGaps(planted)).toEqual([
      "README.md folder block: workers/newroom/",
      "docs/architecture.md §1: workers/newroom/",
      "README.md worker table (Deployment): [env.console]",
      "README.md worker table (Deployment): [env.ledger]",
      "docs/storage.md: store/ledger.ts",
      "docs/architecture.md §1: store/ledger.ts",
    ]);
  });
});

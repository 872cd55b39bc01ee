// Choosing a driver by settings: DB_URI's scheme, or DB_DRIVER with the host settings.
import { describe, expect, it } from "vitest";
import { databaseSettings } from "../../src/data/pool.ts";
import { normalizeSettings } from "../../src/settings/normalize.ts";
import type { Settings } from "../../src/settings/types.ts";

const pick = (settings: Settings, prefix: string | null = null) => databaseSettings(normalizeSettings({ DOMAIN: {}, ...settings }), prefix);

describe("databaseSettings", () => {
  it("defaults to the memory driver", () => {
    expect(pick({})).toEqual({ uri: "memory", database: "everest" });
    expect(pick({ DB_DRIVER: "memory", DB_NAME: "app" })).toEqual({ uri: "memory", database: "app" });
  });

  it("takes DB_URI as given, the database from a mongodb URI's path or else DB_NAME", () => {
    expect(pick({ DB_URI: "file:data/app.jsonl", DB_NAME: "app" })).toEqual({ uri: "file:data/app.jsonl", database: "app" });
    expect(pick({ DB_URI: "mongodb://db.internal:27018/reference?retryWrites=false" })).toEqual({
      uri: "mongodb://db.internal:27018/reference?retryWrites=false",
      database: "reference",
    });
    expect(pick({ DB_URI: "mongodb+srv://u:p@cluster0.example.net/shop" }).database).toBe("shop");
    expect(pick({ MONGO_URI: "mongodb://localhost/legacy" } as Settings).database).toBe("legacy");
    expect(pick({ DB_URI: "https://gateway.example/app/x/endpoint/data/v1", DB_NAME: "app" })).toEqual({
      uri: "https://gateway.example/app/x/endpoint/data/v1",
      database: "app",
    });
  });

  it("builds a mongodb URI from DB_DRIVER and the host settings", () => {
    const settings = { DB_DRIVER: "mongodb", DB_HOST: "db", DB_PORT: 27019, DB_USERNAME: "a b", DB_PASSWORD: "p@ss", DB_AUTH_SOURCE: "admin", DB_NAME: "app" };
    expect(pick(settings)).toEqual({ uri: "mongodb://a%20b:p%40ss@db:27019/?authSource=admin", database: "app" });
  });

  it("refuses DB_DRIVER 'data-api' without the endpoint's URL", () => {
    expect(() => pick({ DB_DRIVER: "data-api" })).toThrow(/DB_DRIVER 'data-api' needs DB_URI/);
    expect(() => pick({ EDGE_DB_NAME: "x", EDGE_DB_DRIVER: "data-api" } as Settings, "EDGE")).toThrow(/EDGE_DB_DRIVER 'data-api' needs EDGE_DB_URI/);
  });
});

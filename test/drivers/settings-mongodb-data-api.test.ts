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

  it("connects to a replica set as Eve's settings name it: MONGO_REPLICA_SET, members in MONGO_HOST", () => {
    expect(pick({ MONGO_HOST: "db1:27017, db2:27018,db3", MONGO_PORT: 27019, MONGO_REPLICA_SET: "rs 0", MONGO_AUTH_SOURCE: "admin", MONGO_DBNAME: "app" } as Settings)).toEqual({
      uri: "mongodb://db1:27017,db2:27018,db3:27019/?authSource=admin&replicaSet=rs%200",
      database: "app",
    });
    expect(pick({ MONGO_REPLICA_SET: "rs0" } as Settings).uri).toBe("mongodb://localhost:27017/?replicaSet=rs0");
    expect(pick({ MONGO1_HOST: "other", MONGO1_REPLICA_SET: "rs1", MONGO1_DBNAME: "one" } as Settings, "MONGO1").uri).toBe("mongodb://other:27017/?replicaSet=rs1");
  });

  it("selects MongoDB when any server setting is given, as Eve does (MONGO_* spellings too)", () => {
    expect(pick({ MONGO_HOST: "db", MONGO_PORT: 27018, MONGO_DBNAME: "legacy" } as Settings)).toEqual({ uri: "mongodb://db:27018/", database: "legacy" });
    expect(pick({ DB_NAME: "app" })).toEqual({ uri: "mongodb://localhost:27017/", database: "app" });
    expect(pick({ MONGO_USERNAME: "u", MONGO_PASSWORD: "p" } as Settings).uri).toBe("mongodb://u:p@localhost:27017/");
  });

  it("reads prefixed settings in everest's and Eve's spellings; a prefix naming only a database keeps the server", () => {
    const settings = { MONGO_HOST: "main", MONGO1_HOST: "other", MONGO1_DBNAME: "one", TENANT_A_DB_NAME: "a", TENANT_B_DB_URI: "mongodb://b/bee" } as Settings;
    expect(pick(settings, "MONGO1")).toEqual({ uri: "mongodb://other:27017/", database: "one" });
    expect(pick(settings, "TENANT_A")).toEqual({ uri: "mongodb://main:27017/", database: "a" });
    expect(pick(settings, "TENANT_B")).toEqual({ uri: "mongodb://b/bee", database: "bee" });
    expect(pick({ TENANT_A_DB_NAME: "a" } as Settings, "TENANT_A")).toEqual({ uri: "memory", database: "a" });
  });

  it("refuses DB_DRIVER 'data-api' without the endpoint's URL", () => {
    expect(() => pick({ DB_DRIVER: "data-api" })).toThrow(/DB_DRIVER 'data-api' needs DB_URI/);
    expect(() => pick({ EDGE_DB_NAME: "x", EDGE_DB_DRIVER: "data-api" } as Settings, "EDGE")).toThrow(/EDGE_DB_DRIVER 'data-api' needs EDGE_DB_URI/);
  });
});

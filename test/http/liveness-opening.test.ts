// Liveness touches no database (docs/deploy.md): a driver still opening, however long it takes,
// must not hold it, while readiness gives up on that database after HEALTH_TIMEOUT. A MongoDB
// driver whose opening never ends stands in for a server that accepts and never answers.
import { afterAll, describe, expect, it } from "vitest";
import { createHandler } from "../../src/handler.ts";
import { registerMongodbDriver } from "../../src/drivers/registry.ts";

registerMongodbDriver(() => new Promise(() => undefined));

describe("health while a driver is still opening", () => {
  const handler = createHandler({ DB_URI: "mongodb://127.0.0.1:1/app", HEALTH_ENDPOINT: "health", HEALTH_TIMEOUT: 0.2, DOMAIN: { people: {} } });
  afterAll(() => void handler.app.close().catch(() => undefined));
  const get = async (path: string) => {
    const response = await handler(new Request(`http://everest.test${path}`));
    return { status: response.status, body: await response.json() };
  };

  it("liveness answers at once; readiness says the database timed out", async () => {
    const ready = get("/health/ready");
    expect(await get("/health")).toEqual({ status: 200, body: { status: "ok" } });
    expect(await ready).toEqual({ status: 503, body: { status: "unavailable", checks: { database: "timeout" } } });
    expect(await get("/health")).toEqual({ status: 200, body: { status: "ok" } });
  });
});

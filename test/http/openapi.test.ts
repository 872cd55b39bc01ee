// The OpenAPI document and the explorer's files on every runtime and driver: Node, Deno and Bun
// read Swagger UI from the installed package; Workers have no explorer unless given the files
// (docs/openapi.md), so there /docs is 404.
import { describe, expect, it } from "vitest";
import { testApi } from "../support/api.ts";
import { peopleSettings } from "../support/settings.ts";

const explorer = process.env.EVEREST_TEST_RUNTIME !== "workers";

describe("OpenAPI over HTTP", () => {
  it("GET /openapi.json describes the API", async () => {
    const api = testApi(peopleSettings());
    const response = await api.get("/openapi.json");
    expect(response.status).toBe(200);
    const document = await response.json();
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/", "/people", "/people/{_id}", "/works", "/works/{_id}"]));
  });

  it(explorer ? "GET /docs serves the page and the UI's files" : "GET /docs is off on Workers", async () => {
    const api = testApi(peopleSettings());
    for (const path of ["/docs", "/docs/explorer.js", "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]) {
      const response = await api.get(path);
      expect(response.status, path).toBe(explorer ? 200 : 404);
      if (explorer) expect((await response.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
    }
  });
});

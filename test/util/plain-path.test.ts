import { describe, expect, it } from "vitest";
import { absoluteUrl } from "../../src/http/plain-path.ts";

// Location headers and Node request URLs skip the URL parse for plain paths: the result must be
// what URL gives for every path, plain or not.
describe("absoluteUrl", () => {
  it("equals new URL(path, origin).href", () => {
    const origins = ["http://127.0.0.1:5000", "https://api.example.com", "http://[::1]:8080"];
    const paths = [
      "/people/6b0742a1df7d19d956bc433a",
      "/api/v1/people/abc",
      "/people/a%20b",
      "/people/a b",
      "/people/é",
      "/people/../secret",
      "/people/./x",
      "/people/%2e%2e/x",
      "//evil.example/x",
      "/people/x?y",
      "/people/x#y",
      "/people/it's(1)*,;=:@~!$&+",
      "/people/back\\slash",
      "/people/<tag>",
      "/",
    ];
    for (const origin of origins) for (const path of paths) expect(absoluteUrl(origin, path)).toBe(new URL(path, origin).href);
  });
});

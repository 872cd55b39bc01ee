import { describe, expect, it } from "vitest";
import { parsePaging } from "../../src/query/paging.ts";
import { config, expect400, resource } from "./fixture.ts";

const cfg = config();
const people = resource(cfg, "people");
const paging = (query: string, res = people) => parsePaging(new URLSearchParams(query), res, cfg);

describe("parsePaging", () => {
  it("defaults to page 1 and PAGINATION_DEFAULT", () => {
    expect(paging("")).toEqual({ page: 1, maxResults: 25 });
  });

  it("reads page and max_results (exchange 7)", () => {
    expect(paging("max_results=1&page=2")).toEqual({ page: 2, maxResults: 1 });
  });

  it("clamps max_results to PAGINATION_LIMIT (exchange 9), huge values included", () => {
    expect(paging("max_results=1000").maxResults).toBe(50);
    expect(paging("max_results=1e30").maxResults).toBe(50);
    expect(paging("max_results=inf").maxResults).toBe(50);
  });

  it("reads max_results as Python's int(float(x)) and falls back to the default otherwise", () => {
    expect(paging("max_results=2.9").maxResults).toBe(2);
    expect(paging("max_results= 3 ").maxResults).toBe(3);
    expect(paging("max_results=1_0").maxResults).toBe(10);
    for (const bad of ["0", "-4", "abc", "nan", "", "0x10", "0.5"]) expect(paging(`max_results=${bad}`).maxResults).toBe(25);
  });

  it("reads page as abs(int(x)) or 1, as Eve does", () => {
    expect(paging("page=0").page).toBe(1);
    expect(paging("page=-3").page).toBe(3);
    expect(paging("page=+4").page).toBe(4);
    expect(paging("page=99").page).toBe(99);
    for (const bad of ["abc", "2.5", "1e3", ""]) expect(paging(`page=${bad}`).page).toBe(1);
  });

  it("answers 400 for a page whose offset cannot be represented", () => {
    expect400(() => paging("page=99999999999999999999"));
  });

  it("honours the resource's pagination settings", () => {
    const own = config((s) => Object.assign(s.DOMAIN!.people!, { pagination_limit: 5, pagination_default: 3 }));
    expect(parsePaging(new URLSearchParams(""), resource(own, "people"), own).maxResults).toBe(3);
    expect(parsePaging(new URLSearchParams("max_results=9"), resource(own, "people"), own).maxResults).toBe(5);
  });

  it("without pagination: page 1, no limit unless asked, and no clamping", () => {
    const flat = config((s) => (s.DOMAIN!.people!.pagination = false));
    const res = resource(flat, "people");
    expect(parsePaging(new URLSearchParams("page=3"), res, flat)).toEqual({ page: 1, maxResults: 0 });
    expect(parsePaging(new URLSearchParams("max_results=500"), res, flat)).toEqual({ page: 1, maxResults: 500 });
  });
});

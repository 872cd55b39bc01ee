import { describe, expect, it } from "vitest";
import { otherParams, paginationQueries, querydef } from "../../src/query/links.ts";
import { parsePaging } from "../../src/query/paging.ts";
import type { Config } from "../../src/settings/normalize.ts";
import { loadExchanges } from "../support/exchanges.ts";
import { config, resource } from "./fixture.ts";

/** The query strings of a collection read, as the handler would compute them. */
function queries(search: string, total: number | null, name = "people", cfg: Config = config()) {
  const args = new URLSearchParams(search);
  const res = resource(cfg, name);
  return paginationQueries(args, res, cfg, parsePaging(args, res, cfg), total);
}

/** What the recorded Eve response says for the link `rel`: the part of its href after the path. */
function recordedQuery(number: number, rel: string): string | undefined {
  const exchange = loadExchanges().find((e) => e.number === number)!;
  const href: string | undefined = JSON.parse(exchange.response.body)._links[rel]?.href;
  return href === undefined ? undefined : href.slice(href.split("?")[0]!.length);
}

describe("paginationQueries against the recorded exchanges", () => {
  const recorded = (number: number) => {
    const exchange = loadExchanges().find((e) => e.number === number)!;
    const body = JSON.parse(exchange.response.body);
    return { search: exchange.request.url.search, total: body._meta.total as number, resource: exchange.request.url.pathname.slice(1) };
  };

  it.each([4, 5, 6, 7, 8, 9, 10, 48, 49, 55])("exchange %i", (number) => {
    const { search, total, resource: name } = recorded(number);
    const result = queries(search, total, name);
    for (const rel of ["self", "next", "prev", "last"] as const) {
      expect(result[rel], rel).toBe(recordedQuery(number, rel));
    }
  });

  it("writes values as sent, not percent-encoded (exchanges 5 and 7)", () => {
    expect(queries('where={"lastname":"Doe"}', 1).self).toBe('?where={"lastname":"Doe"}');
    expect(queries("sort=-lastname&projection={\"lastname\":1}&max_results=1&page=2", 3)).toEqual({
      self: "?max_results=1&sort=-lastname&page=2",
      next: "?max_results=1&sort=-lastname&page=3",
      last: "?max_results=1&sort=-lastname&page=3",
      prev: "?max_results=1&sort=-lastname",
    });
  });
});

describe("paginationQueries rules", () => {
  it("gives the self link no query when nothing matched", () => {
    expect(queries("max_results=2", 0)).toEqual({ self: "" });
  });

  it("drops embedded and projection, keeps other parameters grouped by key", () => {
    expect(queries("a=1&embedded={}&b=2&projection={}&a=3&callback=cb", 5).self).toBe("?a=1&a=3&b=2&callback=cb");
  });

  it("drops where without allowed filters and sort without sorting", () => {
    const cfg = config((s) => Object.assign(s.DOMAIN!.people!, { allowed_filters: [], sorting: false }));
    expect(queries("where=x&sort=y&z=1", 5, "people", cfg).self).toBe("?z=1");
  });

  it("always offers next, and never last, without a count", () => {
    const cfg = config((s) => (s.DOMAIN!.people!.optimize_pagination_for_speed = true));
    expect(queries("page=2", null, "people", cfg)).toEqual({ self: "", next: "?page=3", prev: "" });
  });

  it("gives no page links without pagination (and, as Eve, `max_results=0` in self)", () => {
    const cfg = config((s) => (s.DOMAIN!.people!.pagination = false));
    expect(queries("page=3", 100, "people", cfg)).toEqual({ self: "?max_results=0" });
  });

  it("carries the version on versioned resources, without the sort Eve adds for it", () => {
    const cfg = config();
    expect(queries('version=all&sort=[("_version", 1)]', 2, "notes", cfg).self).toBe("?version=all");
    expect(queries("version=all", 2, "people", cfg).self).toBe("");
  });
});

describe("querydef and otherParams", () => {
  const cfg = config();
  it("orders max_results, where, sort, version, page, then the others", () => {
    const query = { maxResults: 5, defaultMaxResults: 25, where: "w", sort: "s", version: "v", other: [["x", "1"]] as Array<[string, string]> };
    expect(querydef(query, 2, cfg)).toBe("?max_results=5&where=w&sort=s&version=v&page=2&x=1");
    expect(querydef({ ...query, maxResults: 25, where: null, sort: null, version: null, other: [] }, 1, cfg)).toBe("");
  });

  it("keeps a valueless flag as `name=` (exchange 49)", () => {
    expect(otherParams(new URLSearchParams("show_deleted"), cfg)).toEqual([["show_deleted", ""]]);
  });
});

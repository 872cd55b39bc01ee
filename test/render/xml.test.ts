import { Decimal128, ObjectId } from "bson";
import { describe, expect, it } from "vitest";
import { renderXml } from "../../src/render/xml.ts";
import { normalizeSettings } from "../../src/settings/normalize.ts";
import { loadExchanges } from "../support/exchanges.ts";

const config = normalizeSettings({ DOMAIN: {} });
const xml = (payload: Record<string, unknown> | unknown[], cfg = config) => renderXml(payload, cfg);

const at = (day: number, h: number, m: number, s: number) => new Date(Date.UTC(2026, 10, day, h, m, s));
const person = (id: string) => ({ self: { title: "person", href: `people/${id}` } });

function recordedBody(number: number): string {
  const exchange = loadExchanges().find((e) => e.number === number)!;
  expect(exchange.response.headers["content-type"]).toBe("application/xml; charset=utf-8");
  return exchange.response.body;
}

describe("renderXml against the recorded exchanges", () => {
  it("renders a collection exactly as exchange 30", () => {
    const payload = {
      _items: [
        {
          firstname: "Jon", lastname: "Doe", role: ["copy"],
          _updated: at(21, 11, 23, 49), _created: at(21, 11, 23, 48),
          _etag: "f04acb700ee2c132918aff93380c0acb2169ee50", _id: new ObjectId("6b017f44150443131587b088"),
          _links: person("6b017f44150443131587b088"),
        },
        {
          firstname: "Serena", lastname: "Williams", role: ["contributor"], born: new Date(Date.UTC(1981, 8, 26, 10)),
          _updated: at(21, 11, 23, 48), _created: at(21, 11, 23, 48),
          _etag: "1c8937553260f9f3f7ffe01a8207840df65d6f56", _id: new ObjectId("6b017f44150443131587b089"),
          _links: person("6b017f44150443131587b089"),
        },
      ],
      _links: {
        parent: { title: "home", href: "/" },
        self: { title: "people", href: "people?max_results=2" },
        next: { title: "next page", href: "people?max_results=2&page=2" },
        last: { title: "last page", href: "people?max_results=2&page=2" },
      },
      _meta: { page: 1, max_results: 2, total: 3 },
    };
    expect(xml(payload)).toBe(recordedBody(30));
  });

  it("renders an item exactly as exchange 31", () => {
    const payload = {
      firstname: "Jon", lastname: "Doe", role: ["copy"],
      _updated: "Sat, 21 Nov 2026 11:23:49 GMT", _created: "Sat, 21 Nov 2026 11:23:48 GMT",
      _etag: "f04acb700ee2c132918aff93380c0acb2169ee50", _id: "6b017f44150443131587b088",
      _links: {
        self: { title: "person", href: "people/6b017f44150443131587b088" },
        parent: { title: "home", href: "/" },
        collection: { title: "people", href: "people" },
      },
    };
    expect(xml(payload)).toBe(recordedBody(31));
  });

  it("renders the home page's child links (exchange 1 as XML)", () => {
    const home = JSON.parse(loadExchanges().find((e) => e.number === 1)!.response.body);
    expect(xml(home)).toBe(
      '<resource><link rel="child" href="people" title="people" /><link rel="child" href="works" title="works" />' +
        '<link rel="child" href="notes" title="notes" /><link rel="child" href="images" title="images" /></resource>',
    );
  });
});

describe("renderXml details", () => {
  it("escapes hrefs and values as markupsafe does, leaving single titles as given", () => {
    expect(xml({ _links: { self: { href: "a?x=1&y=<2>", title: "T&C" } }, note: `"it's" <b> & co` })).toBe(
      '<resource href="a?x=1&amp;y=&lt;2&gt;"  title="T&C" ><note>&#34;it&#39;s&#34; &lt;b&gt; &amp; co</note></resource>',
    );
    expect(xml({ _links: { child: [{ href: "a&b", title: "x<y" }], other: { href: "c&d", title: "p<q" } } })).toBe(
      '<resource><link rel="child" href="a&amp;b" title="x&lt;y" /><link rel="other" href="c&amp;d" title="p<q" /></resource>',
    );
  });

  it("writes leaves as Python's str(): True, None, floats, nested lists", () => {
    expect(xml({ a: true, b: null, c: 1.5, d: 1e16, e: 3, f: 1e-5, g: [[1, "x'y"], { k: false }], h: -0 })).toBe(
      "<resource><a>True</a><b>None</b><c>1.5</c><d>1e+16</d><e>3</e><f>1e-05</f>" +
        "<g>[1, &#34;x&#39;y&#34;]</g><g><k>False</k></g><h>-0.0</h></resource>",
    );
  });

  it("sorts keys by code point, nests dicts, repeats lists, puts nested links after the fields", () => {
    const payload = {
      z: { b: 2, a: 1, _links: { self: { href: "x/1", title: "X" } } },
      B: ["one", "two"],
      _a: "u",
    };
    expect(xml(payload)).toBe(
      '<resource><B>one</B><B>two</B><_a>u</_a><z><a>1</a><b>2</b><link rel="self" href="x/1" title="X" /></z></resource>',
    );
  });

  it("renders data relation links as attributes of the field (Eve 0.8.2)", () => {
    const payload = {
      owner: "6b017f44150443131587b088",
      tags: ["a", "b"],
      _links: {
        self: { title: "Work", href: "works/1" },
        related: { owner: { title: "person", href: "people/6b017f44150443131587b088" }, tags: [{ title: "T", href: "t/a" }, { title: "T", href: "t/b" }] },
      },
    };
    expect(xml(payload)).toBe(
      '<resource href="works/1"  title="Work" ><owner href="people/6b017f44150443131587b088" title="person">6b017f44150443131587b088</owner>' +
        '<tags href="t/a" title="T">a</tags><tags href="t/b" title="T">b</tags></resource>',
    );
  });

  it("renders canonical values as JSON shows them, DATE_FORMAT included", () => {
    const cfg = normalizeSettings({ DOMAIN: {}, DATE_FORMAT: "%Y-%m-%d" });
    const payload = { when: new Date(Date.UTC(2020, 0, 2)), id: new ObjectId("6b017f44150443131587b088"), price: Decimal128.fromString("1.10") };
    expect(xml(payload, cfg)).toBe("<resource><id>6b017f44150443131587b088</id><price>1.10</price><when>2020-01-02</when></resource>");
  });

  it("renders _meta values with %d and skips other keys of a collection", () => {
    expect(xml({ _items: [], _meta: { total: 3, page: 1.9, max_results: 25 }, _status: "OK" })).toBe(
      "<resource><_meta><max_results>25</max_results><page>1</page><total>3</total></_meta></resource>",
    );
  });

  it("renders a list as _items, a non-resource _items as fields, and nothing for {}", () => {
    expect(xml([{ a: 1 }])).toBe("<resource><resource><a>1</a></resource></resource>");
    expect(xml({ _items: ["x", "y"] })).toBe("<resource><_items>x</_items><_items>y</_items></resource>");
    expect(xml({})).toBe("");
  });

  it("renders an error envelope", () => {
    expect(xml({ _status: "ERR", _error: { code: 404, message: "Not <found>" } })).toBe(
      "<resource><_error><code>404</code><message>Not &lt;found&gt;</message></_error><_status>ERR</_status></resource>",
    );
  });

  it("leaves the payload untouched", () => {
    const payload = { _links: { self: { href: "a", title: "b" }, parent: { href: "/", title: "home" } }, _items: [{ _links: { self: { href: "c", title: "d" } } }] };
    const copy = structuredClone(payload);
    xml(payload);
    expect(payload).toEqual(copy);
  });
});

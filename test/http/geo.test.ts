// GeoJSON queries in `where`: $near/$nearSphere (ordered by distance, bounded), $geoWithin,
// $geoIntersects, on the memory driver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, testApi } from "../support/api.ts";
import { ON_MONGODB_EMULATOR } from "../support/drivers.ts";
import type { Settings } from "../../src/settings/types.ts";

const COLOSSEUM = [12.4922, 41.8902];
const PLACES = [
  { name: "Milan", location: { type: "Point", coordinates: [9.19, 45.4642] } },
  { name: "Vatican", location: { type: "Point", coordinates: [12.4534, 41.9029] } }, // ~3.5 km from the Colosseum
  { name: "Paris", location: { type: "Point", coordinates: [2.3522, 48.8566] } },
  { name: "Colosseum", location: { type: "Point", coordinates: COLOSSEUM } },
  { name: "Nowhere" },
];
const square = (x: number, y: number, size: number) => ({
  type: "Polygon",
  coordinates: [[[x, y], [x + size, y], [x + size, y + size], [x, y + size], [x, y]]],
});
const ITALY = square(6, 36, 13);

function settings(): Settings {
  return {
    RESOURCE_METHODS: ["GET", "POST"],
    DOMAIN: {
      // Beyond Eve's operator list, as Eve's own settings allow them: a legacy polygon, a query's comment.
      places: { mongo_query_whitelist: ["$polygon", "$comment"], schema: { name: { type: "string" }, location: { type: "point" } } },
      zones: { schema: { name: { type: "string" }, area: { type: "polygon" } } },
      nearby: {
        datasource: {
          source: "places",
          filter: { name: { $ne: "Paris" } },
          aggregation: {
            pipeline: [
              { $geoNear: { near: "$point", distanceField: "meters", maxDistance: "$radius" } },
              { $project: { _id: 0, name: 1, meters: { $round: ["$meters", 0] } } },
            ],
          },
        },
      },
    },
  };
}

describe("GeoJSON queries", () => {
  const api = testApi(settings());
  beforeAll(async () => {
    expect((await api.post("/places", PLACES)).status).toBe(201);
    expect((await api.post("/zones", [{ name: "italy", area: ITALY }, { name: "north", area: square(0, 44, 20) }])).status).toBe(201);
  });
  afterAll(() => api.close());

  const where = (resource: string, query: unknown, extra = "") => `/${resource}?where=${encodeURIComponent(JSON.stringify(query))}${extra}`;
  const names = async (path: string) => {
    const response = await api.get(path);
    expect(response.status, path).toBe(200);
    return (await json(response))._items.map((d: any) => d.name);
  };
  const point = (coordinates: number[]) => ({ $geometry: { type: "Point", coordinates } });

  it("$near orders by distance and honours $maxDistance/$minDistance in meters", async () => {
    expect(await names(where("places", { location: { $near: point(COLOSSEUM) } }))).toEqual(["Colosseum", "Vatican", "Milan", "Paris"]);
    expect(await names(where("places", { location: { $near: { ...point(COLOSSEUM), $maxDistance: 5000 } } }))).toEqual(["Colosseum", "Vatican"]);
    expect(await names(where("places", { location: { $near: { ...point(COLOSSEUM), $minDistance: 1000, $maxDistance: 600000 } } }))).toEqual(["Vatican", "Milan"]);
  });

  it("pages and counts in distance order; a client sort wins over it", async () => {
    const body = await json(await api.get(where("places", { location: { $near: point(COLOSSEUM) } }, "&max_results=2&page=2")));
    expect(body._items.map((d: any) => d.name)).toEqual(["Milan", "Paris"]);
    expect(body._meta.total).toBe(4);
    expect(await names(where("places", { location: { $near: point(COLOSSEUM) } }, "&sort=name"))).toEqual(["Colosseum", "Milan", "Paris", "Vatican"]);
  });

  it("$nearSphere takes a legacy pair with the bound beside it, in radians", async () => {
    // 0.01 rad is about 64 km on the Earth's surface.
    expect(await names(where("places", { location: { $nearSphere: [12.4534, 41.9029], $maxDistance: 0.01 } }))).toEqual(["Vatican", "Colosseum"]);
  });

  it("$geoWithin a polygon, a spherical circle or a box", async () => {
    expect((await names(where("places", { location: { $geoWithin: { $geometry: ITALY } } }))).sort()).toEqual(["Colosseum", "Milan", "Vatican"]);
    expect((await names(where("places", { location: { $geoWithin: { $centerSphere: [COLOSSEUM, 10 / 6378.1] } } }))).sort()).toEqual(["Colosseum", "Vatican"]);
    expect((await names(where("places", { location: { $geoWithin: { $box: [[0, 44], [10, 50]] } } }))).sort()).toEqual(["Milan", "Paris"]);
    // A legacy polygon of coordinate pairs, and a query's $comment, which matches nothing.
    expect((await names(where("places", { location: { $geoWithin: { $polygon: [[0, 44], [0, 50], [10, 50], [10, 44]] } }, $comment: "north" }))).sort()).toEqual(["Milan", "Paris"]);
  });

  it("$geoIntersects stored polygons with a point or a line", async () => {
    expect(await names(where("zones", { area: { $geoIntersects: { $geometry: { type: "Point", coordinates: COLOSSEUM } } } }))).toEqual(["italy"]);
    const line = { type: "LineString", coordinates: [[12, 41], [12, 47]] };
    expect((await names(where("zones", { area: { $geoIntersects: { $geometry: line } } }))).sort()).toEqual(["italy", "north"]);
    const far = { type: "Point", coordinates: [-70, -30] };
    expect(await names(where("zones", { area: { $geoIntersects: { $geometry: far } } }))).toEqual([]);
  });

  it("combines with other conditions", async () => {
    const query = { $and: [{ location: { $near: point(COLOSSEUM) } }, { name: { $ne: "Colosseum" } }] };
    expect(await names(where("places", query, "&max_results=1"))).toEqual(["Vatican"]);
  });

  // mongomock has no $round, which the pipeline's distance projection uses.
  it.skipIf(ON_MONGODB_EMULATOR)("serves $geoNear pipelines: nearest first, with the distance, under the datasource filter", async () => {
    const aggregate = (value: unknown) => `/nearby?aggregate=${encodeURIComponent(JSON.stringify(value))}`;
    const all = await json(await api.get(aggregate({ $point: point(COLOSSEUM).$geometry, $radius: {} })));
    expect(all._items.map((d: any) => d.name)).toEqual(["Colosseum", "Vatican", "Milan"]);
    expect(all._items[0].meters).toBe(0);
    expect(all._items[1].meters).toBeGreaterThan(3000);
    expect(all._items[1].meters).toBeLessThan(4000);
    const close = await json(await api.get(aggregate({ $point: point(COLOSSEUM).$geometry, $radius: 5000 })));
    expect(close._items.map((d: any) => d.name)).toEqual(["Colosseum", "Vatican"]);
    expect((await api.get(aggregate({ $point: "here", $radius: {} }))).status).toBe(400);
  });

  it("refuses to store a position out of a longitude's or latitude's bounds, as MongoDB's 2dsphere index does", async () => {
    for (const coordinates of [[500, 500], [181, 0], [0, -90.5]]) {
      const refused = await api.post("/places", { name: "Beyond", location: { type: "Point", coordinates } });
      expect(refused.status, JSON.stringify(coordinates)).toBe(422);
      expect((await json(refused))._issues).toHaveProperty("location");
    }
    expect(await names(where("places", { name: "Beyond" }))).toEqual([]);
  });

  it("refuses malformed geo operands with 400", async () => {
    const bad = [
      { location: { $near: { $geometry: ITALY } } },
      { location: { $near: "here" } },
      { location: { $near: { ...point(COLOSSEUM), $maxDistance: -1 } } },
      { location: { $geoWithin: { $geometry: { type: "Point", coordinates: COLOSSEUM } } } },
      { location: { $geoWithin: { $circle: [COLOSSEUM, 1] } } },
      { area: { $geoIntersects: { $geometry: { type: "Polygon" } } } },
      // Out of a longitude's and latitude's bounds: MongoDB refuses the query, the embedded store ran it.
      { location: { $near: { $geometry: { type: "Point", coordinates: [200, 41.9] } } } },
      { location: { $near: { $geometry: { type: "Point", coordinates: [12.5, -91] } } } },
      { area: { $geoIntersects: { $geometry: { type: "LineString", coordinates: [[0, 0], [181, 0]] } } } },
      // MongoDB takes $near only as a condition of the query itself.
      { $or: [{ location: { $near: point(COLOSSEUM) } }, { name: "x" }] },
      { location: { $not: { $near: point(COLOSSEUM) } } },
      // A legacy pair is a longitude and a latitude too.
      { location: { $near: [200, 41.9] } },
      { location: { $nearSphere: [12.5, 95] } },
      { location: { $geoWithin: { $centerSphere: [[200, 0], 0.1] } } },
      // A circle's radius is not negative.
      { location: { $geoWithin: { $center: [COLOSSEUM, -1] } } },
      { location: { $geoWithin: { $centerSphere: [COLOSSEUM, -0.1] } } },
    ];
    for (const query of bad) {
      const resource = "area" in query ? "zones" : "places";
      expect((await api.get(where(resource, query))).status, JSON.stringify(query)).toBe(400);
    }
    expect((await api.get(where("places", { $and: [{ location: { $near: point(COLOSSEUM) } }] }))).status).toBe(200);
  });
});

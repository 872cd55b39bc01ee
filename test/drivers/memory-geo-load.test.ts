// The memory driver imports turf only once a geo operator is used (src/drivers/memory/geo.ts).
// Each test file gets fresh modules, so turf is not loaded when this file starts.
import { describe, expect, it } from "vitest";
import { needsGeometry } from "../../src/drivers/memory/geo.ts";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";

const near = { $near: { $geometry: { type: "Point", coordinates: [0, 0] }, $maxDistance: 1000 } };

describe("memory driver: turf on first use", () => {
  it("sees geo operators wherever a filter, update or pipeline holds them", () => {
    expect(needsGeometry({ name: "a", n: { $gt: 1 } })).toBe(false);
    expect(needsGeometry([{ $match: { n: 1 } }, { $group: { _id: "$n" } }])).toBe(false);
    expect(needsGeometry({ loc: near })).toBe(true);
    expect(needsGeometry({ $and: [{ n: 1 }, { loc: { $geoWithin: { $box: [[0, 0], [1, 1]] } } }] })).toBe(true);
    expect(needsGeometry({}, { $pull: { places: { $geoIntersects: { $geometry: { type: "Point", coordinates: [0, 0] } } } } })).toBe(true);
    expect(needsGeometry([{ $facet: { nearby: [{ $geoNear: { near: [0, 0], distanceField: "d" } }] } }])).toBe(true);
    expect(needsGeometry(Object.assign(Object.create(null), { loc: near }))).toBe(true);
  });

  it("answers the first geo query of a process, then needs nothing more", async () => {
    const driver = await MemoryDriver.open({ databaseName: "geo" });
    const target = { collection: "places" };
    await driver.insertMany(target, [
      { name: "here", loc: { type: "Point", coordinates: [0, 0] } },
      { name: "far", loc: { type: "Point", coordinates: [10, 10] } },
    ]);
    expect(needsGeometry({ loc: near })).toBe(true);
    const found = await driver.find(target, { filter: { loc: near } });
    expect(found.map((doc) => doc.name)).toEqual(["here"]);
    expect(needsGeometry({ loc: near })).toBe(false);
  });
});

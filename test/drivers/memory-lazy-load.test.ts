// The memory driver imports turf and its aggregation operators only once an operation needs
// them (src/drivers/memory/mingo.ts, loadFor). Each test file gets fresh modules, so neither is
// loaded when this file starts; each test here is the first of its kind.
import { describe, expect, it } from "vitest";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { loadFor, needsGeometry } from "../../src/drivers/memory/mingo.ts";
import { InvalidQueryError } from "../../src/drivers/types.ts";
import { rejection } from "./conformance.ts";

const near = { $near: { $geometry: { type: "Point", coordinates: [0, 0] }, $maxDistance: 1000 } };
const target = { collection: "places" };

async function driverWithPlaces(): Promise<MemoryDriver> {
  const driver = await MemoryDriver.open({ databaseName: "lazy" });
  await driver.insertMany(target, [
    { name: "here", n: 1, m: 2, loc: { type: "Point", coordinates: [0, 0] } },
    { name: "far", n: 3, m: 2, loc: { type: "Point", coordinates: [10, 10] } },
  ]);
  return driver;
}

describe("memory driver: modules loaded on first use", () => {
  it("sees geo operators wherever a filter, update or pipeline holds them", () => {
    expect(needsGeometry({ name: "a", n: { $gt: 1 } })).toBe(false);
    expect(needsGeometry([{ $match: { n: 1 } }, { $group: { _id: "$n" } }])).toBe(false);
    expect(needsGeometry({ loc: near })).toBe(true);
    expect(needsGeometry({ $and: [{ n: 1 }, { loc: { $geoWithin: { $box: [[0, 0], [1, 1]] } } }] })).toBe(true);
    expect(needsGeometry({}, { $pull: { places: { $geoIntersects: { $geometry: { type: "Point", coordinates: [0, 0] } } } } })).toBe(true);
    expect(needsGeometry([{ $facet: { nearby: [{ $geoNear: { near: [0, 0], distanceField: "d" } }] } }])).toBe(true);
    expect(needsGeometry(Object.assign(Object.create(null), { loc: near }))).toBe(true);
  });

  it("loads nothing for reads and writes without geo operators, pipelines or $expr", () => {
    expect(loadFor({ filter: { name: "here", n: { $in: [1, 2] }, $or: [{ m: 2 }, { m: { $exists: false } }] } })).toBeNull();
    expect(loadFor({ filter: { _id: 1 }, update: { $set: { n: 2 }, $pull: { tags: { $in: ["a"] } } } })).toBeNull();
    // What $set writes is data, not a condition: its keys are not looked at (a PATCH's document).
    expect(loadFor({ filter: { _id: 1 }, update: { $set: { shape: { $near: [0, 0] } } } })).toBeNull();
  });

  it("answers a first $expr filter", async () => {
    const driver = await driverWithPlaces();
    const found = await driver.find(target, { filter: { $expr: { $gt: [{ $add: ["$n", "$m"] }, 4] } } });
    expect(found.map((doc) => doc.name)).toEqual(["far"]);
  });

  it("answers a first geo query, then needs nothing more for the next", async () => {
    const driver = await driverWithPlaces();
    // A $pull condition is a query: a geo operator there is what loads turf.
    const loading = loadFor({ filter: {}, update: { $pull: { spots: { $geoWithin: { $box: [[0, 0], [1, 1]] } } } } });
    expect(loading).not.toBeNull();
    await loading;
    const found = await driver.find(target, { filter: { loc: near } });
    expect(found.map((doc) => doc.name)).toEqual(["here"]);
    expect(needsGeometry({ loc: near })).toBe(false);
  });

  it("runs pipelines once loaded; window functions are not offered (docs/drivers.md)", async () => {
    const driver = await driverWithPlaces();
    const grouped = await driver.aggregate(target, [{ $group: { _id: "$m", total: { $sum: "$n" }, names: { $push: "$name" } } }]);
    expect(grouped).toEqual([{ _id: 2, total: 4, names: ["here", "far"] }]);
    expect(loadFor({ pipeline: [] })).toBeNull();
    const windowed = driver.aggregate(target, [{ $setWindowFields: { sortBy: { n: 1 }, output: { rank: { $rank: {} } } } }]);
    expect(await rejection(windowed)).toBeInstanceOf(InvalidQueryError);
  });
});

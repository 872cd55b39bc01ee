// The count filter for MongoDB (nearAsWithin) matches what the $near filter matches: checked on
// the memory driver, which implements both operator families.
import { describe, expect, it } from "vitest";
import { MemoryDriver } from "../../src/drivers/memory/index.ts";
import { nearAsWithin } from "../../src/drivers/near-count.ts";
import type { Filter } from "../../src/drivers/types.ts";

const target = { collection: "places" };
const point = (coordinates: number[]) => ({ type: "Point", coordinates });
const ROME = [12.4922, 41.8902];

async function driverWithPlaces(): Promise<MemoryDriver> {
  const driver = await MemoryDriver.open({ databaseName: "test" });
  const places: Array<[string, number[]]> = [
    ["Rome", ROME], ["Vatican", [12.4534, 41.9029]], ["Naples", [14.2681, 40.8518]],
    ["Milan", [9.19, 45.4642]], ["Paris", [2.3522, 48.8566]],
  ];
  await driver.insertMany(target, places.map(([name, coordinates]) => ({ name, loc: point(coordinates), pair: coordinates })));
  await driver.insertMany(target, [{ name: "Nowhere" }]);
  return driver;
}

describe("nearAsWithin", () => {
  const cases: Array<[string, Filter]> = [
    ["GeoJSON $near, max", { loc: { $near: { $geometry: point(ROME), $maxDistance: 200000 } } }],
    ["GeoJSON $near, min and max", { loc: { $near: { $geometry: point(ROME), $minDistance: 1000, $maxDistance: 600000 } } }],
    ["GeoJSON $nearSphere, no bound", { loc: { $nearSphere: { $geometry: point(ROME) } } }],
    ["legacy $near, planar units beside", { pair: { $near: ROME, $maxDistance: 3 } }],
    ["legacy $nearSphere, radians beside", { pair: { $nearSphere: ROME, $maxDistance: 0.05, $minDistance: 0.001 } }],
    ["inside $and, with other conditions", { $and: [{ loc: { $near: { $geometry: point(ROME), $maxDistance: 900000 } } }, { name: { $ne: "Milan" } }] }],
  ];

  for (const [label, filter] of cases) {
    it(`counts what the filter finds: ${label}`, async () => {
      const driver = await driverWithPlaces();
      const rewritten = nearAsWithin(filter);
      expect(JSON.stringify(rewritten)).not.toMatch(/\$near/);
      const found = await driver.find(target, { filter });
      expect(found.length).toBeGreaterThan(0);
      expect(await driver.count(target, rewritten)).toBe(found.length);
    });
  }

  it("returns a filter without $near as it is", () => {
    const filter = { name: "Rome", $or: [{ a: 1 }] };
    expect(nearAsWithin(filter)).toBe(filter);
  });
});

// Documents of the field-rule scenario, stored by HR (which may write every field). Every value
// a staff member may not read is marked with SECRET (or is a number no other field holds), so a
// test can look for a leak in any body as text.
import { expect } from "vitest";
import { json, moduleSettings, testApi, type TestApi } from "../../support/api.ts";
import type { Settings } from "../../../src/index.ts";
import base, { login, SECRET, type Account } from "./settings.ts";

export { login, SECRET };

/** The API over the scenario's settings (with `overrides`), on whichever driver and runtime the suite runs. */
export function fieldRulesApi(overrides: Settings = {}): TestApi {
  return testApi(moduleSettings(base, new URL("./settings.ts", import.meta.url), overrides));
}

/** Numbers only the hidden fields hold. */
export const SALARY = { boss: 970001, sam: 970002 };
export const COST = 970003;

/** Everything a staff member must never see, as it appears in a body. */
export const HIDDEN_MARKERS = [SECRET, String(SALARY.boss), String(SALARY.sam), String(COST)];

export function boss(): Record<string, unknown> {
  return {
    name: "Boss",
    login: "hana",
    salary: SALARY.boss,
    review: `${SECRET}-review-boss`,
    profile: { city: "Oslo", ssn: `${SECRET}-ssn-boss` },
    badges: [{ label: "gold", cost: COST }, { label: "silver" }],
    code: `${SECRET}-code-boss`,
    pin: `${SECRET}-pin`,
  };
}

export function sam(manager?: string): Record<string, unknown> {
  return {
    name: "Sam",
    login: "sam",
    salary: SALARY.sam,
    review: "Sam's own review",
    profile: { city: "Bergen", ssn: `${SECRET}-ssn-sam` },
    badges: [{ label: "bronze", cost: COST }],
    code: `${SECRET}-code-sam`,
    ...(manager ? { manager } : {}),
  };
}

export interface Seeded {
  boss: string;
  sam: string;
}

/** Boss and Sam stored in `resource` by HR; their ids. */
export async function seed(api: TestApi, resource = "employees"): Promise<Seeded> {
  const first = await api.post(`/${resource}`, boss(), login("hana"));
  expect(first.status, await first.clone().text()).toBe(201);
  const bossId = (await json(first))._id as string;
  const second = await api.post(`/${resource}`, sam(bossId), login("hana"));
  expect(second.status, await second.clone().text()).toBe(201);
  return { boss: bossId, sam: (await json(second))._id as string };
}

/** The scenario's API with Boss and Sam stored by HR. */
export async function seededApi(overrides: Settings = {}): Promise<{ api: TestApi; ids: Seeded }> {
  const api = fieldRulesApi(overrides);
  return { api, ids: await seed(api) };
}

/** A GET as one of the accounts. */
export function getAs(api: TestApi, account: Account, path: string, headers: Record<string, string> = {}): Promise<Response> {
  return api.get(path, { ...login(account), ...headers });
}

/** Fails when a body holds any value a staff member may not read. */
export function expectNoHiddenValue(text: string): void {
  for (const marker of HIDDEN_MARKERS) expect(text, `the body shows '${marker}'`).not.toContain(marker);
}

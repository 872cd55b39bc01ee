// Start-up checks of the paging settings (src/settings/opt-in.ts): each value, and the checks
// that involve several settings of a resource.
import { describe, expect, it } from "vitest";
import { SettingsError, validateSettings } from "../../src/settings/validate.ts";
import type { Settings } from "../../src/settings/types.ts";

function problems(settings: Settings): string[] {
  try {
    validateSettings(settings);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
}

const domain = (resource: Record<string, unknown> = {}): Settings["DOMAIN"] => ({ people: { schema: { name: { type: "string" } }, ...resource } });
const SECRET = "sixteen or more characters";

describe("paging settings", () => {
  it("accept the switches, every count strategy, secrets and parameter names", () => {
    for (const count of ["exact", "estimated", "none", null] as const) {
      expect(problems({ PAGINATION_CURSOR: true, PAGINATION_COUNT: count, DOMAIN: domain({ pagination_count: count, pagination_cursor: false }) })).toEqual([]);
    }
    expect(problems({ PAGINATION_CURSOR_SECRET: SECRET, PAGINATION_CURSOR_PARAM: "after", PAGINATION_COUNT_PARAM: "total", DOMAIN: domain() })).toEqual([]);
    expect(problems({ PAGINATION_CURSOR_SECRET: [SECRET, `${SECRET}, older`], DOMAIN: domain() })).toEqual([]);
  });

  it("refuse an unknown strategy, a short or empty secret and an empty parameter name", () => {
    expect(problems({ PAGINATION_COUNT: "planned" as never })).toEqual([expect.stringMatching(/PAGINATION_COUNT' must be one of exact, estimated, none/)]);
    expect(problems({ DOMAIN: domain({ pagination_count: "roughly" }) })).toEqual([expect.stringMatching(/people.*pagination_count/)]);
    for (const secret of ["short", [], [SECRET, "short"], 42]) {
      expect(problems({ PAGINATION_CURSOR_SECRET: secret as never }), JSON.stringify(secret)).toEqual([expect.stringMatching(/PAGINATION_CURSOR_SECRET' must be null, or a secret \(or a list of them\) of 16 characters or more/)]);
    }
    expect(problems({ PAGINATION_CURSOR_PARAM: "" })).toHaveLength(1);
  });

  it("refuse OPTIMIZE_PAGINATION_FOR_SPEED with a strategy that counts", () => {
    expect(problems({ OPTIMIZE_PAGINATION_FOR_SPEED: true, PAGINATION_COUNT: "exact", DOMAIN: domain() })).toEqual([expect.stringMatching(/Resource 'people': optimize_pagination_for_speed contradicts pagination_count 'exact'/)]);
    expect(problems({ DOMAIN: domain({ optimize_pagination_for_speed: true, pagination_count: "estimated" }) })).toHaveLength(1);
    expect(problems({ OPTIMIZE_PAGINATION_FOR_SPEED: true, PAGINATION_COUNT: "none", DOMAIN: domain() })).toEqual([]);
    expect(problems({ OPTIMIZE_PAGINATION_FOR_SPEED: true, DOMAIN: domain({ pagination_count: "exact", optimize_pagination_for_speed: false }) })).toEqual([]);
  });

  it("want a secret for cursors on a resource whose fields have read rules", () => {
    const ruled = (extra: Settings): Settings => ({
      PAGINATION_CURSOR: true,
      ...extra,
      DOMAIN: { staff: { schema: { name: { type: "string" }, pay: { type: "dict", schema: { salary: { type: "integer", allowed_read_roles: ["hr"] } } } } } },
    });
    const mine = (list: string[]) => list.filter((problem) => problem.includes("cursors need"));
    expect(mine(problems(ruled({})))).toEqual([expect.stringMatching(/Resource 'staff': has field read rules: cursors need PAGINATION_CURSOR_SECRET/)]);
    expect(mine(problems(ruled({ PAGINATION_CURSOR_SECRET: SECRET })))).toEqual([]);
    expect(mine(problems(ruled({ PAGINATION_CURSOR: false })))).toEqual([]);
    // A field_access hook hides fields too, by the user or the document.
    const hooked: Settings = { PAGINATION_CURSOR: true, DOMAIN: { staff: { schema: { salary: { type: "integer", field_access: () => true } } } } };
    expect(mine(problems(hooked))).toHaveLength(1);
  });
});

// The write check update operators and writes by filter call (docs/contracts.md §4): the dotted
// paths an operator changes, checked as a body's fields are, under the mask of the caller's
// roles and the stored document; tested at the seam against the field-rule scenario's settings
// (test/http/update-operators.test.ts and test/auth/writes-by-filter.test.ts send them over HTTP).
import { describe, expect, it } from "vitest";
import { fieldMask } from "../../src/auth/field-masks.ts";
import { checkWritable, checkWritablePaths } from "../../src/auth/field-writes.ts";
import type { Doc } from "../../src/drivers/types.ts";
import { HttpError } from "../../src/errors.ts";
import { CallScope } from "../../src/scope.ts";
import { normalizeSettings } from "../../src/settings/normalize.ts";
import settings from "../http/field-rules/settings.ts";

const employees = normalizeSettings(settings).DOMAIN.employees!;

function caller(...roles: string[]): CallScope {
  const scope = new CallScope({ method: "PATCH", origin: "", path: "/employees", args: new URLSearchParams(), clientIp: null });
  scope.endpoint = { kind: "item", resource: employees };
  scope.setRequestRoles(roles);
  return scope;
}

const writablePaths = (scope: CallScope, paths: string[], stored?: Doc) => checkWritablePaths(fieldMask(scope, employees, "write", stored), paths);

function refusal(run: () => void): string | null {
  try {
    run();
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(403);
    return (error as HttpError).message;
  }
}

describe("checkWritablePaths: an operator's paths", () => {
  it("refuses a path the caller may not write, one inside it, and one above it", () => {
    const staff = caller("staff");
    expect(refusal(() => writablePaths(staff, ["name", "salary"]))).toBe("You don't have the permission to write the field 'salary'.");
    expect(refusal(() => writablePaths(staff, ["profile.ssn"]))).toContain("'profile.ssn'");
    expect(refusal(() => writablePaths(staff, ["badges.0.cost"]))).toContain("'badges.0.cost'");
    // $set of the whole dict or list would replace what the caller may not write.
    expect(refusal(() => writablePaths(staff, ["profile"]))).toContain("'profile'");
    expect(refusal(() => writablePaths(staff, ["badges"]))).toContain("'badges'");
  });

  it("lets through what the caller may write, and everything for a role that may write it all", () => {
    expect(refusal(() => writablePaths(caller("staff"), ["name", "profile.city", "badges.0.label", "pin"]))).toBeNull();
    expect(refusal(() => writablePaths(caller("hr"), ["salary", "profile", "badges.0.cost", "review"]))).toBeNull();
  });

  it("asks field_access with the stored document", () => {
    // The hook lets employees read, never write, their review.
    expect(refusal(() => writablePaths(caller("staff"), ["review"], { login: "sam" }))).toContain("'review'");
  });
});

describe("checkWritable: a body's fields", () => {
  it("refuses a dict replaced by a value that would erase a stored field the caller may not write", () => {
    const stored = { profile: { city: "Oslo", ssn: "1" }, badges: [{ label: "a", cost: 1 }] };
    expect(refusal(() => checkWritable(caller("staff"), employees, { profile: null }, stored))).toContain("'profile.ssn'");
    expect(refusal(() => checkWritable(caller("staff"), employees, { badges: [{ label: "b" }] }, stored))).toContain("'badges.cost'");
    expect(refusal(() => checkWritable(caller("staff"), employees, { profile: { city: "Rome" } }, stored))).toBeNull();
    expect(refusal(() => checkWritable(caller("staff"), employees, { badges: [{ label: "b" }] }, { badges: [{ label: "a" }] }))).toBeNull();
  });
});

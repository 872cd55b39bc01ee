import { describe, expect, it } from "vitest";
import { resolveProjection } from "../../src/query/projection.ts";
import type { Config } from "../../src/settings/normalize.ts";
import { config, expect400, resource } from "./fixture.ts";

const META = { _id: 1, _updated: 1, _created: 1, _etag: 1 } as const;

function project(raw: string | null, name = "people", cfg: Config = config()) {
  return resolveProjection(raw, resource(cfg, name), cfg);
}

describe("resolveProjection: defaults", () => {
  it("serves the schema fields plus the meta fields", () => {
    expect(project(null)).toEqual({ firstname: 1, lastname: 1, role: 1, location: 1, born: 1, ...META });
  });

  it("adds version and deleted fields where enabled (notes)", () => {
    expect(project(null, "notes")).toEqual({ title: 1, body: 1, ...META, _version: 1, _latest_version: 1, _id_document: 1, _deleted: 1 });
  });

  it("hides datasource exclusions by default", () => {
    const cfg = config((s) => (s.DOMAIN!.images!.datasource = { projection: { pic: 0 } }));
    expect(project(null, "images", cfg)).toEqual({ name: 1, ...META });
  });

  it("serves documents as stored with allow_unknown and no datasource projection", () => {
    const cfg = config((s) => (s.DOMAIN!.people!.allow_unknown = true));
    expect(project(null, "people", cfg)).toBeNull();
  });
});

describe("resolveProjection: the client's projection", () => {
  it("includes the asked fields plus the meta fields (exchange 7)", () => {
    expect(project('{"lastname":1,"role":1}')).toEqual({ lastname: 1, role: 1, ...META });
  });

  it("excludes the refused fields", () => {
    expect(project('{"born": 0, "role": false}')).toEqual({ firstname: 1, lastname: 1, location: 1, ...META });
  });

  it("keeps meta fields whatever the client says, and `_id: 0` is not a mix", () => {
    expect(project('{"lastname": 1, "_id": 0}')).toEqual({ lastname: 1, ...META });
    expect(project('{"_etag": 0}')).toEqual(project(null));
    expect(project('{"_id": 1}')).toEqual(META);
  });

  it("lets the client ask for a field the datasource hides", () => {
    const cfg = config((s) => (s.DOMAIN!.images!.datasource = { projection: { pic: 0 } }));
    expect(project('{"pic": 1}', "images", cfg)).toEqual({ pic: 1, ...META });
  });

  it("never serves fields outside the resource's projection", () => {
    expect(project('{"secret": 1, "lastname": 1}')).toEqual({ lastname: 1, ...META });
  });

  it("accepts dotted sub-fields of served fields", () => {
    expect(project('{"location.city": 1}')).toEqual({ "location.city": 1, ...META });
  });

  it("keeps the auth_field", () => {
    const cfg = config((s) => (s.DOMAIN!.people!.auth_field = "owner"));
    expect(project('{"lastname": 1}', "people", cfg)).toEqual({ lastname: 1, owner: 1, ...META });
  });

  it("passes client projections through on a resource without a default one", () => {
    const cfg = config((s) => (s.DOMAIN!.people!.allow_unknown = true));
    expect(project('{"anything": 1}', "people", cfg)).toEqual({ anything: 1, ...META });
    expect(project('{"anything": 0}', "people", cfg)).toEqual({ anything: 0 });
  });

  it.each([
    ['{"lastname": 1, "born": 0}', "inclusion mixed with exclusion"],
    ['{"lastname": 2}', "a value other than 0/1"],
    ['{"lastname": {"$slice": 1}}', "an operator"],
    ["lastname", "no JSON"],
    ["[1]", "a list"],
    ["{'lastname': 1}", "single quotes"],
    ['{"__proto__": 1}', "a prototype key"],
    ['{"location.constructor": 1}', "a prototype segment"],
  ])("refuses %s (%s)", (raw) => {
    expect400(() => project(raw));
  });
});

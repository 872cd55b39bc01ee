// Start-up checks across settings (docs/decisions.md §1): names that must differ because they
// share one place — a URL, an object of a response or a stored document, a query string — where
// the second would shadow the first at request time without a word; and references from one
// resource to another's fields.
import { isObject } from "./checks.ts";
import { didYouMean } from "./suggest.ts";
import { resourceUrl } from "./urls.ts";

type Globals = Record<string, unknown>;

/** Routed resources sharing a url: the router would send every request to the first. */
export function urlClashes(domain: Record<string, unknown>): string[] {
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const [name, def] of Object.entries(domain)) {
    // Urls are compared as written: sub-resource urls that differ only by a regex are two routes.
    if (!isObject(def) || def.internal_resource === true || (def.url !== undefined && typeof def.url !== "string")) continue;
    const url = resourceUrl(name, def.url as string | undefined);
    const first = owners.get(url);
    if (first === undefined) owners.set(url, name);
    else problems.push(`Resources '${first}' and '${name}' have the same url '${url}': every request would go to '${first}'`);
  }
  return problems;
}

/** A setting's name as the message shows it, and its value; `own`: the resource's key. */
type Named = { setting: string; value: unknown; own: boolean };

/**
 * Names that one object holds side by side, where two equal ones would overwrite each other.
 * They form groups rather than one list because names never side by side may be equal: META is
 * in no answer that has ERROR, nor ITEMS in an item. Conditional names join only where in use.
 */
function sideBySide(def: Record<string, unknown>, globals: Globals): Array<{ names: Named[]; where: string }> {
  const pick = (key: string): Named => {
    const own = def[key.toLowerCase()];
    return own !== undefined ? { setting: key.toLowerCase(), value: own, own: true } : { setting: key, value: globals[key], own: false };
  };
  const global = (...keys: string[]) => keys.map((key) => ({ setting: key, value: globals[key], own: false }));
  const on = (key: string) => pick(key).value === true;
  const id = def.id_field !== undefined ? { setting: "id_field", value: def.id_field, own: true } : { setting: "ID_FIELD", value: globals.ID_FIELD, own: false };
  const links = on("HATEOAS") ? global("LINKS") : [];
  return [
    {
      // A stored document, an item as served (with its links) and as a write answers it (with its status).
      names: [id, ...global("DATE_CREATED", "LAST_UPDATED", "ETAG", "STATUS"), ...links, ...(on("SOFT_DELETE") ? global("DELETED") : []), ...(on("VERSIONING") ? global("VERSION", "LATEST_VERSION") : [])],
      where: "one would overwrite the other in stored documents and in responses",
    },
    { names: [...global("ITEMS", "META"), ...links], where: "one would overwrite the other in collection responses" },
    // An error answer, and a bulk write's answer: its items each with a status and issues.
    { names: global("STATUS", "ERROR", "ISSUES", "ITEMS"), where: "one would overwrite the other in error and bulk write responses" },
    {
      names: [
        ...global("QUERY_WHERE", "QUERY_SORT", "QUERY_PAGE", "QUERY_MAX_RESULTS", "QUERY_EMBEDDED", "QUERY_PROJECTION", "QUERY_AGGREGATION", "JSONP_ARGUMENT"),
        ...(on("VERSIONING") ? global("VERSION_PARAM") : []),
        ...(on("SOFT_DELETE") ? global("SHOW_DELETED_PARAM") : []),
        ...(on("PAGINATION_CURSOR") ? global("PAGINATION_CURSOR_PARAM") : []),
        ...(pick("PAGINATION_COUNT").value != null ? global("PAGINATION_COUNT_PARAM") : []),
      ],
      where: "a request could not give them different values",
    },
  ];
}

/** Settings of `resource` naming two things alike that must differ; each problem once. */
export function nameClashes(domain: Record<string, unknown>, globals: Globals): string[] {
  const problems = new Set<string>();
  for (const [resource, def] of Object.entries(domain)) {
    if (!isObject(def)) continue;
    for (const { names, where } of sideBySide(def, globals)) {
      const seen = new Map<string, Named>();
      for (const named of names) {
        if (typeof named.value !== "string") continue;
        const first = seen.get(named.value);
        if (!first) {
          seen.set(named.value, named);
          continue;
        }
        const scope = first.own || named.own ? `Resource '${resource}': settings` : "Settings";
        problems.add(`${scope} '${first.setting}' and '${named.setting}' are both '${named.value}': ${where}`);
      }
    }
  }
  return [...problems];
}

/**
 * Why a data_relation's `field` names no field of the resource it refers to, or null. A field
 * the referenced documents may hold without the schema saying so is fine: any, where unknown
 * fields are allowed; else its id, its item lookup field and the meta fields Eve sets.
 */
export function relationFieldProblem(field: string, target: string, def: unknown, globals: Globals): string | null {
  if (!isObject(def)) return null;
  const pick = (key: string) => (def[key] !== undefined ? def[key] : globals[key.toUpperCase()]);
  if (pick("allow_unknown") === true) return null;
  const schema = isObject(def.schema) ? Object.keys(def.schema) : [];
  const meta = [pick("id_field"), pick("item_lookup_field"), ...["DATE_CREATED", "LAST_UPDATED", "ETAG", "VERSION", "DELETED"].map((key) => globals[key])];
  const top = field.split(".")[0]!;
  if (schema.includes(top) || meta.includes(top)) return null;
  return `'field' '${field}' is not a field of resource '${target}'${didYouMean(top, schema)}`;
}

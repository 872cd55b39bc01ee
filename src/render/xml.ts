// Eve's XMLRenderer (eve/render.py), reproduced byte for byte: a `<resource>` root carrying the
// self link as attributes (with Eve's doubled spaces), other links as `<link/>` elements sorted
// by rel, `_meta` children sorted, `_items` as nested `<resource>` elements, every other key
// sorted, lists as repeated elements, and leaf values as Python's str() escaped by markupsafe.
//
// Written out rather than built with fast-xml-parser's XMLBuilder: its output cannot carry
// Eve's attribute spacing, unescaped titles, `&#34;`/`&#39;` entities or the placement of
// nested links after a sub-document's fields, and it treats keys such as `#text` or `@_x`
// (legitimate document field names) as markup instructions.
import type { Config } from "../settings/normalize.ts";
import { toPlain } from "./plain.ts";
import { floatRepr, isPythonInt } from "./pyjson.ts";

type Dict = Record<string, unknown>;

function isDict(value: unknown): value is Dict {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** markupsafe.escape */
function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" })[c]!);
}

/** Python's repr() of a str. */
function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const body = text.replace(/[\\\n\r\t\x00-\x1f\x7f]/g, (c) => {
    switch (c) {
      case "\\": return "\\\\";
      case "\n": return "\\n";
      case "\r": return "\\r";
      case "\t": return "\\t";
      default: return "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0");
    }
  });
  return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
}

/** What Python's str() prints for a plain value, the way Eve's XML leaves show it. */
function pyStr(value: unknown, inContainer = false): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") return inContainer ? stringRepr(value) : value;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return isPythonInt(value) ? String(value) : floatRepr(value);
  if (Array.isArray(value)) return "[" + value.map((v) => pyStr(v, true)).join(", ") + "]";
  if (isDict(value)) return "{" + Object.entries(value).map(([k, v]) => `${stringRepr(k)}: ${pyStr(v, true)}`).join(", ") + "}";
  return String(value);
}

/** Python's sorted() on str keys: by code point, not by UTF-16 unit. */
function sortedKeys(dict: Dict): string[] {
  return Object.keys(dict).sort((a, b) => {
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const diff = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
      if (diff) return diff;
    }
    return x.length - y.length;
  });
}

class XmlWriter {
  constructor(private readonly config: Config) {}

  render(payload: Dict | unknown[]): string {
    const data: Dict = Array.isArray(payload) ? { [this.config.ITEMS]: payload } : { ...payload };
    if (Object.keys(data).length === 0) return "";
    return this.rootOpen(data) + this.links(data) + this.meta(data) + this.items(data) + "</resource>";
  }

  /** Takes the self link out of `data` for the root attributes. */
  private rootOpen(data: Dict): string {
    const links = data[this.config.LINKS];
    let href = "";
    let title = "";
    if (isDict(links) && "self" in links) {
      const { self, ...rest } = links;
      data[this.config.LINKS] = rest;
      const link = (isDict(self) ? self : {}) as Dict;
      href = ` href="${escape(pyStr(link.href))}" `;
      if ("title" in link) title = ` title="${pyStr(link.title)}" `;
    }
    return `<resource${href}${title}>`;
  }

  /** Takes the links out of `data`, leaving `related` for the field attributes. */
  private links(data: Dict): string {
    const key = this.config.LINKS;
    const links = isDict(data[key]) ? (data[key] as Dict) : {};
    delete data[key];
    let xml = "";
    for (const rel of sortedKeys(links)) {
      const link = links[rel];
      if (rel === "related") {
        data[key] = { related: link };
      } else if (Array.isArray(link)) {
        for (const item of link as Dict[]) {
          xml += `<link rel="${rel}" href="${escape(pyStr(item.href))}" title="${escape(pyStr(item.title))}" />`;
        }
      } else {
        const single = (isDict(link) ? link : {}) as Dict;
        xml += `<link rel="${rel}" href="${escape(pyStr(single.href))}" title="${pyStr(single.title)}" />`;
      }
    }
    return xml;
  }

  private meta(data: Dict): string {
    const meta = data[this.config.META];
    if (!isDict(meta) || Object.keys(meta).length === 0) return "";
    const fields = sortedKeys(meta).map((name) => {
      const value = meta[name];
      // Python's "%d" truncates floats and prints booleans as 1/0.
      const number = typeof value === "boolean" ? Number(value) : typeof value === "number" ? Math.trunc(value) : value;
      return `<${name}>${pyStr(number)}</${name}>`;
    });
    return `<${this.config.META}>${fields.join("")}</${this.config.META}>`;
  }

  private items(data: Dict): string {
    const items = data[this.config.ITEMS];
    if (Array.isArray(items) && items.every(isDict)) return items.map((item) => this.item({ ...item })).join("");
    return this.dict(data);
  }

  private item(item: Dict): string {
    return this.rootOpen(item) + this.links(item) + this.dict(item) + "</resource>";
  }

  private dict(data: Dict): string {
    const linksKey = this.config.LINKS;
    const remaining = data[linksKey];
    const related = isDict(remaining) && isDict(remaining.related) ? remaining.related : {};
    let xml = "";
    for (const key of sortedKeys(data)) {
      if (key === linksKey) continue;
      const value = data[key];
      const values = Array.isArray(value) ? value : [value];
      values.forEach((entry, index) => {
        if (isDict(entry)) {
          const nested = { ...entry };
          const nestedLinks = this.links(nested);
          xml += this.fieldOpen(key, index, related) + this.dict(nested) + nestedLinks + `</${key}>`;
        } else {
          xml += this.fieldOpen(key, index, related) + escape(pyStr(entry)) + `</${key}>`;
        }
      });
    }
    return xml;
  }

  /** A field that is a data relation carries its HATEOAS link as attributes. */
  private fieldOpen(field: string, index: number, related: Dict): string {
    const relation = related[field];
    const link = Array.isArray(relation) ? relation[index] : relation;
    if (!isDict(link)) return `<${field}>`;
    return `<${field} href="${escape(pyStr(link.href))}" title="${pyStr(link.title)}">`;
  }
}

/**
 * Eve's XML rendering of a response payload (a list is rendered as `_items`). Canonical values
 * (Date, ObjectId, Decimal128, bytes) are shown as in JSON.
 */
export function renderXml(payload: Record<string, unknown> | unknown[], config: Config): string {
  return new XmlWriter(config).render(toPlain(payload, config.DATE_FORMAT) as Dict | unknown[]);
}

// Whether a hand-written server gives the answers everest gives: the same status, the same
// response headers (those the servers set themselves), and bodies of the same shape (the same
// keys in the same order at every level, values of the same JSON types). Values may differ:
// each server makes its own ids, ETags and dates, and the bench sends each new lastnames.
import type { Answer } from "./load.ts";

/** Headers the HTTP servers themselves add or may leave out, not the API. */
const TRANSPORT = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

function headerNames(answer: Answer): string {
  return Object.keys(answer.headers)
    .filter((name) => !TRANSPORT.has(name))
    .sort()
    .join(", ");
}

/** A JSON value's shape: keys in order, types, and an array's first item. */
export function shape(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `[${value.length ? shape(value[0]) : ""}]`;
  if (typeof value === "object") return `{${Object.entries(value as Record<string, unknown>).map(([key, v]) => `${key}: ${shape(v)}`).join(", ")}}`;
  return typeof value;
}

function bodyShape(answer: Answer): string {
  try {
    return shape(JSON.parse(answer.body));
  } catch {
    return `not JSON: ${answer.body.slice(0, 60)}`;
  }
}

/** How `answer` differs from everest's (empty when it gives the same answer). */
export function differences(everest: Answer, answer: Answer): string[] {
  const found: string[] = [];
  if (answer.status !== everest.status) found.push(`status ${answer.status}, everest ${everest.status}`);
  const [names, expected] = [headerNames(answer), headerNames(everest)];
  if (names !== expected) found.push(`headers ${names}; everest ${expected}`);
  const [body, reference] = [bodyShape(answer), bodyShape(everest)];
  if (body !== reference) found.push(`body ${body}; everest ${reference}`);
  return found;
}

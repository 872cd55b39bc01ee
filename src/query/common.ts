// JSON in query parameters.

/** JSON.parse without throwing: `undefined` when the text is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// JSONP (docs/decisions.md §5): Eve echoes any callback text into the response, which lets a caller
// inject script; everest only wraps for a plain identifier path and refuses anything else.

const CALLBACK = /^[A-Za-z_$][\w$.]*$/;

export function isValidJsonpCallback(name: string): boolean {
  return CALLBACK.test(name);
}

/** `callback(json)`, as Eve writes it. */
export function wrapJsonp(callback: string, json: string): string {
  return `${callback}(${json})`;
}

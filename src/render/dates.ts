// Python's strftime/strptime for the directives DATE_FORMAT users write, so that a settings.py
// format string ports unchanged. Dates are always UTC: Eve's Mongo client is tz-aware UTC.

/** Eve's default DATE_FORMAT (RFC 1123). */
export const RFC1123_FORMAT = "%a, %d %b %Y %H:%M:%S GMT";

const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * A date's text, remembered by its time value: the same instants are rendered again and again
 * (a write's _created and _updated, every write of one second, a page's documents), and a lookup
 * costs a twentieth of toUTCString or toISOString on Node (~12 vs 250-330 ns).
 */
export function cachedByTime<T>(render: (date: Date) => T): (date: Date) => T {
  const cache = new Map<number, T>();
  return (date) => {
    const time = date.getTime();
    let text = cache.get(time);
    if (text === undefined) {
      // Bounded by dropping everything: a few hundred distinct instants are what a page holds.
      if (cache.size >= 1024) cache.clear();
      cache.set(time, (text = render(date)));
    }
    return text;
  };
}

/** RFC 1123 as toUTCString writes it, for four-digit years. */
export const utcString = cachedByTime((date) => date.toUTCString());

/** Whether toUTCString writes a date as strftime's RFC 1123 would: four-digit years only. */
function hasFourDigitYear(date: Date): boolean {
  const year = date.getUTCFullYear();
  return year >= 1000 && year <= 9999;
}

function dayOfYear(date: Date): number {
  return Math.floor((date.getTime() - Date.UTC(date.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

/** `datetime.strftime` in UTC. Unknown directives are copied as written. */
export function formatDate(date: Date, format: string): string {
  // The default format is toUTCString's, for four-digit years: every date of every body goes here.
  if (format === RFC1123_FORMAT && hasFourDigitYear(date)) return utcString(date);
  return format.replace(/%(.)/gs, (whole, directive: string) => {
    switch (directive) {
      case "a": return DAYS[date.getUTCDay()]!.slice(0, 3);
      case "A": return DAYS[date.getUTCDay()]!;
      case "b": return MONTHS[date.getUTCMonth()]!.slice(0, 3);
      case "B": return MONTHS[date.getUTCMonth()]!;
      case "d": return pad(date.getUTCDate());
      case "m": return pad(date.getUTCMonth() + 1);
      case "Y": return String(date.getUTCFullYear());
      case "y": return pad(date.getUTCFullYear() % 100);
      case "H": return pad(date.getUTCHours());
      case "I": return pad(date.getUTCHours() % 12 || 12);
      case "p": return date.getUTCHours() < 12 ? "AM" : "PM";
      case "M": return pad(date.getUTCMinutes());
      case "S": return pad(date.getUTCSeconds());
      case "f": return pad(date.getUTCMilliseconds() * 1000, 6);
      case "j": return pad(dayOfYear(date), 3);
      case "z": return "+0000";
      case "Z": return "UTC";
      case "%": return "%";
      default: return whole;
    }
  });
}

const names = (list: string[], length?: number) =>
  list.map((name) => (length ? name.slice(0, length) : name)).join("|");

// The patterns of CPython's _strptime, so that the same strings are accepted.
const DIRECTIVES: Record<string, string> = {
  a: `(?<a>${names(DAYS, 3)})`,
  A: `(?<A>${names(DAYS)})`,
  b: `(?<b>${names(MONTHS, 3)})`,
  B: `(?<B>${names(MONTHS)})`,
  d: "(?<d>3[01]|[12]\\d|0[1-9]|[1-9]| [1-9])",
  f: "(?<f>[0-9]{1,6})",
  H: "(?<H>2[0-3]|[0-1]\\d|\\d)",
  I: "(?<I>1[0-2]|0[1-9]|[1-9])",
  j: "(?<j>36[0-6]|3[0-5]\\d|[12]\\d\\d|0[1-9]\\d|00[1-9]|[1-9]\\d|0[1-9]|[1-9])",
  m: "(?<m>1[0-2]|0[1-9]|[1-9])",
  M: "(?<M>[0-5]\\d|\\d)",
  S: "(?<S>6[0-1]|[0-5]\\d|\\d)",
  p: "(?<p>am|pm)",
  y: "(?<y>\\d\\d)",
  Y: "(?<Y>\\d\\d\\d\\d)",
  z: "(?<z>[+-]\\d\\d:?[0-5]\\d(?::?[0-5]\\d(?:\\.\\d{1,6})?)?|z)",
  Z: "(?<Z>utc|gmt)",
};

const compiled = new Map<string, RegExp>();

/**
 * The matcher for a format. Throws on a format Python would refuse too (a bad or repeated
 * directive), which start-up validation reports.
 */
export function compileDateFormat(format: string): RegExp {
  let regex = compiled.get(format);
  if (regex) return regex;
  let source = "";
  for (let i = 0; i < format.length; i++) {
    const char = format[i]!;
    if (char === "%") {
      const directive = format[++i];
      if (directive === "%") source += "%";
      else if (directive !== undefined && DIRECTIVES[directive]) source += DIRECTIVES[directive];
      else throw new Error(`'${directive ?? ""}' is a bad directive in format '${format}'`);
    } else if (/\s/.test(char)) {
      while (i + 1 < format.length && /\s/.test(format[i + 1]!)) i++;
      source += "\\s+";
    } else {
      source += char.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
    }
  }
  regex = new RegExp(`^${source}$`, "i");
  compiled.set(format, regex);
  return regex;
}

const indexOfName = (list: string[], name: string, length?: number) =>
  list.findIndex((n) => (length ? n.slice(0, length) : n).toLowerCase() === name.toLowerCase());

/**
 * Three ASCII letters at `start` as one number, in lower case (strptime ignores case); -1 for
 * anything else. A name is then found without cutting it out of the text as a new string.
 */
function letters3(text: string, start: number): number {
  let key = 0;
  for (let i = start; i < start + 3; i++) {
    let code = text.charCodeAt(i);
    if (code >= 65 && code <= 90) code += 32;
    if (code < 97 || code > 122) return -1;
    key = (key << 8) | code;
  }
  return key;
}

const DAY_ABBREVIATIONS = new Set(DAYS.map((day) => letters3(day, 0)));
const MONTH_OF_ABBREVIATION = new Map(MONTHS.map((month, index) => [letters3(month, 0), index] as const));
const GMT = letters3("GMT", 0);

/** The number written by `length` ASCII digits at `start`; -1 if any is not a digit. */
function digitsAt(text: string, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * RFC 1123 in the shape every client and toUTCString write ("Thu, 27 Aug 1970 14:37:13 GMT":
 * single spaces, two-digit fields), read by position: the general path's named-group match and
 * name searches were an eighth of a POST of one document on Bun (bench/README.md, issue 14).
 * Undefined for text of any other shape or a field the general pattern would not accept, which
 * the general path then reads, so both agree on every input (test/render/dates.test.ts).
 */
function parseCanonicalRfc1123(text: string): Date | null | undefined {
  if (text.length !== 29 || text[3] !== "," || text[4] !== " " || text[7] !== " " || text[11] !== " " || text[16] !== " ") return undefined;
  if (text[19] !== ":" || text[22] !== ":" || text[25] !== " " || letters3(text, 26) !== GMT) return undefined;
  if (!DAY_ABBREVIATIONS.has(letters3(text, 0))) return undefined;
  const month = MONTH_OF_ABBREVIATION.get(letters3(text, 8));
  const day = digitsAt(text, 5, 2);
  const year = digitsAt(text, 12, 4);
  const hour = digitsAt(text, 17, 2);
  const minute = digitsAt(text, 20, 2);
  const second = digitsAt(text, 23, 2);
  if (month === undefined || day < 1 || day > 31 || year < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 61) return undefined;
  return calendarDate(year, month + 1, day, hour, minute, second, 0);
}

/** The UTC instant of calendar fields as strptime read them; null for a day the month lacks, a leap second or year 0. */
function calendarDate(year: number, month: number, day: number, hour: number, minute: number, second: number, millis: number): Date | null {
  if (second > 59 || year < 1) return null;
  // Fields in range (what a client sends): no Date getters to find out whether the date rolled
  // over, a tenth of reading a date on Deno. Date.UTC reads years 0-99 as 1900-1999.
  if (year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour <= 23 && minute <= 59) {
    return new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  }
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year);
  return date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day ? null : date;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** In the proleptic Gregorian calendar, as Date and Python's datetime count. */
function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** `datetime.strptime` in UTC; null where Python raises ValueError. */
export function parseDate(text: string, format: string): Date | null {
  if (format === RFC1123_FORMAT) {
    const canonical = parseCanonicalRfc1123(text);
    if (canonical !== undefined) return canonical;
  }
  const match = compileDateFormat(format).exec(text);
  if (!match) return null;
  const g = match.groups ?? {};
  const num = (key: string) => (g[key] !== undefined ? Number(g[key]) : undefined);

  let year = num("Y") ?? (g.y !== undefined ? (Number(g.y) <= 68 ? 2000 : 1900) + Number(g.y) : 1900);
  let month = num("m") ?? (g.b ? indexOfName(MONTHS, g.b, 3) + 1 : g.B ? indexOfName(MONTHS, g.B) + 1 : undefined);
  let day = num("d");
  let hour = num("H") ?? 0;
  if (g.I !== undefined) {
    hour = Number(g.I) % 12;
    if (g.p?.toLowerCase() === "pm") hour += 12;
  }
  const minute = num("M") ?? 0;
  const second = num("S") ?? 0;
  const millis = g.f !== undefined ? Math.floor(Number(g.f.padEnd(6, "0")) / 1000) : 0;

  if (g.j !== undefined && month === undefined && day === undefined) {
    // Python counts the day of year from January 1st, spilling into the next year past its end.
    const start = new Date(Date.UTC(2000, 0, 1));
    start.setUTCFullYear(year);
    const date = new Date(start.getTime() + (Number(g.j) - 1) * 86_400_000);
    year = date.getUTCFullYear();
    month = date.getUTCMonth() + 1;
    day = date.getUTCDate();
  }
  month ??= 1;
  day ??= 1;

  const date = calendarDate(year, month, day, hour, minute, second, millis);
  if (!date) return null;

  if (g.z !== undefined && g.z.toLowerCase() !== "z") {
    const digits = g.z.replace(/[:.]/g, "");
    const offset = (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5))) * 60_000 + Number(digits.slice(5, 7) || 0) * 1000;
    date.setTime(date.getTime() - (g.z[0] === "-" ? -offset : offset));
  }
  return Number.isNaN(date.getTime()) ? null : date;
}

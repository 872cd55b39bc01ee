import { describe, expect, it } from "vitest";
import { compileDateFormat, formatDate, parseDate, RFC1123_FORMAT } from "../../src/render/dates.ts";

const BORN = new Date(Date.UTC(1970, 7, 27, 14, 37, 13));

describe("formatDate", () => {
  it("writes RFC 1123 as Eve does (exchange 2)", () => {
    expect(formatDate(BORN, RFC1123_FORMAT)).toBe("Thu, 27 Aug 1970 14:37:13 GMT");
  });

  it("knows Python's common directives", () => {
    const date = new Date(Date.UTC(2009, 1, 3, 15, 4, 5, 67));
    expect(formatDate(date, "%A %B %d %m %Y %y %H %I %p %M %S %f %j %z %Z %% %a %b")).toBe(
      "Tuesday February 03 02 2009 09 15 03 PM 04 05 067000 034 +0000 UTC % Tue Feb",
    );
    expect(formatDate(new Date(Date.UTC(2009, 0, 1, 0, 0)), "%I %p")).toBe("12 AM");
  });

  it("copies unknown directives as written", () => {
    expect(formatDate(BORN, "%Q-%Y")).toBe("%Q-1970");
  });
});

describe("parseDate", () => {
  it("reads RFC 1123 (exchange 2)", () => {
    expect(parseDate("Thu, 27 Aug 1970 14:37:13 GMT", RFC1123_FORMAT)).toEqual(BORN);
  });

  it("matches names and literals case-insensitively and any run of whitespace, as strptime", () => {
    expect(parseDate("thu,  27 AUG 1970 14:37:13 gmt", RFC1123_FORMAT)).toEqual(BORN);
  });

  it("ignores the weekday, like Python", () => {
    expect(parseDate("Mon, 27 Aug 1970 14:37:13 GMT", RFC1123_FORMAT)).toEqual(BORN);
  });

  it("reads ISO-like formats with fractions and offsets", () => {
    expect(parseDate("2020-01-02T03:04:05.123456+0130", "%Y-%m-%dT%H:%M:%S.%f%z")).toEqual(new Date(Date.UTC(2020, 0, 2, 1, 34, 5, 123)));
    expect(parseDate("2020-01-02T03:04:05Z", "%Y-%m-%dT%H:%M:%S%z")).toEqual(new Date(Date.UTC(2020, 0, 2, 3, 4, 5)));
    expect(parseDate("2020-01-02", "%Y-%m-%d")).toEqual(new Date(Date.UTC(2020, 0, 2)));
  });

  it("reads %y with Python's pivot, %j, %I with %p, and full names", () => {
    expect(parseDate("68", "%y")!.getUTCFullYear()).toBe(2068);
    expect(parseDate("69", "%y")!.getUTCFullYear()).toBe(1969);
    expect(parseDate("2021 032", "%Y %j")).toEqual(new Date(Date.UTC(2021, 1, 1)));
    expect(parseDate("12:30 AM", "%I:%M %p")).toEqual(new Date(Date.UTC(1900, 0, 1, 0, 30)));
    expect(parseDate("Tuesday 3 February 2009", "%A %d %B %Y")).toEqual(new Date(Date.UTC(2009, 1, 3)));
  });

  it("knows the calendar: leap days, short months, years before 100", () => {
    expect(parseDate("Thu, 29 Feb 2024 00:00:00 GMT", RFC1123_FORMAT)).toEqual(new Date(Date.UTC(2024, 1, 29)));
    expect(parseDate("Tue, 29 Feb 2000 23:59:59 GMT", RFC1123_FORMAT)).toEqual(new Date(Date.UTC(2000, 1, 29, 23, 59, 59)));
    expect(parseDate("Wed, 01 Jan 0099 12:00:00 GMT", RFC1123_FORMAT)!.toISOString()).toBe("0099-01-01T12:00:00.000Z");
    expect(parseDate("1900-02-28", "%Y-%m-%d")).toEqual(new Date(Date.UTC(1900, 1, 28)));
    for (const text of ["Wed, 29 Feb 2023 00:00:00 GMT", "Thu, 29 Feb 1900 00:00:00 GMT", "Fri, 31 Apr 2021 00:00:00 GMT", "Sat, 00 May 2021 00:00:00 GMT"]) {
      expect(parseDate(text, RFC1123_FORMAT), text).toBeNull();
    }
  });

  it("gives null where Python raises", () => {
    for (const [text, format] of [
      ["yesterday", RFC1123_FORMAT],
      ["Thu, 27 Aug 1970 14:37:13 GMT trailing", RFC1123_FORMAT],
      ["2021-02-29", "%Y-%m-%d"],
      ["2021-13-01", "%Y-%m-%d"],
      ["0000-01-01", "%Y-%m-%d"],
      ["10:00:61", "%H:%M:%S"],
    ]) {
      expect(parseDate(text!, format!), text).toBeNull();
    }
  });
});

describe("compileDateFormat", () => {
  it("refuses formats Python refuses", () => {
    expect(() => compileDateFormat("%Q")).toThrow(/bad directive/);
    expect(() => compileDateFormat("%Y-%Y")).toThrow();
    expect(() => compileDateFormat("trailing %")).toThrow(/bad directive/);
  });
});

describe("parseDate of RFC 1123 in its usual shape", () => {
  // The same text read by the position-based path and by the general pattern (a format string
  // equal to RFC1123_FORMAT but not the same constant would not do: the fast path keys on the
  // value). Random fields, some out of range, random case, and a few malformed shapes.
  const general = (text: string) => {
    const spaced = text.replace(/ /g, "  "); // two spaces: the same for strptime, not the usual shape
    return parseDate(spaced, RFC1123_FORMAT);
  };

  it("agrees with the general reading on valid, invalid and odd input", () => {
    const days = ["Sun", "mon", "TUE", "Wed", "thu", "Fri", "Sat", "Xyz"];
    const months = ["Jan", "feb", "MAR", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "dec", "Foo"];
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const two = (n: number) => String(n).padStart(2, "0");
    for (let i = 0; i < 5000; i++) {
      const text = `${days[random(days.length)]}, ${two(random(34))} ${months[random(months.length)]} ${String(random(10000)).padStart(4, "0")} ${two(random(26))}:${two(random(62))}:${two(random(63))} ${random(5) === 0 ? "gmt" : "GMT"}`;
      expect(parseDate(text, RFC1123_FORMAT), text).toEqual(general(text));
    }
    for (const text of ["Thu, 27 Aug 1970 14:37:13 UTC", "Thu; 27 Aug 1970 14:37:13 GMT", "Thu, 27 Aug 197a 14:37:13 GMT", "Thu, 2 Aug 1970 14:37:13 GMT", "Thu, 29 Feb 2000 23:59:59 GMT", "T@u, 27 Aug 1970 14:37:13 GMT", "Thu, 27 Au\u00e7 1970 14:37:13 GMT", "Thu, 27 Aug 1970 14:37:13 G[T"]) {
      expect(parseDate(text, RFC1123_FORMAT), text).toEqual(general(text));
    }
    expect(parseDate("Tue, 29 Feb 2000 23:59:59 GMT", RFC1123_FORMAT)).toEqual(new Date(Date.UTC(2000, 1, 29, 23, 59, 59)));
    expect(parseDate("Mon, 29 Feb 2001 10:00:00 GMT", RFC1123_FORMAT)).toBeNull();
    expect(parseDate("Mon, 01 Jan 0000 10:00:00 GMT", RFC1123_FORMAT)).toBeNull();
    expect(parseDate("Mon, 01 Jan 2001 10:00:60 GMT", RFC1123_FORMAT)).toBeNull();
  });
});

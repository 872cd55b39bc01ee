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

// The example API (examples/settings.json) for mounting under /api. The framework hands everest
// the request unchanged and URL_PREFIX names the mount path, so everest routes the same URLs the
// clients use and its Location headers and links point where they can follow them. (Stripping
// the prefix instead would make everest answer with URLs that lack it.)
import type { Settings } from "everest-api";
import example from "../settings.json" with { type: "json" };

export const settings: Settings = { ...(example as Settings), URL_PREFIX: "api" };

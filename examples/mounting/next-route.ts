// everest as a Next.js App Router route handler: save as app/api/[[...path]]/route.ts, whose
// optional catch-all segment brings /api and everything under it here. Next.js calls each
// method's export with the request and { params }; everest wants the request alone, since its
// second parameter is a runtime's env.
import { createHandler } from "everest-api";
import { settings } from "./settings.ts";

const everest = createHandler(settings);

function handle(request: Request): Promise<Response> {
  return everest(request);
}

// OPTIONS too: otherwise Next.js answers it itself, and everest's CORS preflight is lost.
export { handle as GET, handle as HEAD, handle as POST, handle as PUT, handle as PATCH, handle as DELETE, handle as OPTIONS };

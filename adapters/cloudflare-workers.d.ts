// The one export of workerd's built-in module that adapters/workerd.ts uses (wrangler's own
// types are not a dependency of everest).
declare module "cloudflare:workers" {
  export const env: Record<string, unknown>;
}
